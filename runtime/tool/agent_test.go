package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

func sealed(t *testing.T, a plan.Agent, callees map[string]plan.Callee) *plan.Plan {
	t.Helper()
	if a.Capabilities.Tools == nil {
		a.Capabilities.Tools = map[string]plan.Tool{}
	}
	p := &plan.Plan{Agent: a, Callees: callees}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

func labeller(t *testing.T) *plan.Plan {
	return sealed(t, plan.Agent{
		Name: "labeller", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "Label.",
		Input:    &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)},
		Output:   &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(`{"enum":["bug","feature"]}`), Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}, nil)
}

// triage is the agent that calls the agent of label.cue, as its tool
// "label".
func triage() plan.Agent {
	return plan.Agent{
		Name: "triage", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "Triage.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
			"label": {Kind: "agent", Description: "Label an issue.", Path: "label.cue"},
		}},
		Output:   &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`), Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}
}

// caller is triage's plan, with child compiled into it.
func caller(t *testing.T, child *plan.Plan) *plan.Plan {
	return sealed(t, triage(), map[string]plan.Callee{"label": {Path: "label.cue", Dir: ".", Contract: child.Digests.Contract, Plan: child}})
}

func env(events func(agentrt.Event)) tool.Env {
	return tool.Env{
		BaseDir:  "/agents",
		ModelFor: func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{}, nil },
		Events:   events,
	}
}

// TestAgentTool: a called agent answers through the tool, its usage is
// charged to the caller, and its events carry its place.
func TestAgentTool(t *testing.T) {
	child := labeller(t)
	parent := caller(t, child)
	var mu sync.Mutex
	var nested []agentrt.Event
	e := env(func(ev agentrt.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Agent != "" {
			nested = append(nested, ev)
		}
	})
	tools, closeTools, err := tool.Build(context.Background(), parent, e)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	if s := string(tools["label"].Spec().Schema); !strings.Contains(s, `"title"`) {
		t.Errorf("the tool's arguments are the callee's input schema; got %s", s)
	}
	r, err := agentrt.New(parent, agentrt.Options{Model: testmodel.Model{}, Tools: tools, Events: e.Events})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "ok" {
		t.Fatalf("outcome %s: %s", rep.Outcome, rep.Error)
	}
	for _, rd := range rep.Rounds {
		for _, c := range rd.ToolCalls {
			if c.Name == "label" && c.IsError {
				t.Errorf("the agent tool failed: %s", c.Error)
			}
		}
	}
	if len(nested) == 0 || nested[0].Agent != "label" {
		t.Errorf("nested events carry no agent path: %+v", nested)
	}
	childUsage := 0
	for _, ev := range nested {
		if ev.Type == agentrt.EventRunEnd {
			childUsage = ev.Usage.Total()
		}
	}
	own := 0
	for _, rd := range rep.Rounds {
		own += rd.Usage.Total()
	}
	if childUsage == 0 || rep.Usage.Total() != own+childUsage {
		t.Errorf("usage %d, own rounds %d, child %d: the child's tokens must be charged to the caller", rep.Usage.Total(), own, childUsage)
	}
}

// TestAgentToolEventsFollowTheRun: runs of one runner, each given its own
// sink (a batch's items, a server's requests, which share the tools),
// hear their called agents' events, and no other run's; the sink the tools
// were built with hears none of them.
func TestAgentToolEventsFollowTheRun(t *testing.T) {
	parent := caller(t, labeller(t))
	var built []agentrt.Event
	var mu sync.Mutex
	e := env(func(ev agentrt.Event) {
		mu.Lock()
		defer mu.Unlock()
		built = append(built, ev)
	})
	tools, closeTools, err := tool.Build(context.Background(), parent, e)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(parent, agentrt.Options{Model: testmodel.Model{}, Tools: tools, Events: e.Events})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 4
	heard := make([][]agentrt.Event, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := r.WithEvents(func(ev agentrt.Event) { heard[i] = append(heard[i], ev) }).Run(context.Background(), nil)
			if err != nil || rep.Outcome != agentrt.OutcomeOK {
				t.Errorf("run %d: %v %+v", i, err, rep)
			}
		}()
	}
	wg.Wait()
	for i, evs := range heard {
		starts := 0
		for _, ev := range evs {
			if ev.Type == agentrt.EventRunStart && ev.Agent == "label" {
				starts++
			}
		}
		if starts != 1 {
			t.Errorf("run %d heard %d starts of its called agent's run, want its one", i, starts)
		}
	}
	if len(built) != 0 {
		t.Errorf("the tools' own sink heard %d events of the runs' called agents, first %+v", len(built), built[0])
	}
}

// TestAgentToolRefuses: an agent tool whose callee the plan does not
// carry, a host without models for callees, and agents nested past the
// limit (a plan built in memory may call itself) are refused when the
// tools are built.
func TestAgentToolRefuses(t *testing.T) {
	// Plans built in memory, unsealed: Seal would refuse the first.
	bare := &plan.Plan{Agent: triage()}
	self := &plan.Plan{Agent: triage()}
	self.Callees = map[string]plan.Callee{"label": {Path: "label.cue", Dir: ".", Plan: self}}
	noModels := env(nil)
	noModels.ModelFor = nil
	tests := []struct {
		name string
		p    *plan.Plan
		env  tool.Env
		want string
	}{
		{"not compiled in", bare, env(nil), `the called agent "label.cue" is not compiled into the plan; compile the agent again`},
		{"no models", caller(t, labeller(t)), noModels, "this host does not run agents as tools"},
		{"calls itself", self, env(nil), fmt.Sprintf("agents call agents more than %d deep", plan.MaxCalleeDepth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tool.Build(context.Background(), tt.p, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestAgentToolDir: a called agent's relative paths resolve against its
// own directory, the caller's joined with the callee's Dir, as when it
// runs on its own.
func TestAgentToolDir(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "agents", "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := labeller(t).Agent
	a.Capabilities.Tools = map[string]plan.Tool{"docs": {Kind: "fs", Description: "Docs.", Root: "docs"}}
	child := sealed(t, a, nil)
	for _, tt := range []struct {
		dir  string
		want string // the error, if any
	}{
		{"agents", ""},
		{".", `root "docs" (` + filepath.Join(base, "docs") + ") does not exist"},
		{filepath.ToSlash(filepath.Join(base, "agents")), ""},
	} {
		p := sealed(t, triage(), map[string]plan.Callee{"label": {Path: "label.cue", Dir: tt.dir, Contract: child.Digests.Contract, Plan: child}})
		e := env(nil)
		e.BaseDir = base
		_, closeTools, err := tool.Build(context.Background(), p, e)
		if tt.want == "" {
			if err != nil {
				t.Errorf("dir %s: %v", tt.dir, err)
				continue
			}
			closeTools()
		} else if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("dir %s: got %v, want an error containing %q", tt.dir, err, tt.want)
		}
	}
}

// spender is a model for a caller and its callee: the caller ("Triage.")
// calls its agent tool five times in its first turn, then answers; the
// callee ("Label.") answers at once, reporting 100 tokens in and 50 out.
type spender struct{}

func (spender) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	answer := func(args string, in, out int) (*agentrt.Response, error) {
		return &agentrt.Response{Message: agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "a", Name: req.OutputTool, Arguments: json.RawMessage(args)}}},
			Usage: agentrt.Usage{Input: in, Output: out}}, nil
	}
	if !strings.Contains(req.Messages[0].Content, "Triage.") {
		return answer(`{"`+req.OutputWrap+`":"bug"}`, 100, 50)
	}
	for _, m := range req.Messages {
		if m.Role == agentrt.ToolRole {
			return answer(`{"ok":true}`, 20, 5)
		}
	}
	var calls []agentrt.ToolCall
	for i := range 5 {
		calls = append(calls, agentrt.ToolCall{ID: fmt.Sprint("c", i), Name: "label", Arguments: json.RawMessage(`{"title":"x"}`)})
	}
	return &agentrt.Response{Message: agentrt.Message{Role: agentrt.Assistant, ToolCalls: calls}, Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
}

// TestCalleeWithinCallerBudget: the agents a run calls run within what its
// token budget has left: five calls in one turn, each callee with a budget
// of its own far larger, spend the caller's budget and at most one
// callee's turn past it (a budget is checked after each call), and the
// calls after it are not made.
func TestCalleeWithinCallerBudget(t *testing.T) {
	child := labeller(t)
	child.Agent.Budgets.Tokens = 100000
	if err := child.Seal(); err != nil {
		t.Fatal(err)
	}
	a := triage()
	a.Budgets.Tokens = 400
	parent := sealed(t, a, map[string]plan.Callee{"label": {Path: "label.cue", Dir: ".", Contract: child.Digests.Contract, Plan: child}})
	e := env(nil)
	e.ModelFor = func(*plan.Plan) (agentrt.Model, error) { return spender{}, nil }
	tools, closeTools, err := tool.Build(context.Background(), parent, e)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(parent, agentrt.Options{Model: spender{}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if used := rep.Usage.Total(); used > 400+150 {
		t.Errorf("the run used %d tokens; its budget is 400, and a callee's turn 150", used)
	}
	var notCalled int
	for _, rd := range rep.Rounds {
		for _, c := range rd.ToolCalls {
			if c.Error == "not called: the calling agent's token budget is spent" {
				notCalled++
			}
		}
	}
	if notCalled == 0 {
		t.Errorf("every call was made: %+v", rep.Rounds)
	}
}
