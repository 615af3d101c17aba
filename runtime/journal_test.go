package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
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
	opts.Model, opts.Journal = model, jn
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
	opts.Model, opts.Journal = refusingModel{}, &agentrt.Journal{Recorded: j, Replay: true}
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
		Tools: map[string]agentrt.Tool{"search": tool}, Journal: &agentrt.Journal{Writer: w}})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := r.Run(ctx, nil)
	w.Close()
	if !rep.Interrupted {
		t.Fatalf("not interrupted: %s %s", rep.Outcome, rep.Error)
	}
	// The tool ran: the call is not said to have not been made.
	if c := rep.Rounds[0].ToolCalls[0]; c.Error != "the call was cut off: the run was interrupted" {
		t.Errorf("the call reads %q", c.Error)
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

// waitingTool's calls last until their context ends.
type waitingTool struct{ echoTool }

func (t *waitingTool) Call(ctx context.Context, _ json.RawMessage) (agentrt.ToolResult, error) {
	<-ctx.Done()
	return agentrt.ToolResult{}, ctx.Err()
}

// TestDeadlineDuringEffectReplayed: a replay of a run whose deadline
// passed during a call ends there, and does not name its own deadline as
// the one that passed: the recorded run's was another (--deadline).
func TestDeadlineDuringEffectReplayed(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { withTool(a); a.Budgets.Deadline = "10m" })
	file := filepath.Join(t.TempDir(), "run.jsonl")
	short := 50 * time.Millisecond
	tools := map[string]agentrt.Tool{"search": &waitingTool{echoTool{name: "search"}}}
	rec := journaled(t, p, file, false, &scripted{turns: []turn{call(10, "search", `{"q":"x"}`)}},
		agentrt.Options{Tools: tools, Budgets: agentrt.Overrides{Deadline: &short}})
	if rec.Bound != agentrt.BoundDeadline || !strings.Contains(rec.Error, "the deadline (50ms) passed during a call of tool search") {
		t.Fatalf("record: bound %s (%s)", rec.Bound, rec.Error)
	}
	rep := replay(t, p, file, agentrt.Options{Tools: tools})
	if rep.Divergence != nil || rep.Bound != agentrt.BoundDeadline || rep.Error != "the run's deadline passed during a call of tool search" {
		t.Fatalf("replay: %s %s %q, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
	}
	// The tool ran, until the deadline cut it off; the replay says what
	// the recorded run did.
	for _, run := range []*agentrt.Report{rec, rep} {
		if c := run.Rounds[0].ToolCalls[0]; c.Error != "the call was cut off: context deadline exceeded" {
			t.Errorf("the call reads %q", c.Error)
		}
	}
}

// TestToolCallNotJournaled: a tool call whose result the journal cannot
// take (here past journal.MaxFile; a full disk is the same) ran: the run
// ends on the journal's error, and the call says it was made, its result
// not journaled. The journal ends before it, so a resume makes it again.
func TestToolCallNotJournaled(t *testing.T) {
	defer func(fl int64) { journal.MaxFile = fl }(journal.MaxFile)
	journal.MaxFile = 16 << 10
	p := agent(t, withTool)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	tool := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: strings.Repeat("a long result ", 2<<10)}, nil
	}}
	rec := journaled(t, p, file, false, &scripted{turns: []turn{call(10, "search", `{"q":"x"}`)}},
		agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}})
	if tool.calls != 1 || rec.Outcome != agentrt.OutcomeError || !strings.Contains(rec.Error, "journal: effect 1.1 would take the journal") {
		t.Fatalf("record: %d tool calls, %s %q", tool.calls, rec.Outcome, rec.Error)
	}
	c := rec.Rounds[0].ToolCalls[0]
	if want := "the call was made, but its result could not be journaled: " + rec.Error; c.Error != want {
		t.Errorf("the call reads %q, want %q", c.Error, want)
	}
	journal.MaxFile = 1 << 20
	again := &echoTool{name: "search"}
	res := journaled(t, p, file, true, &scripted{turns: []turn{answer(`{"label":"feature"}`, 10)}},
		agentrt.Options{Tools: map[string]agentrt.Tool{"search": again}})
	if res.Outcome != agentrt.OutcomeOK || again.calls != 1 {
		t.Fatalf("resume: %s %s, tool calls %d", res.Outcome, res.Error, again.calls)
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

// TestToolArguments: whatever a model writes as a tool call's arguments —
// JSON with spaces and keys in any order, text that is not JSON, JSON too
// deep to keep as JSON — a run that records does what a run without a
// journal does, and its replay and its resume do it again, with no
// divergence. Arguments that are JSON reach the tool, the model and the
// report in canonical form.
func TestToolArguments(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepValid := `{"q":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}"
	for _, tc := range []struct {
		name, args string
		tool       string // what the tool got; "": not called
	}{
		{"spaces and escapes", "{ \"q\" : \"x<y \\u00e9\\u0041\" }", `{"q":"x<y éA"}`},
		{"schema-valid", `{"q": "x"}`, `{"q":"x"}`},
		{"not JSON", `{not json`, ""},
		{"empty", ``, ""},
		{"null", `null`, ""},
		{"deeper than JSON readers go", deep, ""},
		{"too deep to keep as JSON", deepValid, ""},
		{"repeated key", `{"q":"a", "q":"b"}`, ""}, // not I-JSON: refused before the tool
		{"a number no double holds", `{"q":"a","n":12345678901234567890}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := agent(t, withTool)
			turns := func() *scripted {
				return &scripted{turns: []turn{call(10, "search", tc.args), answer(`{"label":"bug"}`, 10)}}
			}
			got := ""
			tool := func() *echoTool {
				return &echoTool{name: "search", fn: func(args json.RawMessage) (agentrt.ToolResult, error) {
					got = string(args)
					return agentrt.ToolResult{Content: "ok"}, nil
				}}
			}
			live := runWith(t, p, agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool()}}, turns().turns...)
			if got != tc.tool {
				t.Errorf("the tool got %q, want %q", got, tc.tool)
			}
			file := filepath.Join(t.TempDir(), "run.jsonl")
			rec := journaled(t, p, file, false, turns(), agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool()}})
			sameRun(t, "record", live.rep, rec)
			rep := replay(t, p, file, agentrt.Options{Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
			sameRun(t, "replay", live.rep, rep)
			again := tool()
			res := journaled(t, p, file, true, &scripted{}, agentrt.Options{Tools: map[string]agentrt.Tool{"search": again}})
			sameRun(t, "resume", live.rep, res)
			if again.calls != 0 {
				t.Errorf("resume called the tool again")
			}
		})
	}
}

// sameRun checks that a run did what want did: outcome, answer, usage and
// every tool call, arguments and results included.
func sameRun(t *testing.T, what string, want, got *agentrt.Report) {
	t.Helper()
	if got.Divergence != nil {
		t.Fatalf("%s diverged: %s", what, got.Divergence)
	}
	calls := func(r *agentrt.Report) string {
		var rounds []agentrt.RoundReport
		for _, rr := range r.Rounds {
			rr.DurationMS, rr.Replayed = 0, false
			for i := range rr.ToolCalls {
				rr.ToolCalls[i].DurationMS = 0
			}
			rounds = append(rounds, rr)
		}
		b, err := json.Marshal(rounds)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return string(b)
	}
	if got.Outcome != want.Outcome || got.Bound != want.Bound || string(got.Answer) != string(want.Answer) ||
		got.Usage != want.Usage || calls(got) != calls(want) {
		t.Errorf("%s: %s %s %s %+v\n%.600s\nwant %s %s %s %+v\n%.600s", what, got.Outcome, got.Bound, got.Answer, got.Usage, calls(got),
			want.Outcome, want.Bound, want.Answer, want.Usage, calls(want))
	}
	if got.UsagePaid.Add(got.UsageReplayed) != got.Usage {
		t.Errorf("%s: paid %+v and replayed %+v do not make up the usage %+v", what, got.UsagePaid, got.UsageReplayed, got.Usage)
	}
	if what == "replay" && (got.UsagePaid != agentrt.Usage{} || got.Usage != agentrt.Usage{} && got.Rounds[0].Replayed == false) {
		t.Errorf("replay: paid %+v, first round replayed %v; a replay pays for nothing", got.UsagePaid, got.Rounds[0].Replayed)
	}
}

// TestLongRunReplays: a run whose requests, their value references
// replaced, come to more than 256 MiB in all (70 rounds, each sending the
// same 4 MiB of tool specs) replays from its journal, every effect served.
func TestLongRunReplays(t *testing.T) {
	const rounds = 70
	p := agent(t, func(a *plan.Agent) {
		keepsTools(a)
		a.Capabilities.Tools["search"] = plan.Tool{Kind: "exec", Description: strings.Repeat("Search the tracker. ", 4<<20/20)}
	})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	n := rounds
	opts := agentrt.Options{Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}}
	opts.Budgets.Rounds = &n
	rec := journaled(t, p, file, false, newLoopModel(rounds), opts)
	if rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	rep := replay(t, p, file, opts)
	if rep.Outcome != agentrt.OutcomeOK || rep.Divergence != nil || rep.Replayed != 2*rounds-1 || string(rep.Answer) != string(rec.Answer) {
		t.Fatalf("replay: %s %s, divergence %+v, %d replayed, answer %s", rep.Outcome, rep.Error, rep.Divergence, rep.Replayed, rep.Answer)
	}
}

// TestBadRecordNotHidden: a recorded effect whose response is not one (an
// edited line the reader takes, as it reads no response's shape) ends a
// replay on that error, naming the effect; it is not hidden behind a
// divergence listing the effects the run then left unreached.
func TestBadRecordNotHidden(t *testing.T) {
	p, file, tools := recordedSearch(t)
	for _, tc := range []struct{ effect, response, want string }{
		{"1.0", `5`, "journal: the recorded response of model call 1.0 is not a response"},
		{"1.1", `"x"`, "journal: the recorded result of effect 1.1 is not a tool result"},
	} {
		edited := filepath.Join(t.TempDir(), "edited.jsonl")
		editEntry(t, file, edited, tc.effect, "response", tc.response)
		rep := replay(t, p, edited, agentrt.Options{Tools: tools})
		if rep.Divergence != nil || rep.Outcome != agentrt.OutcomeError || !strings.Contains(rep.Error, tc.want) {
			t.Errorf("effect %s's response %s: %s %q, divergence %+v; want the error %q", tc.effect, tc.response, rep.Outcome, rep.Error, rep.Divergence, tc.want)
		}
	}
}

// TestToolUsageHeld: a tool's recorded result (or one a Temporal client
// completed by its ID) that claims negative usage or cost gives no budget
// back: its counts are held at zero, and at most at what a turn could
// count.
func TestToolUsageHeld(t *testing.T) {
	p, file, tools := recordedSearch(t)
	before := replay(t, p, file, agentrt.Options{Tools: tools})
	for _, tc := range []struct{ name, result string }{
		{"negative", `{"content":"{\"q\":\"x\"}","usage":{"input":-1000000,"output":-5,"cached":-1,"cache_write":-1},"cost":{"usd":-3}}`},
		{"past any turn", `{"content":"{\"q\":\"x\"}","usage":{"input":9223372036854775807,"output":9223372036854775807}}`},
	} {
		edited := filepath.Join(t.TempDir(), "edited.jsonl")
		editEntry(t, file, edited, "1.1", "response", tc.result)
		rep := replay(t, p, edited, agentrt.Options{Tools: tools})
		u := rep.Usage
		if rep.Outcome != agentrt.OutcomeOK || u.Input < before.Usage.Input || u.Output < before.Usage.Output || u.Cached < 0 || u.CacheWrite < 0 || u.Total() < before.Usage.Total() || rep.Cost.USD < before.Cost.USD {
			t.Errorf("%s: %s %q, usage %+v, cost %v; want no less than the run's own %+v, %v", tc.name, rep.Outcome, rep.Error, u, rep.Cost.USD, before.Usage, before.Cost.USD)
		}
	}
}

// TestEditedFingerprint: an entry whose fingerprint was edited, its
// request not, diverges saying that no field differs and why that can be,
// rather than with an empty list of changes.
func TestEditedFingerprint(t *testing.T) {
	p, file, tools := recordedSearch(t)
	edited := filepath.Join(t.TempDir(), "edited.jsonl")
	editEntry(t, file, edited, "1.1", "fingerprint", `"blake3:`+strings.Repeat("0", 64)+`"`)
	rep := replay(t, p, edited, agentrt.Options{Tools: tools})
	if d := rep.Divergence; d == nil || d.Effect != "1.1" || len(d.Changes) != 1 || !strings.Contains(d.Changes[0], "no field of the request differs") {
		t.Fatalf("replay: %s %q, divergence %+v", rep.Outcome, rep.Error, rep.Divergence)
	}
}

// recordedSearch records a run of the agent with one tool that calls it
// once (effect 1.1) and answers: the agent, the journal and the tools.
func recordedSearch(t *testing.T) (*plan.Plan, string, map[string]agentrt.Tool) {
	t.Helper()
	p := agent(t, withTool)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	tools := map[string]agentrt.Tool{"search": &echoTool{name: "search"}}
	model := &scripted{turns: []turn{call(10, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 10)}}
	if rec := journaled(t, p, file, false, model, agentrt.Options{Tools: tools}); rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	return p, file, tools
}

// editEntry copies the journal src to dst with the member of effect key
// replaced by value, a JSON text.
func editEntry(t *testing.T, src, dst, key, member, value string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	found := false
	for i, l := range lines {
		var e map[string]json.RawMessage
		if json.Unmarshal([]byte(l), &e) != nil || string(e["effect"]) != `"`+key+`"` {
			continue
		}
		e[member] = json.RawMessage(value)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines[i], found = string(b)+"\n", true
	}
	if !found {
		t.Fatalf("%s has no effect %s", src, key)
	}
	if err := os.WriteFile(dst, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayReplyBounded: a recorded reply is held to what a live reply to
// its request could be. One larger than its request's max_output_tokens
// allows (70,000 tool calls, 1 MiB of text, more JSON values than its
// tokens write), or counting more once decoded (5,000 calls, each a token
// at least), ends the replay on an error naming the effect, before any
// of its calls is made, and without holding what it would decode to.
func TestReplayReplyBounded(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model.MaxOutputTokens = 256
	})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	tools := map[string]agentrt.Tool{"search": &echoTool{name: "search"}}
	model := &scripted{turns: []turn{call(10, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 10)}}
	if rec := journaled(t, p, file, false, model, agentrt.Options{Tools: tools}); rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	if rep := replay(t, p, file, agentrt.Options{Tools: tools}); rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("replay as recorded: %s %s", rep.Outcome, rep.Error)
	}
	calls := func(n int, call string) string {
		return `{"message":{"role":"assistant","tool_calls":[` + strings.TrimSuffix(strings.Repeat(call+",", n), ",") + `]},"usage":{"input":10,"output":10}}`
	}
	for _, tc := range []struct{ name, response, want string }{
		{"70,000 calls", calls(70000, `{"arguments":{},"id":"c","name":"search"}`), "more than the 655360 a reply to 256 output tokens (the request's limit) can be written in"},
		{"1 MiB of text", `{"message":{"role":"assistant","content":"` + strings.Repeat("x", 1<<20) + `"},"usage":{"input":10,"output":10}}`, "can be written in"},
		{"dense arguments", calls(1, `{"arguments":{"q":[`+strings.TrimSuffix(strings.Repeat("0,", 100000), ",")+`]},"id":"c","name":"search"}`), "JSON values, more than the 66560"},
		{"5,000 calls", calls(5000, `{"id":"c","name":"search"}`), "holds 640000 bytes of text and tool calls (a call counts 128 at least), more than the 98304"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := filepath.Join(t.TempDir(), "edited.jsonl")
			editEntry(t, file, edited, "2.0", "response", tc.response)
			j, err := journal.Open(edited)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var toolEvents int
			opts := agentrt.Options{Tools: tools, Model: refusingModel{}, Journal: &agentrt.Journal{Recorded: j, Replay: true}}
			opts.Events = func(e agentrt.Event) {
				if e.Type == agentrt.EventToolCall && e.Round == 2 {
					mu.Lock()
					toolEvents++
					mu.Unlock()
				}
			}
			r, err := agentrt.New(p, opts)
			if err != nil {
				t.Fatal(err)
			}
			goruntime.GC() // what the subtests before left
			stop := replytest.WatchHeap()
			rep, err := r.Run(context.Background(), nil)
			heap := stop()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome != agentrt.OutcomeError || rep.Divergence != nil || toolEvents != 0 ||
				!strings.Contains(rep.Error, "journal: the recorded response of model call 2.0 is not a reply its request could have had: ") ||
				!strings.Contains(rep.Error, tc.want) {
				t.Fatalf("replay: %s %q, divergence %+v, %d calls made; want an error naming effect 2.0 and %q", rep.Outcome, rep.Error, rep.Divergence, toolEvents, tc.want)
			}
			if heap > 64<<20 {
				t.Errorf("the replay's heap reached %d MiB", heap>>20)
			}
			t.Logf("heap %d MiB", heap>>20)
		})
	}
}

// TestUnreachedBounded: a divergence lists the first 20 effects a replay
// left unreached, in the order of their keys (2.1 before 10.1, as a run
// reaches them, not as their text sorts), and says how many more: a
// journal with 100,000 appended made a line of 6.9 MB.
func TestUnreachedBounded(t *testing.T) {
	p, file, tools := recordedSearch(t)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(data)
	for i := 1000; i >= 1; i-- { // written in reverse, so order is the list's own
		fmt.Fprintf(&b, `{"effect":"%d.1","kind":"tool","fingerprint":"blake3:%s","request":{"tool":"search"},"response":{},"started":"2026-12-07T00:00:00Z","duration_ms":0}`+"\n", i+2, strings.Repeat("0", 64))
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := replay(t, p, file, agentrt.Options{Tools: tools})
	d := rep.Divergence
	if d == nil || d.Reason != "the run ended without reaching 1000 recorded effect(s)" || len(d.Changes) != 21 {
		t.Fatalf("replay: %s %q, divergence %+v", rep.Outcome, rep.Error, d)
	}
	for i, c := range d.Changes[:20] {
		if want := fmt.Sprintf("%d.1 (call of tool search)", i+3); c != want {
			t.Errorf("listed %d: %q, want %q", i, c, want)
		}
	}
	if last := d.Changes[20]; last != "… and 980 more" {
		t.Errorf("last listed %q, want … and 980 more", last)
	}
	if len(rep.Error) > 2000 {
		t.Errorf("the error is %d bytes", len(rep.Error))
	}
}

// TestReplayKeepsNoClock: a replay slower than the run it replays (a
// loaded machine) still ends where the journal says. The run, under a
// deadline of a minute, calls a tool and answers; its replay is given a
// deadline already past (as a machine slower than the deadline leaves
// it), on the process's clock and on a host's, and serves every recorded
// effect to the same answer, rather than ending on the deadline before
// the journal's end.
func TestReplayKeepsNoClock(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Budgets.Deadline = "1m"
	})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	tool := &echoTool{name: "search"}
	rec := journaled(t, p, file, false, &scripted{turns: []turn{call(10, "search", `{"q":"crash"}`), answer(`{"label":"bug"}`, 10)}},
		agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}})
	if rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	past := time.Nanosecond
	for name, clock := range map[string]agentrt.Clock{"process": nil, "host": &leaping{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}} {
		rep := replay(t, p, file, agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}, Budgets: agentrt.Overrides{Deadline: &past}, Clock: clock})
		if rep.Divergence != nil || rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"bug"}` {
			t.Errorf("replay on the %s's clock: %s %s %s, divergence %+v", name, rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
		}
	}
	if tool.calls != 1 {
		t.Errorf("the tool was called %d times; the replays must serve its result", tool.calls)
	}
}

// leaping is a host's clock on which an hour passes at each reading.
type leaping struct {
	mu  sync.Mutex
	now time.Time
}

func (c *leaping) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Hour)
	return c.now
}

// TestResumePastDeadline: a resume counts its deadline from its own
// start, and one that passes while the resume serves the journal ends it
// there, on its deadline, exit 3: the effects recorded after it are not
// reached, which says nothing of the run having changed (not a
// divergence), and the journal keeps them for a resume given more time.
func TestResumePastDeadline(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Budgets.Deadline = "1m"
	})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	tool := &echoTool{name: "search"}
	script := func() *scripted {
		return &scripted{turns: []turn{call(10, "search", `{"q":"crash"}`), answer(`{"label":"bug"}`, 10)}}
	}
	rec := journaled(t, p, file, false, script(), agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}})
	if rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	before, _ := os.ReadFile(file)
	for name, clock := range map[string]agentrt.Clock{"process": nil, "host": &leaping{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}} {
		past := time.Nanosecond
		rep := journaled(t, p, file, true, refusingModel{}, agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}, Budgets: agentrt.Overrides{Deadline: &past}, Clock: clock})
		if rep.Divergence != nil || rep.Outcome != agentrt.OutcomeError || rep.Bound != agentrt.BoundDeadline {
			t.Errorf("resume on the %s's clock: %s %s %s, divergence %+v", name, rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
		}
		if after, _ := os.ReadFile(file); string(after) != string(before) {
			t.Errorf("resume on the %s's clock changed the journal", name)
		}
	}
	if rep := journaled(t, p, file, true, refusingModel{}, agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}}); rep.Outcome != agentrt.OutcomeOK || rep.Divergence != nil {
		t.Errorf("resume with time: %s %s %s, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
	}
	if tool.calls != 1 {
		t.Errorf("the tool was called %d times; the resumes must serve its result", tool.calls)
	}
}

// cutTool's first call ends the run (cancels it, or outlives its
// deadline) and lasts until its context ends; it counts its calls.
type cutTool struct {
	echoTool
	cancel context.CancelFunc // nil: wait for the deadline
}

func (t *cutTool) Call(ctx context.Context, _ json.RawMessage) (agentrt.ToolResult, error) {
	t.mu.Lock()
	t.calls++
	first := t.calls == 1
	t.mu.Unlock()
	if !first {
		return agentrt.ToolResult{Content: "made after the run ended"}, nil
	}
	if t.cancel != nil {
		t.cancel()
	}
	<-ctx.Done()
	return agentrt.ToolResult{}, ctx.Err()
}

// TestCutOffCallEndsRun: a tool call that an interrupt or the deadline
// cuts off ends the run there, recorded or not: the reply's next call is
// not made and the answer beside them is not taken. A run without a
// journal went on, made the next call with its context ended, and took
// the answer: outcome ok, exit 0, after a Ctrl-C, where the same run
// recorded ended interrupted (130) or at its deadline (3).
func TestCutOffCallEndsRun(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Deadline = "10m" })
	reply := func(req *agentrt.Request) (*agentrt.Response, error) {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{
			{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)},
			{ID: "c2", Name: "search", Arguments: json.RawMessage(`{"q":"y"}`)},
			{ID: "c3", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}}, Usage: usage(10)}, nil
	}
	short := 50 * time.Millisecond
	for _, interrupt := range []bool{false, true} {
		for _, record := range []bool{false, true} {
			t.Run(fmt.Sprintf("interrupt=%v,record=%v", interrupt, record), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				tool := &cutTool{echoTool: echoTool{name: "search"}}
				opts := agentrt.Options{Model: &scripted{turns: []turn{reply}}, Tools: map[string]agentrt.Tool{"search": tool}}
				if interrupt {
					tool.cancel = cancel
				} else {
					opts.Budgets.Deadline = &short
				}
				var w *journal.Writer
				if record {
					var err error
					if w, err = journal.Create(filepath.Join(t.TempDir(), "run.jsonl"), journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Started: time.Now()}); err != nil {
						t.Fatal(err)
					}
					opts.Journal = &agentrt.Journal{Writer: w}
				}
				r, err := agentrt.New(p, opts)
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
				wantBound, wantErr, wantCall := agentrt.BoundDeadline, "the deadline (50ms) passed during a call of tool search", "the call was cut off: context deadline exceeded"
				if interrupt {
					wantBound, wantErr, wantCall = agentrt.BoundNone, "interrupted", "the call was cut off: the run was interrupted"
				}
				if rep.Outcome != agentrt.OutcomeError || rep.Bound != wantBound || rep.Error != wantErr || rep.Interrupted != interrupt || rep.Answer != nil {
					t.Errorf("outcome %s, bound %s, error %q, interrupted %v, answer %s; want error, %s, %q", rep.Outcome, rep.Bound, rep.Error, rep.Interrupted, rep.Answer, wantBound, wantErr)
				}
				if tool.calls != 1 {
					t.Errorf("the tool was called %d times, want once: the call after the cut one was made", tool.calls)
				}
				if calls := rep.Rounds[0].ToolCalls; len(calls) != 1 || calls[0].Error != wantCall {
					t.Errorf("the round's calls: %+v; want the cut one alone, reading %q", calls, wantCall)
				}
			})
		}
	}
}
