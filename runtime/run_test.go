package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// turn is one scripted model reply.
type turn func(req *agentrt.Request) (*agentrt.Response, error)

// scripted is a model that plays its turns in order and records every
// request; past the script it fails.
type scripted struct {
	mu    sync.Mutex
	turns []turn
	reqs  []*agentrt.Request
}

func (s *scripted) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	s.mu.Lock()
	i := len(s.reqs)
	cp := *req
	cp.Messages = append([]agentrt.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, &cp)
	s.mu.Unlock()
	if i >= len(s.turns) {
		return nil, fmt.Errorf("script has %d turns; turn %d asked for", len(s.turns), i+1)
	}
	return s.turns[i](req)
}

func usage(n int) agentrt.Usage { return agentrt.Usage{Input: n / 2, Output: n - n/2} }

// prose replies with text.
func prose(text string, tokens int) turn {
	return func(*agentrt.Request) (*agentrt.Response, error) {
		return &agentrt.Response{Message: agentrt.Message{Content: text}, Usage: usage(tokens)}, nil
	}
}

// answer calls the output tool, whatever its reserved name, with args.
func answer(args string, tokens int) turn {
	return func(req *agentrt.Request) (*agentrt.Response, error) {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{
			{ID: fmt.Sprintf("a%d", len(req.Messages)), Name: req.OutputTool, Arguments: json.RawMessage(args)}}}, Usage: usage(tokens)}, nil
	}
}

// call calls tools by name with args.
func call(tokens int, nameArgs ...string) turn {
	return func(req *agentrt.Request) (*agentrt.Response, error) {
		var calls []agentrt.ToolCall
		for i := 0; i < len(nameArgs); i += 2 {
			calls = append(calls, agentrt.ToolCall{ID: fmt.Sprintf("c%d_%d", len(req.Messages), i), Name: nameArgs[i], Arguments: json.RawMessage(nameArgs[i+1])})
		}
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: calls}, Usage: usage(tokens)}, nil
	}
}

// echoTool returns its arguments; it counts its calls.
type echoTool struct {
	name  string
	mu    sync.Mutex
	calls int
	fn    func(args json.RawMessage) (agentrt.ToolResult, error)
}

func (t *echoTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: t.name, Description: "Echo.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}
}

func (t *echoTool) Call(_ context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	t.mu.Lock()
	t.calls++
	t.mu.Unlock()
	if t.fn != nil {
		return t.fn(args)
	}
	return agentrt.ToolResult{Content: string(args)}, nil
}

const labelSchema = `{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"],"additionalProperties":false}`

// agent returns a sealed plan of a labelling agent, changed by mut.
func agent(t testing.TB, mut func(a *plan.Agent)) *plan.Plan {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "label",
		Model:        plan.Model{Provider: "test", Name: "m1"},
		Instructions: "Label the issue.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output: &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(labelSchema),
			Mode: "auto", Enforce: "local", Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if mut != nil {
		mut(&p.Agent)
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

func withTool(a *plan.Agent) {
	a.Capabilities.Tools["search"] = plan.Tool{Kind: "exec", Description: "Search."}
}

func keepsTools(a *plan.Agent) {
	withTool(a)
	a.Output.KeepsTools = true
}

type runResult struct {
	rep    *agentrt.Report
	model  *scripted
	tool   *echoTool
	events []agentrt.Event
}

func runWith(t *testing.T, p *plan.Plan, opts agentrt.Options, turns ...turn) runResult {
	t.Helper()
	m := &scripted{turns: turns}
	tool := &echoTool{name: "search"}
	opts.Model = m
	if _, ok := p.Agent.Capabilities.Tools["search"]; ok && opts.Tools == nil {
		opts.Tools = map[string]agentrt.Tool{"search": tool}
	}
	var mu sync.Mutex
	var events []agentrt.Event
	opts.Events = func(e agentrt.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	r, err := agentrt.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return runResult{rep: rep, model: m, tool: tool, events: events}
}

func expect(t *testing.T, rep *agentrt.Report, outcome, bound, answer string) {
	t.Helper()
	if rep.Outcome != outcome || rep.Bound != bound {
		t.Errorf("outcome %s, bound %s (%s); want %s, %s", rep.Outcome, rep.Bound, rep.Error, outcome, bound)
	}
	if string(rep.Answer) != answer {
		t.Errorf("answer %s, want %s", rep.Answer, answer)
	}
}

func TestShapingOnly(t *testing.T) {
	res := runWith(t, agent(t, nil), agentrt.Options{}, answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	req := res.model.reqs[0]
	if len(req.Tools) != 1 || req.Tools[0].Name != res.rep.OutputTool || req.ToolChoice.Mode != "tool" {
		t.Errorf("a shaping turn offers and forces the output tool alone; got tools %v, choice %+v", req.Tools, req.ToolChoice)
	}
	if !strings.HasPrefix(res.rep.OutputTool, "answer_") || len(res.rep.OutputTool) != len("answer_")+8 {
		t.Errorf("output tool %q is not the name plus a unique suffix", res.rep.OutputTool)
	}
}

func TestGatherThenShape(t *testing.T) {
	res := runWith(t, agent(t, withTool), agentrt.Options{},
		call(10, "search", `{"q":"crash"}`), prose("I know enough.", 10), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	first, last := res.model.reqs[0], res.model.reqs[2]
	if len(first.Tools) != 1 || first.Tools[0].Name != "search" {
		t.Errorf("without keeps_tools a gathering turn offers the tools only; got %v", first.Tools)
	}
	if last.ToolChoice.Mode != "tool" || len(last.Tools) != 1 {
		t.Errorf("after prose the turn must be a shaping turn; got %+v", last.ToolChoice)
	}
	if res.tool.calls != 1 || res.rep.ToolCalls != 1 {
		t.Errorf("tool calls %d (report %d), want 1", res.tool.calls, res.rep.ToolCalls)
	}
}

func TestOnProse(t *testing.T) {
	t.Run("remind", func(t *testing.T) {
		res := runWith(t, agent(t, keepsTools), agentrt.Options{},
			prose("It is a bug.", 10), prose("Really, a bug.", 10), prose("A bug!", 10), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		reminders := 0
		for _, m := range res.model.reqs[3].Messages {
			if m.Role == agentrt.User && strings.Contains(m.Content, "answered in prose") {
				reminders++
			}
		}
		if reminders != 2 {
			t.Errorf("%d reminders, want 2 (strategy.reminders)", reminders)
		}
		if res.model.reqs[3].ToolChoice.Mode != "tool" {
			t.Error("past the reminders the turn must be forced")
		}
		if res.model.reqs[1].ToolChoice.Mode != "auto" || len(res.model.reqs[1].Tools) != 2 {
			t.Errorf("with keeps_tools a reminded turn keeps its tools: %+v %v", res.model.reqs[1].ToolChoice, res.model.reqs[1].Tools)
		}
	})
	t.Run("force", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Strategy.OnProse = "force" }), agentrt.Options{},
			prose("A bug.", 10), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		if res.model.reqs[1].ToolChoice.Mode != "tool" {
			t.Error("force must shape the next turn")
		}
	})
	t.Run("accept", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Strategy.OnProse = "accept" }), agentrt.Options{},
			prose(`{"label": "feature"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label": "feature"}`)
	})
	t.Run("accept invalid prose is retried", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Strategy.OnProse = "accept" }), agentrt.Options{},
			prose("a bug", 10), prose(`{"label":"bug"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		if res.rep.InvalidAnswers != 1 {
			t.Errorf("invalid answers %d, want 1", res.rep.InvalidAnswers)
		}
	})
	t.Run("no output contract", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { a.Output = nil }), agentrt.Options{}, prose("Hello.", 10))
		expect(t, res.rep, "ok", "none", `"Hello."`)
	})
}

func TestInvalidAnswers(t *testing.T) {
	t.Run("then valid", func(t *testing.T) {
		res := runWith(t, agent(t, nil), agentrt.Options{},
			answer(`{"label":"crash"}`, 10), answer(`{"label":"bug","extra":1}`, 10), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		last := res.model.reqs[2].Messages
		fb := last[len(last)-1]
		if fb.Role != agentrt.ToolRole || !fb.IsError || !strings.Contains(fb.Content, "'extra' not allowed") {
			t.Errorf("the invalid answer's errors must go back as the tool result; got %+v", fb)
		}
	})
	t.Run("past retries", func(t *testing.T) {
		res := runWith(t, agent(t, nil), agentrt.Options{},
			answer(`{}`, 10), answer(`{}`, 10), answer(`{}`, 10), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "error", "none", "")
		if len(res.model.reqs) != 3 || !strings.Contains(res.rep.Error, "after 3 attempts") {
			t.Errorf("%d calls, error %q; want 3 attempts (1 + 2 retries)", len(res.model.reqs), res.rep.Error)
		}
	})
	t.Run("escalate", func(t *testing.T) {
		p := agent(t, func(a *plan.Agent) {
			a.Strategy.Escalate = &plan.Escalate{AfterInvalid: 2, Model: "m2"}
		})
		res := runWith(t, p, agentrt.Options{}, answer(`{}`, 10), answer(`{}`, 10), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		if got := []string{res.model.reqs[0].Model, res.model.reqs[1].Model, res.model.reqs[2].Model}; got[1] != "m1" || got[2] != "m2" {
			t.Errorf("models %v, want m1 m1 m2", got)
		}
	})
}

func TestToolBudget(t *testing.T) {
	tools := 1
	res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Tools = &tools }), agentrt.Options{},
		call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`, "search", `{"q":"c"}`))
	expect(t, res.rep, "error", "tool_budget", "")
	if res.tool.calls != 1 {
		t.Errorf("the tool ran %d times; the budget is checked before each batch, so want 1", res.tool.calls)
	}
	// The CLI flag overrides the manifest.
	more := 3
	res = runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Tools = &tools }), agentrt.Options{Budgets: agentrt.Overrides{Tools: &more}},
		call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`, "search", `{"q":"c"}`), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
}

func TestTokenBudget(t *testing.T) {
	t.Run("after an answer", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { a.Budgets.Tokens = 100 }), agentrt.Options{}, answer(`{"label":"bug"}`, 150))
		expect(t, res.rep, "ok", "token_budget", `{"label":"bug"}`)
	})
	t.Run("before an answer", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Tokens = 100 }), agentrt.Options{},
			call(120, "search", `{"q":"a"}`), answer(`{"label":"bug"}`, 10))
		expect(t, res.rep, "error", "token_budget", "")
		if len(res.model.reqs) != 1 {
			t.Errorf("%d model calls; the budget was spent after the first", len(res.model.reqs))
		}
	})
	t.Run("answer reserve", func(t *testing.T) {
		p := agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Tokens = 1000; a.Budgets.AnswerReserve = 300 })
		res := runWith(t, p, agentrt.Options{},
			call(400, "search", `{"q":"a"}`), call(400, "search", `{"q":"b"}`), answer(`{"label":"bug"}`, 100))
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
		third := res.model.reqs[2]
		if third.ToolChoice.Mode != "tool" || len(third.Tools) != 1 {
			t.Errorf("with 200 tokens left of a reserve of 300, the turn must ask for the answer alone; got %+v, %d tools", third.ToolChoice, len(third.Tools))
		}
		if res.model.reqs[1].ToolChoice.Mode != "auto" {
			t.Error("with 600 tokens left, the run should still gather")
		}
	})
}

// TestDefaultReserve is a model that gathers for as long as it may, in
// calls that grow with the conversation (usage counted at four bytes a
// token, as EstimateUsage does): the default reserve, one answering
// turn's whole cost, asks for the answer while the budget still holds it.
func TestDefaultReserve(t *testing.T) {
	q := `{"q":"` + strings.Repeat("a", 280) + `"}`
	gather := func(req *agentrt.Request) (*agentrt.Response, error) {
		msg := agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: fmt.Sprintf("c%d", len(req.Messages)), Name: "search", Arguments: json.RawMessage(q)}}}
		if req.ToolChoice.Mode == agentrt.ChooseTool {
			msg = agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}}
		}
		return &agentrt.Response{Message: msg, Usage: agentrt.EstimateUsage(req, msg)}, nil
	}
	turns := make([]turn, 20)
	for i := range turns {
		turns[i] = gather
	}
	p := agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Tokens = 2000; a.Model.MaxOutputTokens = 100 })
	res := runWith(t, p, agentrt.Options{}, turns...)
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	if res.rep.Usage.Total() > 2000 {
		t.Errorf("used %d tokens of 2000", res.rep.Usage.Total())
	}
	var reserve []agentrt.Event
	for _, e := range res.events {
		if e.Type == agentrt.EventReserve {
			reserve = append(reserve, e)
		}
	}
	if len(reserve) != 1 || !strings.Contains(reserve[0].Message, "asking for the answer (one more turn would take about") {
		t.Errorf("reserve events %+v; want one that says what no longer fits", reserve)
	}
	if n := len(res.model.reqs); n < 3 {
		t.Errorf("%d model calls; the budget holds two gathering turns before the answer", n)
	}
}

func TestDeadline(t *testing.T) {
	d := 50 * time.Millisecond
	m := &blockingModel{}
	r, err := agentrt.New(agent(t, nil), agentrt.Options{Model: m, Budgets: agentrt.Overrides{Deadline: &d}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rep, "error", "deadline", "")
	if rep.Interrupted {
		t.Error("a deadline is not an interruption")
	}
}

// blockingModel waits until its context is done.
type blockingModel struct{ started chan struct{} }

func (m *blockingModel) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	if m.started != nil {
		close(m.started)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCancellation(t *testing.T) {
	m := &blockingModel{started: make(chan struct{})}
	r, err := agentrt.New(agent(t, nil), agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-m.started; cancel() }()
	rep, err := r.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rep, "error", "none", "")
	if !rep.Interrupted {
		t.Error("want an interrupted run")
	}
}

func TestRounds(t *testing.T) {
	res := runWith(t, agent(t, func(a *plan.Agent) { keepsTools(a); a.Budgets.Rounds = 2 }), agentrt.Options{},
		call(10, "search", `{"q":"a"}`), call(10, "search", `{"q":"b"}`), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "error", "rounds", "")
}

// TestPoolConcurrent: many runs share a pool; once it is dry, runs stop,
// and a run started on a dry pool sends nothing.
func TestPoolConcurrent(t *testing.T) {
	pool := agentrt.NewPool(2000)
	p := agent(t, keepsTools)
	var wg sync.WaitGroup
	reps := make([]*agentrt.Report, 40)
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var turns []turn
			for range 10 {
				turns = append(turns, call(100, "search", `{"q":"x"}`))
			}
			m := &scripted{turns: append(turns, answer(`{"label":"bug"}`, 100))}
			r, err := agentrt.New(p, agentrt.Options{Model: m, Pool: pool, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
			if err != nil {
				t.Error(err)
				return
			}
			reps[i], err = r.Run(context.Background(), nil)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	spent, bounded := 0, 0
	for _, rep := range reps {
		switch {
		case rep.Bound == "token_budget":
			bounded++
		case rep.Outcome == "ok" && rep.Bound == "none":
			// A run that finished before the pool ran dry.
		default:
			t.Errorf("a run ended %s/%s (%s)", rep.Outcome, rep.Bound, rep.Error)
		}
		spent += rep.Usage.Total()
	}
	if bounded < 30 {
		t.Errorf("only %d of 40 runs of 1100 tokens hit a pool of 2000", bounded)
	}
	// Calls reserve before they are sent: the pool is never overspent.
	if spent > 2000 {
		t.Errorf("runs spent %d tokens of a pool of 2000", spent)
	}
	m := &scripted{}
	r, _ := agentrt.New(p, agentrt.Options{Model: m, Pool: pool, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	rep, _ := r.Run(context.Background(), nil)
	if len(m.reqs) != 0 || rep.Bound != "token_budget" || !strings.Contains(rep.Error, "before it sent anything") {
		t.Errorf("a run on a dry pool sent %d requests, bound %s, error %q", len(m.reqs), rep.Bound, rep.Error)
	}
}

func TestToolFailures(t *testing.T) {
	tool := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) { panic("boom") }}
	res := runWith(t, agent(t, keepsTools), agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}},
		call(10, "search", `{"q":"a"}`, "nosuch", `{}`, "search", `{"q":1}`), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	var results []string
	for _, m := range res.model.reqs[1].Messages {
		if m.Role == agentrt.ToolRole {
			if !m.IsError {
				t.Errorf("result %q should be an error", m.Content)
			}
			results = append(results, m.Content)
		}
	}
	want := []string{"panicked: boom", `no tool "nosuch"`, "do not match the tool's schema"}
	for i, w := range want {
		if i >= len(results) || !strings.Contains(results[i], w) {
			t.Errorf("result %d = %q, want it to mention %q", i, results, w)
		}
	}
}

func TestInput(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		a.Input = &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"title":{"type":"string"}},"required":["id"]}`)}
		a.Prompt = "Issue {{.id}}: {{if .title}}{{.title}}{{else}}(untitled){{end}}"
	})
	m := &scripted{turns: []turn{answer(`{"label":"bug"}`, 1)}}
	r, err := agentrt.New(p, agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), json.RawMessage(`{"id": 1234567}`)); err != nil {
		t.Fatal(err)
	}
	if got := m.reqs[0].Messages[1].Content; got != "Issue 1234567: (untitled)" {
		t.Errorf("prompt rendered %q", got)
	}
	// After the value only space: a bracket there is no more an array's
	// end than a word is.
	for _, bad := range []string{`{"id": "x"}`, `{}`, `not json`, ``, `{"id": 1} x`, `{"id": 1}]`, `{"id": 1}}`, `{"id": 1} {}`} {
		_, err := r.Run(context.Background(), json.RawMessage(bad))
		var ie *agentrt.InputError
		if !errors.As(err, &ie) {
			t.Errorf("input %q: got %v, want an InputError", bad, err)
		}
	}
	if len(m.reqs) != 1 {
		t.Errorf("bad input reached the model: %d requests", len(m.reqs))
	}
}

// TestInputErrorPointer: an input error names the member as a JSON
// Pointer, its "/" and "~" escaped, and the whole value as "/".
func TestInputErrorPointer(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		a.Input = &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"a/b~c":{"type":"integer"}}}`)}
	})
	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{}})
	if err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`{"a/b~c": "x"}`: "at /a~1b~0c: got string, want integer",
		`[]`:             "at /: got array, want object",
	} {
		_, err := r.Run(context.Background(), json.RawMessage(input))
		var ie *agentrt.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("input %s: got %v, want an InputError with %q", input, err, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := agentrt.New(agent(t, withTool), agentrt.Options{Model: &scripted{}}); err == nil || !strings.Contains(err.Error(), `tool "search"`) {
		t.Errorf("a plan tool with no implementation: got %v", err)
	}
	if _, err := agentrt.New(agent(t, nil), agentrt.Options{}); err == nil {
		t.Error("no model: accepted")
	}
}

func TestEvents(t *testing.T) {
	res := runWith(t, agent(t, withTool), agentrt.Options{}, call(10, "search", `{"q":"a"}`), prose("done", 10), answer(`{"label":"bug"}`, 10))
	var types []string
	for _, e := range res.events {
		types = append(types, e.Type)
	}
	got := strings.Join(types, " ")
	want := "run_start model_call model_response tool_call tool_result decision model_call model_response decision model_call model_response run_end"
	if got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
}

// The shaping turn after prose ends with a user message asking for the
// answer, never with the model's own prose: on_prose force, and remind
// once its reminders are spent. (examples/testdata/code-reviewer holds
// the same in native mode.)
func TestShapingAfterProseEndsWithUser(t *testing.T) {
	for _, c := range []struct {
		onProse string
		native  bool
	}{{"force", false}, {"remind", false}} {
		p := agent(t, func(a *plan.Agent) {
			withTool(a)
			a.Output.KeepsTools = true
			a.Strategy.OnProse = c.onProse
			a.Strategy.Reminders = 0
		})
		if c.native {
			p.Output = &plan.Lowering{Mode: plan.ModeNative, Provider: "test", Schema: p.Agent.Output.Schema}
		}
		last := answer(`{"label":"bug"}`, 10)
		if c.native {
			last = func(*agentrt.Request) (*agentrt.Response, error) {
				return &agentrt.Response{Message: agentrt.Message{Content: `{"label":"bug"}`}, Usage: usage(10)}, nil
			}
		}
		res := runWith(t, p, agentrt.Options{}, prose("I think it is a bug.", 10), last)
		model := res.model
		expect(t, res.rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
		if len(model.reqs) != 2 {
			t.Fatalf("%+v: %d requests", c, len(model.reqs))
		}
		msgs := model.reqs[1].Messages
		end := msgs[len(msgs)-1]
		if end.Role != agentrt.User || !strings.Contains(end.Content, "answer now") || msgs[len(msgs)-2].Role != agentrt.Assistant {
			t.Errorf("%+v: the shaping turn ends with %s %q", c, end.Role, end.Content)
		}
	}
}

// TestNotIJSON: an answer, tool arguments or an input that name a member
// twice are refused, though the schema would pass the last of the two,
// and so are an answer or tool arguments holding a number no double holds
// exactly: what was validated must read one way to every reader after it.
func TestNotIJSON(t *testing.T) {
	res := runWith(t, agent(t, nil), agentrt.Options{},
		answer(`{"label":"crash","label":"bug"}`, 10), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	last := res.model.reqs[1].Messages
	if fb := last[len(last)-1]; !fb.IsError || !strings.Contains(fb.Content, `not I-JSON (RFC 7493), which it must be: /: duplicate member name "label"`) {
		t.Errorf("the answer naming a member twice: got %+v", fb)
	}

	res = runWith(t, agent(t, keepsTools), agentrt.Options{},
		call(10, "search", `{"q":"a","q":"b"}`), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	if res.tool.calls != 0 {
		t.Errorf("the tool ran %d times with arguments naming a member twice", res.tool.calls)
	}
	last = res.model.reqs[1].Messages
	if fb := last[len(last)-1]; !fb.IsError || !strings.Contains(fb.Content, `arguments are not I-JSON (RFC 7493), which it must be: /: duplicate member name "q"`) {
		t.Errorf("arguments naming a member twice: got %+v", fb)
	}

	// Numbers no double holds exactly: the schema passes the number as
	// written, a reader of doubles reads one it refuses. Refused in the
	// answer, whether through the output tool or in the reply's text, and
	// in a tool's arguments.
	numbers := func(mode string) *plan.Plan {
		p := agent(t, func(a *plan.Agent) {
			withTool(a)
			a.Output.KeepsTools = true
			a.Output.Schema = json.RawMessage(`{"type":"object","properties":{"p":{"type":"number","exclusiveMaximum":1},"n":{"type":"integer","multipleOf":3},"m":{"type":"number","exclusiveMinimum":0}},"additionalProperties":false}`)
			a.Output.Mode = mode
		})
		if mode == plan.ModePrompted {
			p.Output = &plan.Lowering{Provider: "test", Mode: mode, Schema: p.Agent.Output.Schema}
			if err := p.Seal(); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, c := range []struct{ answer, becomes string }{
		{`{"p":0.99999999999999999}`, "1"},
		{`{"n":9007199254740993}`, "9007199254740992"},
		{`{"m":1e-400}`, "0"},
	} {
		want := fmt.Sprintf("not I-JSON (RFC 7493), which it must be: /%s: number %s is not exactly an IEEE-754 double (it would become %s)",
			c.answer[2:3], c.answer[5:len(c.answer)-1], c.becomes)
		for _, mode := range []string{plan.ModeTool, plan.ModePrompted} {
			first, then := answer(c.answer, 10), answer(`{"p":0.1,"n":3,"m":1.0}`, 10)
			if mode == plan.ModePrompted {
				first, then = prose(c.answer, 10), prose(`{"p":0.1,"n":3,"m":1.0}`, 10)
			}
			res = runWith(t, numbers(mode), agentrt.Options{}, first, then)
			if res.rep.Outcome != "ok" || res.rep.InvalidAnswers != 1 {
				t.Errorf("%s in %s mode: outcome %s (%s), %d invalid answers", c.answer, mode, res.rep.Outcome, res.rep.Error, res.rep.InvalidAnswers)
				continue
			}
			last = res.model.reqs[1].Messages
			if fb := last[len(last)-1]; !strings.Contains(fb.Content, want) {
				t.Errorf("%s in %s mode: got %+v, want %q", c.answer, mode, fb, want)
			}
		}
	}
	res = runWith(t, agent(t, keepsTools), agentrt.Options{},
		call(10, "search", `{"q":"a","n":9007199254740993}`), answer(`{"label":"bug"}`, 10))
	if res.tool.calls != 0 {
		t.Errorf("the tool ran %d times with a number past a double", res.tool.calls)
	}
	last = res.model.reqs[1].Messages
	if fb := last[len(last)-1]; !fb.IsError || !strings.Contains(fb.Content, `arguments are not I-JSON (RFC 7493), which it must be: /n: number 9007199254740993 is not exactly`) {
		t.Errorf("arguments with a number past a double: got %+v", fb)
	}
}

// TestLooseAnswers: a run made as before numbers were held to doubles (a
// Temporal run whose history predates it, WithLooseAnswers) takes an
// answer and a tool's arguments holding such numbers, as it did, so that
// its history replays as it was made.
func TestLooseAnswers(t *testing.T) {
	m := &scripted{turns: []turn{
		call(10, "search", `{"q":"a","n":9007199254740993}`),
		answer(`{"label":"bug","score":0.99999999999999999}`, 10),
	}}
	tool := &numberTool{echoTool{name: "search"}}
	p := agent(t, func(a *plan.Agent) {
		keepsTools(a)
		a.Output.Schema = json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]},"score":{"type":"number","exclusiveMaximum":1}},"required":["label"]}`)
	})
	r, err := agentrt.New(p, agentrt.Options{Model: m, Tools: map[string]agentrt.Tool{"search": tool}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(agentrt.WithLooseAnswers(context.Background()), nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rep, "ok", "none", `{"label":"bug","score":0.99999999999999999}`)
	if tool.calls != 1 || rep.InvalidAnswers != 0 {
		t.Errorf("the tool ran %d times, %d invalid answers; want the call made and the answer taken: %+v", tool.calls, rep.InvalidAnswers, rep.Rounds)
	}
}

// numberTool is an echoTool whose arguments hold a number too.
type numberTool struct{ echoTool }

func (t *numberTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: t.name, Description: "Echo.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"],"additionalProperties":false}`)}
}

// TestStopAcceptTakesTheModelsText: a host's strategy that stops and
// accepts takes the last assistant message as the answer, as Decision
// says, wherever it decides: after tool results the conversation ends
// with a tool's output, which was taken as the answer, a fetched page's
// JSON answering for the model.
func TestStopAcceptTakesTheModelsText(t *testing.T) {
	stop := agentrt.StrategyFunc(func(_ context.Context, s *agentrt.State) agentrt.Decision {
		if s.Boundary == agentrt.AfterToolResults {
			return agentrt.Decision{Action: agentrt.Stop, Accept: true}
		}
		return agentrt.Decision{Action: agentrt.Continue}
	})
	tool := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: `{"label":"feature"}`}, nil
	}}
	said := func(req *agentrt.Request) (*agentrt.Response, error) {
		r, err := call(10, "search", `{"q":"x"}`)(req)
		r.Message.Content = `{"label":"bug"}`
		return r, err
	}
	t.Run("output contract", func(t *testing.T) {
		res := runWith(t, agent(t, keepsTools), agentrt.Options{Strategy: stop, Tools: map[string]agentrt.Tool{"search": tool}}, said)
		expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	})
	t.Run("no output contract", func(t *testing.T) {
		res := runWith(t, agent(t, func(a *plan.Agent) { withTool(a); a.Output = nil }), agentrt.Options{Strategy: stop, Tools: map[string]agentrt.Tool{"search": tool}}, said)
		expect(t, res.rep, "ok", "none", `"{\"label\":\"bug\"}"`)
	})
}

// TestCallRefused: the report tells a call the runtime refused, which
// never ran, from one made that failed.
func TestCallRefused(t *testing.T) {
	tool := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{}, errors.New("no index")
	}}
	res := runWith(t, agent(t, keepsTools), agentrt.Options{Tools: map[string]agentrt.Tool{"search": tool}},
		call(10, "search", `{}`, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "ok", "none", `{"label":"bug"}`)
	calls := res.rep.Rounds[0].ToolCalls
	if len(calls) != 2 || !calls[0].IsError || !calls[0].Refused || !calls[1].IsError || calls[1].Refused || tool.calls != 1 {
		t.Fatalf("calls %+v (the tool ran %d times); want the first refused, the second made and failed", calls, tool.calls)
	}
}
