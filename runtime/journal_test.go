package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// journaled runs p with model and opts, recording to file (created, or
// resumed when it exists and resume is set).
func journaled(t *testing.T, p *plan.Plan, file string, resume bool, model agentrt.Model, opts agentrt.Options) *agentrt.Report {
	t.Helper()
	jn := &agentrt.Journal{}
	if resume {
		j, w, err := journal.Resume(file)
		if err != nil {
			t.Fatal(err)
		}
		jn.Recorded, jn.Writer = j, w
	} else {
		w, err := journal.Create(file, benchHeader)
		if err != nil {
			t.Fatal(err)
		}
		jn.Writer = w
	}
	defer jn.Writer.Close()
	opts.Model, opts.Journal, opts.OutputSuffix = model, jn, "0badcafe"
	r, err := agentrt.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func replay(t *testing.T, p *plan.Plan, file string, opts agentrt.Options) *agentrt.Report {
	t.Helper()
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	opts.Model, opts.Journal, opts.OutputSuffix = refusingModel{}, &agentrt.Journal{Recorded: j, Replay: true}, "0badcafe"
	r, err := agentrt.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// failing fails every call with err.
type failing struct{ err error }

func (f failing) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, f.err
}

// TestFailedEffectReplayed: a model call that failed is journaled; a
// replay ends the same way, and a resume makes the call again, the new
// entry superseding the failed one.
func TestFailedEffectReplayed(t *testing.T) {
	p := agent(t, nil)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	rec := journaled(t, p, file, false, failing{errors.New("openai: 400 Bad Request: no such model")}, agentrt.Options{})
	if rec.Outcome != agentrt.OutcomeError || !strings.Contains(rec.Error, "no such model") {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	rep := replay(t, p, file, agentrt.Options{})
	if rep.Divergence != nil || rep.Outcome != rec.Outcome || rep.Bound != rec.Bound || !strings.Contains(rep.Error, "no such model") {
		t.Fatalf("replay: %s %s %s, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
	}
	res := journaled(t, p, file, true, &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}, agentrt.Options{})
	if res.Outcome != agentrt.OutcomeOK {
		t.Fatalf("resume: %s %s", res.Outcome, res.Error)
	}
	if rep := replay(t, p, file, agentrt.Options{}); rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"bug"}` {
		t.Fatalf("replay after the resume: %s %s %s", rep.Outcome, rep.Error, rep.Answer)
	}
}

// TestInterruptedToolNotJournaled: a tool call cut off by an interrupt is
// not an outcome: the journal does not hold it, and a resume calls the
// tool again.
func TestInterruptedToolNotJournaled(t *testing.T) {
	p := agent(t, withTool)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	tool := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		cancel()
		return agentrt.ToolResult{Content: "cut short", IsError: true}, nil
	}}
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: []turn{call(10, "search", `{"q":"x"}`)}},
		Tools: map[string]agentrt.Tool{"search": tool}, Journal: &agentrt.Journal{Writer: w}, OutputSuffix: "0badcafe"})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := r.Run(ctx, nil)
	w.Close()
	if !rep.Interrupted {
		t.Fatalf("not interrupted: %s %s", rep.Outcome, rep.Error)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 1 || j.Entries[0].Key.String() != "1.0" {
		t.Fatalf("journal holds %d entries; want only the model call", len(j.Entries))
	}
	again := &echoTool{name: "search"}
	res := journaled(t, p, file, true, &scripted{turns: []turn{answer(`{"label":"feature"}`, 10)}},
		agentrt.Options{Tools: map[string]agentrt.Tool{"search": again}})
	if res.Outcome != agentrt.OutcomeOK || again.calls != 1 {
		t.Fatalf("resume: %s %s, tool calls %d", res.Outcome, res.Error, again.calls)
	}
}

// TestDeadlineBetweenEffectsReplayed: a deadline that passes between
// effects is journaled, so a replay, which runs faster, ends there too.
func TestDeadlineBetweenEffectsReplayed(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { withTool(a); a.Budgets.Deadline = "50ms" })
	file := filepath.Join(t.TempDir(), "run.jsonl")
	slow := &echoTool{name: "search", fn: func(args json.RawMessage) (agentrt.ToolResult, error) {
		time.Sleep(80 * time.Millisecond) // ignores its context: the deadline passes after it returns
		return agentrt.ToolResult{Content: "done"}, nil
	}}
	rec := journaled(t, p, file, false, &scripted{turns: []turn{call(10, "search", `{"q":"x"}`)}},
		agentrt.Options{Tools: map[string]agentrt.Tool{"search": slow}})
	if rec.Bound != agentrt.BoundDeadline {
		t.Fatalf("record: bound %s (%s)", rec.Bound, rec.Error)
	}
	rep := replay(t, p, file, agentrt.Options{Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	if rep.Divergence != nil || rep.Bound != agentrt.BoundDeadline {
		t.Fatalf("replay: %s %s %s, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
	}
}

// TestCallerDeadline: a host's context whose deadline passed stops the run
// at the next round as the deadline, saying whose it was, and before any
// model call.
func TestCallerDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	m := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(agent(t, nil), agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Bound != agentrt.BoundDeadline || rep.Interrupted || rep.Error != "the caller's deadline passed before an answer" || len(m.reqs) != 0 {
		t.Errorf("bound %s, interrupted %v, error %q, model calls %d", rep.Bound, rep.Interrupted, rep.Error, len(m.reqs))
	}
}
