package cost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// TestExamples: the worst case of every example, by the embedded table,
// worked out by hand. A call of a model takes at most its context window
// (ctx); its price is the dearer of ctx all input, or out (the output
// bound) at the output price and ctx − out at the input price (with
// prompt caching on, the default, at the dearer of the input and cache
// write prices); the model
// calls spend at most min(rounds × ctx, tokens − 1 + ctx), the tokens
// before the last round at the dearest rate; agent tools add
// budgets.tools × the callee's worst case. Money is rounded up to a
// millionth of a dollar.
func TestExamples(t *testing.T) {
	for _, c := range []struct {
		file   string
		tokens int64
		usd    float64
	}{
		// o4-mini: ctx 200000, out 16000 (max_output_tokens), $1.10 in, $4.40 out;
		// tokens 200000, rounds 50.
		// tokens: min(50 × 200000, 199999 + 200000) = 399999
		// a call: max(200000 × 1.1e-6 = 0.22, 184000 × 1.1e-6 + 16000 × 4.4e-6 = 0.2728) = 0.2728
		// money: min(50 × 0.2728, 199999 × 4.4e-6 + 0.2728 = 1.1527956) → 1.152796
		{"code-reviewer.cue", 399999, 1.152796},
		// gpt-4o: ctx 128000, out 8192, $2.50 in, $10 out; tokens 40000, rounds 50.
		// tokens: min(50 × 128000, 39999 + 128000) = 167999
		// a call: max(0.32, 119808 × 2.5e-6 + 8192 × 1e-5 = 0.38144) = 0.38144
		// money: min(19.072, 39999 × 1e-5 + 0.38144 = 0.78143)
		{"invoice-extractor.cue", 167999, 0.78143},
		// claude-sonnet-4 ($3/$15, cache writes $3.75), escalating to
		// claude-opus-4 ($15/$75, cache writes $18.75): ctx 200000, out
		// 4096; tokens 60000, rounds 10; caching on, so input at the
		// cache write price.
		// tokens: min(10 × 200000, 59999 + 200000) = 259999
		// a call, the dearer model: max(3.75, 195904 × 18.75e-6 + 4096 × 75e-6 = 3.9804) = 3.9804
		// money: min(39.804, 59999 × 75e-6 + 3.9804 = 8.480325)
		{"issue-triage.cue", 259999, 8.480325},
		// claude-sonnet-4-5 ($3/$15, cache writes $3.75, caching on; its
		// tier, for a call of more than 200000 in, is past its window): ctx
		// 200000, out 8192; tokens 250000, rounds 20, tools 30, calling
		// code-reviewer (399999 tokens, $1.152796).
		// tokens: min(20 × 200000, 249999 + 200000) + 30 × 399999 = 449999 + 11999970 = 12449969
		// a call: max(0.75, 191808 × 3.75e-6 + 8192 × 15e-6 = 0.84216) = 0.84216
		// money: min(16.8432, 249999 × 15e-6 + 0.84216 = 4.592145) + 30 × 1.152796 = 39.176025
		{"release-notes.cue", 12449969, 39.176025},
		// gpt-4.1-mini ($0.40/$1.60): ctx 1047576, out 2048; tokens 30000, rounds 6.
		// tokens: min(6 × 1047576, 29999 + 1047576) = 1077575
		// a call: max(0.4190304, 1045528 × 0.4e-6 + 2048 × 1.6e-6 = 0.421488) = 0.421488
		// money: min(2.528928, 29999 × 1.6e-6 + 0.421488 = 0.4694864) → 0.469487
		{"support-reply.json", 1077575, 0.469487},
	} {
		t.Run(c.file, func(t *testing.T) {
			e, err := cost.Worst(compilePlan(t, filepath.Join("..", "examples", c.file)), cost.Embedded())
			if err != nil {
				t.Fatal(err)
			}
			if e.Tokens == nil || *e.Tokens != c.tokens {
				t.Errorf("tokens = %v, want %d (%v)", deref(e.Tokens), c.tokens, e.Unbounded)
			}
			if e.USD == nil || *e.USD != c.usd {
				t.Errorf("usd = %v, want %v", deref(e.USD), c.usd)
			}
		})
	}
}

// TestEstimateCacheOff: an agent that turns prompt caching off writes
// nothing to the cache, and its input is priced at the input price:
// issue-triage's call is max(3, 195904 × 15e-6 + 4096 × 75e-6 = 3.24576),
// and its run min(32.4576, 59999 × 75e-6 + 3.24576 = 7.745685).
func TestEstimateCacheOff(t *testing.T) {
	p := compilePlan(t, filepath.Join("..", "examples", "issue-triage.cue"))
	on, err := cost.Worst(p, cost.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(on.Assumptions, func(a string) bool { return strings.Contains(a, "written to the prompt cache (model.cache)") }) {
		t.Errorf("with caching on, no assumption says input may be written to the cache: %q", on.Assumptions)
	}
	off := false
	p.Agent.Model.Cache = &off
	e, err := cost.Worst(p, cost.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if e.USD == nil || *e.USD != 7.745685 {
		t.Errorf("usd = %v, want 7.745685", deref(e.USD))
	}
	for _, a := range e.Assumptions {
		if strings.Contains(a, "prompt cache") {
			t.Errorf("assumption %q speaks of the cache", a)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "unbounded"
	}
	return *p
}

func compilePlan(t *testing.T, path string) *plan.Plan {
	t.Helper()
	comp := compile.New(manifest.NewLoader())
	insts, err := comp.Loader().Load([]string{path})
	if err != nil || len(insts) != 1 {
		t.Fatalf("loading %s: %v (%d agents)", path, err, len(insts))
	}
	p, ds, err := comp.Build(insts[0])
	if err != nil || p == nil {
		t.Fatalf("compiling %s: %v %v", path, err, ds)
	}
	return p
}

// TestRunWithinEstimate: with the test model answering in place of the
// plan's and random budgets, a run, called agents included, never spends
// more tokens than its estimate, nor costs more at the plan's prices. The
// table gives the model a small context window, so that the budgets, not
// the window, decide; the test model's calls must fit in it, which the
// test checks first.
func TestRunWithinEstimate(t *testing.T) {
	const window = 400
	table, err := cost.Parse("prices.json", []byte(fmt.Sprintf(`{"as_of": "2025-01-01", "models": {"openai": {
		"small": {"input": 1, "cached_input": 0.5, "output": 4, "context_window": %d, "max_output": 500},
		"big": {"input": 3, "output": 15, "context_window": %d, "max_output": 500}}}}`, window, window)), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(19, 1))
	schema := json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]},"why":{"type":"string"}},"required":["label","why"]}`)
	budgets := func() plan.Budgets {
		b := plan.Budgets{Rounds: 1 + rng.IntN(4), AnswerTurns: 1 + rng.IntN(3)}
		if rng.IntN(4) > 0 {
			b.Tokens = 1 + rng.IntN(600)
		}
		tools := rng.IntN(4)
		b.Tools = &tools
		return b
	}
	model := func() string { return []string{"small", "big"}[rng.IntN(2)] }
	bounded, overshot, overridden, pooled := 0, 0, 0, 0
	for i := range 150 {
		callee := &plan.Plan{Agent: plan.Agent{
			Name: "labeller", Model: plan.Model{Provider: "openai", Name: model()}, Instructions: "Label the issue.",
			Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
			Output:       &plan.Output{Name: "answer", Description: "The label.", Schema: schema, Mode: "tool", Retries: rng.IntN(3)},
			Budgets:      budgets(), Strategy: plan.Strategy{OnProse: "remind", Reminders: 1},
		}}
		if err := callee.Seal(); err != nil {
			t.Fatal(err)
		}
		caller := &plan.Plan{Agent: plan.Agent{
			Name: "triage", Model: plan.Model{Provider: "openai", Name: model()}, Instructions: "Triage the issue with your tools.",
			Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
				"label":  {Kind: "agent", Description: "Label an issue.", Path: "label.cue"},
				"label2": {Kind: "agent", Description: "Label it again.", Path: "label.cue"},
			}},
			Output:   &plan.Output{Name: "answer", Description: "The triage.", Schema: schema, Mode: "tool", Retries: rng.IntN(3)},
			Budgets:  budgets(),
			Strategy: plan.Strategy{OnProse: "remind", Reminders: 1},
		}, Callees: map[string]plan.Callee{
			"label":  {Path: "label.cue", Dir: ".", Contract: callee.Digests.Contract, Plan: callee},
			"label2": {Path: "label.cue", Dir: ".", Contract: callee.Digests.Contract, Plan: callee},
		}}
		if rng.IntN(3) == 0 {
			caller.Agent.Capabilities.Tools, caller.Callees = map[string]plan.Tool{}, nil // no called agents to add slack
		}
		if err := caller.Seal(); err != nil {
			t.Fatal(err)
		}
		// One case in two replaces the caller's budgets as agentc run's
		// flags do, one in four shares a pool.
		var o cost.Overrides
		var ro agentrt.Overrides
		if rng.IntN(2) == 0 {
			// Looser than the plan's, so that an estimate that kept the
			// plan's budgets would fall short of some runs.
			b := caller.Agent.Budgets
			rounds, tools := b.Rounds+1+rng.IntN(4), *b.Tools+1+rng.IntN(3)
			o.Rounds, o.Tools, ro.Rounds, ro.Tools = &rounds, &tools, &rounds, &tools
			if b.Tokens > 0 {
				tokens := b.Tokens + 100 + rng.IntN(600)
				o.Tokens, ro.Tokens = &tokens, &tokens
			}
		}
		var pool *agentrt.Pool
		if rng.IntN(4) == 0 {
			o.Pool = int64(50 + rng.IntN(400))
			pool = agentrt.NewPool(o.Pool)
		}
		est, err := cost.WorstWith(caller, table, o)
		if err != nil {
			t.Fatal(err)
		}
		if est.Tokens == nil || est.USD == nil {
			t.Fatalf("case %d: unbounded: %v", i, est.Why())
		}
		var rounds []agentrt.Usage
		events := func(e agentrt.Event) {
			if e.Type == agentrt.EventModelResponse {
				rounds = append(rounds, *e.Usage)
			}
		}
		modelFor := func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{Seed: int64(i)}, nil }
		tools, closeTools, err := tool.Build(context.Background(), caller, tool.Env{BaseDir: t.TempDir(), ModelFor: modelFor, Prices: table, Events: events, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		r, err := agentrt.New(caller, agentrt.Options{Model: testmodel.Model{Seed: int64(i)}, Tools: tools, Prices: table, Events: events, Budgets: ro, Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(context.Background(), nil)
		closeTools()
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range rounds {
			if u.Total() > window {
				t.Fatalf("case %d: a call of the test model took %d tokens, more than the window the test assumes", i, u.Total())
			}
		}
		if got := int64(rep.Usage.Total()); got > *est.Tokens {
			t.Errorf("case %d: the run spent %d tokens, more than its estimate %d (%s)\nbudgets %+v, callee %+v", i, got, *est.Tokens, est.Decides, caller.Agent.Budgets, callee.Agent.Budgets)
		}
		if rep.Cost.USD > *est.USD || rep.Cost.Estimated {
			t.Errorf("case %d: the run cost %+v, more than its estimate $%v", i, rep.Cost, *est.USD)
		}
		if pool != nil {
			pooled++
		}
		if o.Rounds != nil {
			overridden++
		}
		b := caller.Agent.Budgets.Tokens
		if o.Tokens != nil {
			b = *o.Tokens
		}
		if b > 0 && rep.Usage.Total() > b {
			overshot++ // a run that passed its token budget, which the estimate must allow
		}
		bounded++
	}
	if overshot == 0 {
		t.Errorf("no run of %d passed its token budget: the test does not try the bound's last call", bounded)
	}
	if overridden == 0 || pooled == 0 {
		t.Errorf("%d runs with budgets overridden, %d with a pool: want some of each", overridden, pooled)
	}
	t.Logf("%d runs, %d passed their token budget, %d with budgets overridden, %d with a pool", bounded, overshot, overridden, pooled)
}

// TestEstimateTierInWindow: where a tier starts less than the output
// bound below the context window, the dearest call is not all input nor
// all the output it may write, but just past the tier, every token at the
// tier's prices and the rest of the window output. gpt-5.4 (a window of
// 1050000, a tier above 271999, no max_output) without
// model.max_output_tokens: 272000 in at $5 and 778000 out at $22.50 is
// $18.865, where the estimate's two calls gave $5.25 and $15.75. Every
// tiered entry of the table, and a price file's, is checked over every
// split of its window (a grid, and each side of every tier).
func TestEstimateTierInWindow(t *testing.T) {
	own, err := cost.Parse("prices.json", []byte(`{"as_of": "2025-01-01", "models": {"openai": {
		"near": {"input": 1, "output": 4, "context_window": 1000, "max_output": 100, "tiers": [{"above": 950, "input": 2, "output": 8}]},
		"dear-in": {"input": 1, "output": 1, "context_window": 1000, "tiers": [{"above": 300, "input": 9, "output": 2}, {"above": 600, "input": 3, "output": 3}]}}}}`), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	table := cost.Embedded()
	table.Extend(own)
	one := 1
	checked := 0
	for _, entry := range table.Entries() {
		prov, model, _ := strings.Cut(entry, "/")
		pr, _ := table.Lookup(prov, model)
		if len(pr.Tiers) == 0 || pr.ContextWindow == 0 {
			continue
		}
		for _, cache := range []bool{true, false} {
			p := &plan.Plan{Agent: plan.Agent{Name: "a", Model: plan.Model{Provider: prov, Name: model, Cache: &cache}, Instructions: "x"}}
			e, err := cost.WorstWith(p, table, cost.Overrides{Rounds: &one})
			if err != nil {
				t.Fatal(err)
			}
			ctx, out := pr.ContextWindow, pr.MaxOutput
			if out == 0 || out > ctx {
				out = ctx
			}
			ins := []int{ctx - out, ctx}
			for i := 0; i <= 1000; i++ {
				ins = append(ins, ctx-out+int(int64(out)*int64(i)/1000))
			}
			for _, tr := range pr.Tiers {
				ins = append(ins, tr.Above, tr.Above+1)
			}
			for _, in := range ins {
				if in < ctx-out || in > ctx {
					continue
				}
				written := 0
				if cache {
					written = in
				}
				if want := pr.USD(in, 0, written, ctx-in); e.USD == nil || *e.USD < want-1e-9 {
					t.Errorf("%s (cache %v): the estimate of one call is $%v, below the $%v of %d in and %d out", entry, cache, deref(e.USD), want, in, ctx-in)
					break
				}
			}
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("%d tiered entries checked", checked)
	}
}
