package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/runview"
)

// labelAndAnswer replies, every turn, with a call of the agent tool
// "label" and the answer beside it.
type labelAndAnswer struct{}

func (labelAndAnswer) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{
		{ID: "c1", Name: "label", Arguments: json.RawMessage(`{"title":"crash"}`)},
		{ID: "c2", Name: req.OutputTool, Arguments: json.RawMessage(`{"ok":true}`)}}}}, nil
}

// interrupting is a called agent's model that interrupts the run (its
// caller's Ctrl-C) and waits for the end it caused.
type interrupting struct{ cancel context.CancelFunc }

func (m interrupting) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	m.cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCutOffCalleeEndsRun: an agent called as a tool whose run an
// interrupt or the caller's deadline cuts off ends the caller there, as a
// cut-off call of any other tool does, journal or not: the answer beside
// the call is not taken. With a journal the caller went on and took it:
// outcome ok, exit 0, after a Ctrl-C or past the deadline. A replay of
// the record ends where it did.
func TestCutOffCalleeEndsRun(t *testing.T) {
	child := labeller(t)
	for _, interrupt := range []bool{false, true} {
		for _, record := range []bool{false, true} {
			t.Run(fmt.Sprintf("interrupt=%v,record=%v", interrupt, record), func(t *testing.T) {
				a := triage()
				a.Budgets.Deadline = "10m"
				var childModel agentrt.Model
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if interrupt {
					childModel = interrupting{cancel}
				} else {
					a.Budgets.Deadline = "100ms"
					childModel = blocking{}
				}
				parent := sealed(t, a, caller(t, child).Callees)
				e := env(nil)
				e.ModelFor = func(*plan.Plan) (agentrt.Model, error) { return childModel, nil }
				tools, closeTools, err := tool.Build(context.Background(), parent, e)
				if err != nil {
					t.Fatal(err)
				}
				defer closeTools()
				opts := agentrt.Options{Model: labelAndAnswer{}, Tools: tools}
				file, w := "", (*journal.Writer)(nil)
				if record {
					file, w = newJournal(t)
					opts.Journal = &agentrt.Journal{Writer: w}
				}
				r, err := agentrt.New(parent, opts)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := r.Run(ctx, nil)
				if w != nil {
					w.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
				wantBound, wantCall := agentrt.BoundDeadline, "the call was cut off: "
				if interrupt {
					wantBound, wantCall = agentrt.BoundNone, "the call was cut off: the run was interrupted"
				}
				if rep.Outcome != agentrt.OutcomeError || rep.Bound != wantBound || rep.Interrupted != interrupt || rep.Answer != nil {
					t.Fatalf("outcome %s, bound %s, error %q, interrupted %v, answer %s; want an error, bound %q, no answer", rep.Outcome, rep.Bound, rep.Error, rep.Interrupted, rep.Answer, wantBound)
				}
				if calls := rep.Rounds[0].ToolCalls; len(calls) != 1 || !calls[0].IsError || len(calls[0].Error) < len(wantCall) || calls[0].Error[:len(wantCall)] != wantCall {
					t.Errorf("the round's calls: %+v; want the cut one alone, reading %q", calls, wantCall)
				}
				if !record {
					return
				}
				if !interrupt {
					// A replay, whose clock the deadline does not reach,
					// ends where the record did, in its words.
					j, err := journal.Open(file)
					if err != nil {
						t.Fatal(err)
					}
					rp := nestedRun(t, unhurried(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: j, Replay: true})
					if rp.Divergence != nil || rp.Outcome != agentrt.OutcomeError || rp.Bound != agentrt.BoundDeadline || rp.Error != rep.Error || rp.Answer != nil {
						t.Fatalf("replay: %s %s %q (recorded %q), answer %s, divergence %+v", rp.Outcome, rp.Bound, rp.Error, rep.Error, rp.Answer, rp.Divergence)
					}
				}
				// A resume given time makes the cut call again, and takes
				// the answer beside it.
				j, w2, err := journal.Resume(file)
				if err != nil {
					t.Fatal(err)
				}
				rs := nestedRun(t, unhurried(t, child), labelAndAnswer{}, testmodel.Model{}, &agentrt.Journal{Recorded: j, Writer: w2})
				w2.Close()
				if rs.Divergence != nil || rs.Outcome != agentrt.OutcomeOK || string(rs.Answer) != `{"ok":true}` {
					t.Fatalf("resume: %s %s %q, answer %s, divergence %+v", rs.Outcome, rs.Bound, rs.Error, rs.Answer, rs.Divergence)
				}
				if calls := rs.Rounds[0].ToolCalls; len(calls) != 2 || calls[0].IsError {
					t.Errorf("the resume's calls: %+v; want the agent's answer, then the answer", calls)
				}
			})
		}
	}
}

// hostClock is a host's clock (a workflow's): it moves when the host
// says.
type hostClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *hostClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// cuttingHost makes effects as a host elsewhere would (a Temporal
// worker's activities): the caller's with labelAndAnswer; the called
// agent's first model call it ends as the run's end cuts it, interrupted
// (the workflow cancelled) or past the deadline, the clock moved past it.
type cuttingHost struct {
	clock     *hostClock
	interrupt context.CancelFunc // nil: the deadline
}

func (h *cuttingHost) Make(ctx context.Context, e *agentrt.Effect) (json.RawMessage, error) {
	if e.Key != "1.1/1.0" {
		return agentrt.Perform(ctx, e, labelAndAnswer{}, nil, nil)
	}
	if h.interrupt != nil {
		h.interrupt()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h.clock.mu.Lock()
	h.clock.now = e.Deadline
	h.clock.mu.Unlock()
	return nil, fmt.Errorf("effect %s: past its deadline: %w", e.Key, context.DeadlineExceeded)
}

// TestCutOffCalleeEndsHostRun: on a host's effector and clock (a Temporal
// workflow), an agent called as a tool that the cancellation or the
// deadline cuts off ends its caller, as TestCutOffCalleeEndsRun's run;
// in a context WithCalleeCutGoesOn (a workflow started before) the
// caller goes on and takes the answer beside the call, as it did.
func TestCutOffCalleeEndsHostRun(t *testing.T) {
	child := labeller(t)
	for _, interrupt := range []bool{false, true} {
		for _, before := range []bool{false, true} {
			t.Run(fmt.Sprintf("interrupt=%v,before=%v", interrupt, before), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if before {
					ctx = agentrt.WithCalleeCutGoesOn(ctx)
				}
				clock := &hostClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
				host := &cuttingHost{clock: clock}
				if interrupt {
					host.interrupt = cancel
				}
				parent := caller(t, child)
				e := env(nil)
				e.ModelFor = func(*plan.Plan) (agentrt.Model, error) { return refusing{}, nil }
				tools, closeTools, err := tool.Build(context.Background(), parent, e)
				if err != nil {
					t.Fatal(err)
				}
				defer closeTools()
				deadline := time.Minute
				r, err := agentrt.New(parent, agentrt.Options{Model: refusing{}, Tools: tools, Effector: host, Clock: clock, Budgets: agentrt.Overrides{Deadline: &deadline}})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := r.Run(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if before {
					if rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"ok":true}` {
						t.Fatalf("before the change: %s %s %q, answer %s; want the answer taken, as it was", rep.Outcome, rep.Bound, rep.Error, rep.Answer)
					}
					return
				}
				wantBound := agentrt.BoundDeadline
				if interrupt {
					wantBound = agentrt.BoundNone
				}
				if rep.Outcome != agentrt.OutcomeError || rep.Bound != wantBound || rep.Interrupted != interrupt || rep.Answer != nil {
					t.Fatalf("outcome %s, bound %s, error %q, interrupted %v, answer %s; want an error, bound %q, no answer", rep.Outcome, rep.Bound, rep.Error, rep.Interrupted, rep.Answer, wantBound)
				}
			})
		}
	}
}

// desk calls the agent tool "triage" once, then answers.
type desk struct{}

func (desk) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == agentrt.ToolRole {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "d2", Name: req.OutputTool, Arguments: json.RawMessage(`{"ok":false}`)}}}}, nil
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "d1", Name: "triage", Arguments: json.RawMessage(`{}`)}}}}, nil
}

// TestCalleeOwnDeadlineCutReplayed: an agent called as a tool whose own
// deadline cuts off the agent it calls in turn ends there, and its caller,
// whose deadline has not passed, goes on with its failure as the call's
// result; a replay ends the called agent in the same words, which the
// caller's next request holds, and does not diverge.
func TestCalleeOwnDeadlineCutReplayed(t *testing.T) {
	a := triage()
	a.Budgets.Deadline = "100ms"
	middle := sealed(t, a, caller(t, labeller(t)).Callees)
	top := sealed(t, plan.Agent{
		Name: "desk", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "Sort.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"triage": {Kind: "agent", Description: "Triage an issue.", Path: "triage.cue"}}},
		Output:       &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`), Retries: 2},
		Budgets:      plan.Budgets{Deadline: "10m"},
	}, map[string]plan.Callee{"triage": {Path: "triage.cue", Dir: ".", Contract: middle.Digests.Contract, Plan: middle}})
	run := func(models map[string]agentrt.Model, jn *agentrt.Journal) *agentrt.Report {
		e := env(nil)
		e.ModelFor = func(p *plan.Plan) (agentrt.Model, error) { return models[p.Agent.Name], nil }
		tools, closeTools, err := tool.Build(context.Background(), top, e)
		if err != nil {
			t.Fatal(err)
		}
		defer closeTools()
		r, err := agentrt.New(top, agentrt.Options{Model: models["desk"], Tools: tools, Journal: jn})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	file, w := newJournal(t)
	rec := run(map[string]agentrt.Model{"desk": desk{}, "triage": labelAndAnswer{}, "labeller": blocking{}}, &agentrt.Journal{Writer: w})
	w.Close()
	if rec.Outcome != agentrt.OutcomeOK || string(rec.Answer) != `{"ok":false}` {
		t.Fatalf("record: %s %s %q, answer %s; want the caller's answer", rec.Outcome, rec.Bound, rec.Error, rec.Answer)
	}
	want := "the called agent triage failed (bound deadline): the deadline (100ms) passed during a call of tool label"
	if calls := rec.Rounds[0].ToolCalls; len(calls) != 1 || calls[0].Error != want {
		t.Fatalf("the caller's first call: %+v; want it to read %q", calls, want)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	rep := run(map[string]agentrt.Model{"desk": refusing{}, "triage": refusing{}, "labeller": refusing{}}, &agentrt.Journal{Recorded: j, Replay: true})
	if rep.Divergence != nil || rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"ok":false}` {
		t.Fatalf("replay: %s %s %q, answer %s, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Answer, rep.Divergence)
	}
}

// TestCutOffCalleeViewed: agentc view shows a call of an agent the
// deadline cut off as the agent's row, cut off, with its run under it,
// not as a call of a tool whose run is hidden.
func TestCutOffCalleeViewed(t *testing.T) {
	a := triage()
	a.Budgets.Deadline = "100ms"
	parent := sealed(t, a, caller(t, labeller(t)).Callees)
	file, w := newJournal(t)
	rec := nestedRun(t, parent, labelAndAnswer{}, blocking{}, &agentrt.Journal{Writer: w})
	w.Close()
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	page, err := runview.Build(j, rec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range page.Rows {
		rows = append(rows, r.Kind+" "+r.Key+" "+r.Error)
	}
	got := strings.Join(rows, "\n")
	want := "round 1.0 \nmodel 1.0 \nagent 1.1 the call was cut off: context deadline exceeded\nround 1.1/1.0 \nmodel 1.1/1.0 context deadline exceeded"
	if got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
}
