package runtime_test

import (
	"testing"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestReportCost: each round is priced by the table, the model's and its
// called agents' costs together, and the report's cost is their sum; a
// model with no price marks the cost estimated and is named.
func TestReportCost(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "gpt-4o-2024-08-06"}
	})
	tab, err := cost.Parse("p.json", []byte(`{"as_of": "2025-01-01", "models": {"openai": {"gpt-4o": {"input": 2, "cached_input": 1, "output": 8}}}}`), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: tab},
		func(req *agentrt.Request) (*agentrt.Response, error) {
			resp, err := call(0, "search", `{"q":"x"}`)(req)
			resp.Usage = agentrt.Usage{Input: 500, Cached: 250, Output: 125}
			return resp, err
		},
		answer(`{"label":"bug"}`, 2_000),
	)
	// Usage a request this small could have used (a report past the
	// call's bound would be cut to it).
	// Round 1: 250 × $2 + 250 × $1 + 125 × $8 per million = $0.00175.
	// Round 2: usage(2000) is 1000 in, 1000 out: $0.002 + $0.008 = $0.01.
	want := []float64{0.00175, 0.01}
	for i, rr := range r.rep.Rounds {
		if rr.Cost.USD != want[i] || rr.Cost.Estimated {
			t.Errorf("round %d: cost %+v, want $%v", i+1, rr.Cost, want[i])
		}
	}
	if c := r.rep.Cost; c.USD != 0.01175 || c.Estimated || len(r.rep.Rounds) != 2 {
		t.Errorf("report cost %+v over %d rounds, want $0.01175 over 2", c, len(r.rep.Rounds))
	}
	var seen int
	for _, e := range r.events {
		if e.Type == agentrt.EventModelResponse && e.Cost != nil || e.Type == agentrt.EventRunEnd && e.Cost != nil && e.Cost.USD == 0.01175 {
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("%d model_response and run_end events carry the cost, want 3", seen)
	}

	unpriced := agent(t, func(a *plan.Agent) { a.Model = plan.Model{Provider: "openai", Name: "llama3.1:8b"} })
	r = runWith(t, unpriced, agentrt.Options{Provider: "openai", Prices: tab}, answer(`{"label":"bug"}`, 100))
	if c := r.rep.Cost; c.USD != 0 || !c.Estimated || len(c.Unpriced) != 1 || c.Unpriced[0] != "openai/llama3.1:8b" {
		t.Errorf("unpriced model: cost %+v", c)
	}
}
