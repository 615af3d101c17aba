package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/digest"
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

func caller(t *testing.T, path, pin string, callees map[string]plan.Callee) *plan.Plan {
	return sealed(t, plan.Agent{
		Name: "triage", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "Triage.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
			"label": {Kind: "agent", Description: "Label an issue.", Path: path, Pin: pin},
		}},
		Output:   &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`), Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}, callees)
}

func env(plans map[string]*plan.Plan, events func(agentrt.Event)) tool.Env {
	return tool.Env{
		BaseDir:  "/agents",
		ModelFor: func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{}, nil },
		Resolve: func(path string) (*plan.Plan, string, error) {
			p, ok := plans[path]
			if !ok {
				return nil, "", fmt.Errorf("no agent at %s", path)
			}
			return p, "/agents", nil
		},
		Events: events,
	}
}

// TestAgentTool: a called agent answers through the tool, its usage is
// charged to the caller, and its events carry its place.
func TestAgentTool(t *testing.T) {
	child := labeller(t)
	parent := caller(t, "label.cue", string(child.Digests.Contract), map[string]plan.Callee{"label": {Path: "label.cue", Contract: child.Digests.Contract}})
	var mu sync.Mutex
	var nested []agentrt.Event
	e := env(map[string]*plan.Plan{"/agents/label.cue": child}, func(ev agentrt.Event) {
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

func TestAgentToolRefuses(t *testing.T) {
	child := labeller(t)
	noOutput := sealed(t, plan.Agent{Name: "quiet", Model: plan.Model{Provider: "test", Name: "test"}, Instructions: "x"}, nil)
	tests := []struct {
		name   string
		parent *plan.Plan
		plans  map[string]*plan.Plan
		want   string
	}{
		{"pin moved", caller(t, "label.cue", "blake3:"+strings.Repeat("0", 64), nil), map[string]*plan.Plan{"/agents/label.cue": child}, "contract moved: pinned blake3:000"},
		{"changed since compile", caller(t, "label.cue", "", map[string]plan.Callee{"label": {Path: "label.cue", Contract: digest.Digest("blake3:" + strings.Repeat("1", 64))}}),
			map[string]*plan.Plan{"/agents/label.cue": child}, "changed since the plan was compiled"},
		{"missing", caller(t, "nope.cue", "", nil), map[string]*plan.Plan{}, "no agent at /agents/nope.cue"},
		{"no output", caller(t, "quiet.cue", "", nil), map[string]*plan.Plan{"/agents/quiet.cue": noOutput}, "declares no output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tool.Build(context.Background(), tt.parent, env(tt.plans, nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A cycle: an agent whose tool calls itself.
	self := caller(t, "self.cue", "", nil)
	if _, _, err := tool.Build(context.Background(), self, env(map[string]*plan.Plan{"/agents/self.cue": self}, nil)); err == nil {
		t.Error("an agent calling itself was built")
	}
}
