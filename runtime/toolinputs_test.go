package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
)

const lookupSchema = `{"type":"object","properties":{"q":{"type":"string","maxLength":8},"limit":{"type":"integer"}},"required":["q"],"additionalProperties":false}`

// lookupTool records the arguments it is called with.
type lookupTool struct{ got []string }

func (t *lookupTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "lookup", Description: "Looks up.", Schema: json.RawMessage(lookupSchema)}
}

func (t *lookupTool) Call(_ context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	t.got = append(t.got, string(args))
	return agentrt.ToolResult{Content: "found"}, nil
}

// strictPlan is an agent whose lookup tool is sent lowered for OpenAI.
func strictPlan(t *testing.T) *plan.Plan {
	t.Helper()
	p := agent(t, func(a *plan.Agent) {
		a.Model = plan.Model{Provider: "openai", Name: "gpt-4o-2024-08-06"}
		a.Capabilities.Tools["lookup"] = plan.Tool{Kind: "exec", Description: "Looks up.", Argv: []string{"true"},
			Input: &plan.Input{Schema: json.RawMessage(lookupSchema)}}
	})
	p.ToolInputs = map[string]*plan.Lowering{"lookup": {Provider: "openai", Mode: plan.ModeTool, Strict: true,
		Schema:   json.RawMessage(`{"additionalProperties":false,"properties":{"limit":{"type":["integer","null"]},"q":{"description":"{maxLength: 8}","type":"string"}},"required":["limit","q"],"type":"object"}`),
		Nullable: []string{"/properties/limit"},
		Local:    []plan.Constraint{{Pointer: "/properties/q/maxLength", Keyword: "maxLength"}}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// A tool the plan lowers is sent with the lowered schema, strict, and its
// schema as written beside it; the null the model writes for an optional
// argument is gone before the tool, the report and the events see the
// arguments, and the schema as written still decides what is valid.
func TestStrictToolArguments(t *testing.T) {
	p := strictPlan(t)
	tool := &lookupTool{}
	r := runWith(t, p, agentrt.Options{Content: true, Tools: map[string]agentrt.Tool{"lookup": tool}},
		call(10, "lookup", `{"q": "x", "limit": null}`),
		call(10, "lookup", `{"q": "much too long", "limit": null}`),
		call(10, "lookup", `{"q": null, "limit": null}`),
		answer(`{"label":"bug"}`, 10))
	expect(t, r.rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
	spec := r.model.reqs[0].Tools[0]
	if spec.Name != "lookup" || !spec.Strict || string(spec.Schema) != string(p.ToolInputs["lookup"].Schema) || string(spec.Contract) != lookupSchema {
		t.Errorf("sent %+v; want the lowered schema, strict, with the schema as written", spec)
	}
	if len(tool.got) != 1 || tool.got[0] != `{"q":"x"}` {
		t.Errorf("the tool got %q, want one call with {\"q\":\"x\"}", tool.got)
	}
	calls := r.rep.Rounds[0].ToolCalls
	if len(calls) != 1 || string(calls[0].Arguments) != `{"q":"x"}` {
		t.Errorf("report: %+v", calls)
	}
	for _, e := range r.events {
		if e.Type == agentrt.EventToolCall && strings.Contains(string(e.Arguments), "null") && e.Round == 1 {
			t.Errorf("event %+v carries the null", e)
		}
	}
	for i, want := range []string{"maxLength: got 13, want 8", "at /q: got null, want string"} {
		c := r.rep.Rounds[i+1].ToolCalls
		if len(c) != 1 || !c[0].IsError || !strings.Contains(c[0].Error, want) {
			t.Errorf("round %d: %+v, want refused: %s", i+2, c, want)
		}
	}

	// The test model answers by the schema as written: no null, no
	// argument past its maxLength.
	tm := &lookupTool{}
	rn, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Provider: "test", Tools: map[string]agentrt.Tool{"lookup": tm}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rn.Run(context.Background(), nil)
	if err != nil || rep.Outcome != agentrt.OutcomeOK || len(tm.got) != 1 {
		t.Fatalf("test model: %v %+v, calls %q", err, rep, tm.got)
	}

	// A lowered schema that does not compile is refused before anything
	// is sent.
	bad := strictPlan(t)
	bad.ToolInputs["lookup"].Schema = json.RawMessage(`{"$ref":"#/$defs/none"}`)
	if err := bad.Seal(); err != nil {
		t.Fatal(err)
	}
	_, err = agentrt.New(bad, agentrt.Options{Model: testmodel.Model{}, Tools: map[string]agentrt.Tool{"lookup": tm}})
	if err == nil || !strings.Contains(err.Error(), `tool "lookup": the argument schema lowered for openai:`) {
		t.Errorf("a lowered schema that does not compile: %v", err)
	}

	// A plan lowered for OpenAI is not sent to another provider.
	_, err = agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Provider: "anthropic", Tools: map[string]agentrt.Tool{"lookup": tm}})
	var ce *agentrt.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `tool "lookup": the plan's argument schema is lowered for openai, not anthropic`) {
		t.Errorf("another provider: %v", err)
	}
}

// The schema as written travels beside the one sent, but is not sent: the
// local estimate of a request's tokens does not count it.
func TestEstimateWithoutContract(t *testing.T) {
	sent := agentrt.ToolSpec{Name: "lookup", Description: "Looks up.", Strict: true,
		Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}
	with := sent
	with.Contract = json.RawMessage(`{ "type": "object", "properties": {"q": {"type": "string", "maxLength": 8, "pattern": "^[^<>&]*$", "description": "no <, > or &"}} }`)
	msgs := []agentrt.Message{{Role: agentrt.User, Content: "Look it up."}}
	a := agentrt.EstimateUsage(&agentrt.Request{Messages: msgs, Tools: []agentrt.ToolSpec{sent}}, agentrt.Message{})
	b := agentrt.EstimateUsage(&agentrt.Request{Messages: msgs, Tools: []agentrt.ToolSpec{with}}, agentrt.Message{})
	if a != b {
		t.Errorf("estimated %+v with the contract, %+v without", b, a)
	}
}
