package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
)

// hostClock is a clock a host keeps: it moves only when the host says.
type hostClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *hostClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *hostClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// remoteHost makes effects as a host elsewhere would: from the Effect
// alone, through JSON, with its own model and tools, keeping each as a
// journal entry (as a workflow's history keeps activities).
type remoteHost struct {
	model   agentrt.Model
	tools   map[string]agentrt.Tool
	secrets *redact.Set
	clock   *hostClock
	step    time.Duration // the clock's advance per effect

	mu      sync.Mutex
	effects []agentrt.Effect
	entries []journal.Entry
}

func (h *remoteHost) Make(ctx context.Context, e *agentrt.Effect) (json.RawMessage, error) {
	wire, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var got agentrt.Effect
	if err := json.Unmarshal(wire, &got); err != nil {
		return nil, err
	}
	started := h.clock.Now()
	h.clock.advance(h.step)
	if !got.Deadline.IsZero() && !h.clock.Now().Before(got.Deadline) {
		return nil, fmt.Errorf("effect %s: past its deadline: %w", got.Key, context.DeadlineExceeded)
	}
	resp, err := agentrt.Perform(ctx, &got, h.model, h.tools, h.secrets)
	k, kerr := journal.ParseKey(got.Key)
	if kerr != nil {
		return nil, kerr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.effects = append(h.effects, got)
	entry := journal.Entry{Key: k, Kind: got.Kind, Fingerprint: got.Fingerprint, Request: got.Request, Response: resp, Started: started}
	if err != nil {
		entry.Error = err.Error()
		entry.Response = json.RawMessage(`{"deadline":false}`)
	}
	h.entries = append(h.entries, entry)
	return resp, err
}

// TestEffector: a run whose effects a host makes elsewhere does what a
// run in process does, hands the host every call in the form a journal
// records, and the entries the host kept replay offline as a journal.
func TestEffector(t *testing.T) {
	p := agent(t, withTool)
	turns := []turn{call(10, "search", `{ "q" : "disk"}`), answer(`{"label":"bug"}`, 10)}
	secrets := &redact.Set{}
	secrets.Add("sk-secret-value")
	leaky := func(args json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: string(args) + " sk-secret-value"}, nil
	}
	local := runWith(t, p, agentrt.Options{Secrets: secrets, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search", fn: leaky}}}, turns...)

	tool := &echoTool{name: "search", fn: leaky}
	m := &scripted{turns: turns}
	clock := &hostClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	host := &remoteHost{model: m, tools: map[string]agentrt.Tool{"search": tool}, secrets: secrets, clock: clock, step: time.Second}
	// The run's own model and tools are never called: the host's are.
	r, err := agentrt.New(p, agentrt.Options{Model: refusingModel{}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		t.Error("the run called its own tool")
		return agentrt.ToolResult{}, nil
	}}}, Effector: host, Clock: clock, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "effector", local.rep, rep)
	if !rep.Started.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || rep.DurationMS != 3000 {
		// three effects, a second each
		t.Errorf("started %s, %d ms; want the host's clock: 03:04:05, 3000 ms", rep.Started, int(rep.DurationMS))
	}
	if len(host.effects) != 3 || tool.calls != 1 || len(m.reqs) != 2 {
		t.Fatalf("%d effects, %d tool calls, %d model calls; want 3, 1, 2", len(host.effects), tool.calls, len(m.reqs))
	}
	for i, want := range []struct{ key, kind string }{{"1.0", journal.KindModel}, {"1.1", journal.KindTool}, {"2.0", journal.KindModel}} {
		e := host.effects[i]
		if e.Key != want.key || e.Kind != want.kind || !strings.HasPrefix(e.Fingerprint, "blake3:") || len(e.Request) == 0 || e.Agent != "" {
			t.Errorf("effect %d: %s %s %q %.80s; want %s %s, a fingerprint and a request", i, e.Key, e.Kind, e.Fingerprint, e.Request, want.key, want.kind)
		}
		if (e.Model != nil) != (e.Kind == journal.KindModel) || (e.Tool != "") != (e.Kind == journal.KindTool) {
			t.Errorf("effect %d carries model %v, tool %q", i, e.Model != nil, e.Tool)
		}
	}
	if got := string(host.effects[1].Arguments); got != `{"q":"disk"}` {
		t.Errorf("tool effect arguments %s, want the canonical form", got)
	}
	if strings.Contains(string(host.entries[1].Response), "sk-secret") {
		t.Errorf("the host's result holds the secret: %s", host.entries[1].Response)
	}

	// The host's entries are a journal: a replay serves every effect.
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range host.entries {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again := replay(t, p, file, agentrt.Options{Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	sameRun(t, "replay", rep, again)
}

// TestEffectorDeadline: on a host's clock the run sets no timer of its
// own; it hands each effect its deadline, and ends with the deadline
// bound when the host's clock passes it.
func TestEffectorDeadline(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Budgets.Deadline = "90s"
	})
	clock := &hostClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m := &scripted{turns: []turn{call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`), answer(`{"label":"bug"}`, 10)}}
	host := &remoteHost{model: m, tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}, clock: clock, step: 40 * time.Second}
	r, err := agentrt.New(p, agentrt.Options{Model: refusingModel{}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}, Effector: host, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeError || rep.Bound != agentrt.BoundDeadline || !strings.Contains(rep.Error, "the deadline (1m30s) passed") {
		t.Fatalf("outcome %s, bound %s: %s; want the deadline", rep.Outcome, rep.Bound, rep.Error)
	}
	want := time.Date(2026, 1, 2, 3, 5, 35, 0, time.UTC)
	for _, e := range host.effects {
		if !e.Deadline.Equal(want) {
			t.Errorf("effect %s: deadline %s, want %s", e.Key, e.Deadline, want)
		}
	}
	if len(host.effects) != 2 {
		t.Errorf("%d effects made; want 2, the third past the deadline", len(host.effects))
	}
}

// TestEffectorErrors: a host's failure of a model call ends the run with
// the host's message; one that wraps context.Canceled with the run's
// context cancelled is an interrupt.
func TestEffectorErrors(t *testing.T) {
	p := agent(t, nil)
	fail := effectorFunc(func(context.Context, *agentrt.Effect) (json.RawMessage, error) {
		return nil, errors.New("the worker lost the call")
	})
	r, err := agentrt.New(p, agentrt.Options{Model: refusingModel{}, Effector: fail})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeError || rep.Bound != agentrt.BoundNone || !strings.Contains(rep.Error, "the worker lost the call") {
		t.Errorf("outcome %s, bound %s: %s", rep.Outcome, rep.Bound, rep.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := effectorFunc(func(context.Context, *agentrt.Effect) (json.RawMessage, error) {
		cancel()
		return nil, fmt.Errorf("activity cancelled: %w", context.Canceled)
	})
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Effector: stop})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = r.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted {
		t.Errorf("outcome %s, bound %s: %s; want interrupted", rep.Outcome, rep.Bound, rep.Error)
	}
	bad := effectorFunc(func(context.Context, *agentrt.Effect) (json.RawMessage, error) {
		return json.RawMessage(`[1,2]`), nil
	})
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Effector: bad})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Error, "the response the host returned of model call 1.0 is not a response") {
		t.Errorf("a host's malformed response: %s", rep.Error)
	}
}

type effectorFunc func(context.Context, *agentrt.Effect) (json.RawMessage, error)

func (f effectorFunc) Make(ctx context.Context, e *agentrt.Effect) (json.RawMessage, error) {
	return f(ctx, e)
}

// TestPerformRefuses: an effect the host cannot make is an error, not a
// panic.
func TestPerformRefuses(t *testing.T) {
	for _, c := range []struct {
		e    agentrt.Effect
		want string
	}{
		{agentrt.Effect{Key: "1.0"}, "neither a model call nor a tool call"},
		{agentrt.Effect{Key: "1.1", Tool: "gone"}, `there is no tool "gone" here`},
		{agentrt.Effect{Key: "1.0", Model: &agentrt.Request{}}, "no model to call"},
	} {
		_, err := agentrt.Perform(context.Background(), &c.e, nil, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.e, err, c.want)
		}
	}
}
