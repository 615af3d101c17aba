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
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// TestExamples: the worst case of every example, by the embedded table,
// worked out by hand. A call of a model takes at most its context window
// (ctx); its price is the dearer of ctx all input, or out (the output
// bound) at the output price and ctx − out at the input price (with
// prompt caching on, the default, at the dearer of the input and cache
// write prices); a round is 5 calls (the attempts agentc run makes, each
// charged where the provider answered and lost it); the model calls
// spend at most min(rounds × round, tokens − 1 + round), the tokens
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
		// a round: 5 × 200000 = 1000000
		// tokens: min(50 × 1000000, 199999 + 1000000) = 1199999
		// a call: max(200000 × 1.1e-6 = 0.22, 184000 × 1.1e-6 + 16000 × 4.4e-6 = 0.2728) = 0.2728; a round 1.364
		// money: min(50 × 1.364, 199999 × 4.4e-6 + 1.364 = 2.2439956) → 2.243996
		{"code-reviewer.cue", 1199999, 2.243996},
		// gpt-4o: ctx 128000, out 8192, $2.50 in, $10 out; tokens 40000, rounds 50.
		// tokens: min(50 × 640000, 39999 + 5 × 128000) = 679999
		// a call: max(0.32, 119808 × 2.5e-6 + 8192 × 1e-5 = 0.38144) = 0.38144; a round 1.9072
		// money: min(95.36, 39999 × 1e-5 + 1.9072 = 2.30719)
		{"invoice-extractor.cue", 679999, 2.30719},
		// claude-sonnet-4 ($3/$15, cache writes $3.75), escalating to
		// claude-opus-4 ($15/$75, cache writes $18.75): ctx 200000, out
		// 4096; tokens 60000, rounds 10; caching on, so input at the
		// cache write price.
		// A round starts on one of the two: 5 × 200000 = 1000000.
		// tokens: min(10 × 1000000, 59999 + 1000000) = 1059999
		// a call, the dearer model: max(3.75, 195904 × 18.75e-6 + 4096 × 75e-6 = 3.9804) = 3.9804; a round 19.902
		// money: min(199.02, 59999 × 75e-6 + 19.902 = 24.401925)
		{"issue-triage.cue", 1059999, 24.401925},
		// claude-sonnet-4-5 ($3/$15, cache writes $3.75, caching on; its
		// tier, for a call of more than 200000 in, is past its window): ctx
		// 200000, out 8192; tokens 250000, rounds 20, tools 30, calling
		// code-reviewer (1199999 tokens, $2.243996).
		// tokens: min(20 × 1000000, 249999 + 1000000) + 30 × 1199999 = 1249999 + 35999970 = 37249969
		// a call: max(0.75, 191808 × 3.75e-6 + 8192 × 15e-6 = 0.84216) = 0.84216; a round 4.2108
		// money: min(84.216, 249999 × 15e-6 + 4.2108 = 7.960785) + 30 × 2.243996 = 75.280665
		{"release-notes.cue", 37249969, 75.280665},
		// gpt-4.1-mini ($0.40/$1.60): ctx 1047576, out 2048; tokens 30000, rounds 6.
		// tokens: min(6 × 5237880, 29999 + 5 × 1047576) = 5267879
		// a call: max(0.4190304, 1045528 × 0.4e-6 + 2048 × 1.6e-6 = 0.421488) = 0.421488; a round 2.10744
		// money: min(12.64464, 29999 × 1.6e-6 + 2.10744 = 2.1554384) → 2.155439
		{"support-reply.json", 5267879, 2.155439},
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
// a round five of them, and its run min(162.288, 59999 × 75e-6 + 16.2288
// = 20.728725).
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
	if e.USD == nil || *e.USD != 20.728725 {
		t.Errorf("usd = %v, want 20.728725", deref(e.USD))
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
				// A round's attempts are each such a call.
				if want := cost.Attempts * pr.USD(in, 0, written, ctx-in); e.USD == nil || *e.USD < want-1e-9 {
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

// lossy is a provider that answers every call only at its last attempt:
// the attempts before, lost answers of out bytes each, are billed, and
// the call's reply (or its failure, with class unavailable, where fail
// says) says how many there were, as agentc's providers do.
type lossy struct {
	m        agentrt.Model
	attempts int
	bytes    int64
	fail     bool
}

type unavailable struct{}

func (unavailable) Error() string        { return "503: overloaded" }
func (unavailable) FailureClass() string { return agentrt.FailureUnavailable }

func (l lossy) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if l.fail {
		return nil, agentrt.WithRetried(unavailable{}, agentrt.Retried{Attempts: l.attempts, Bytes: int64(l.attempts) * l.bytes})
	}
	resp, err := l.m.Complete(ctx, req)
	if err == nil {
		resp.Retried = agentrt.Retried{Attempts: l.attempts - 1, Bytes: int64(l.attempts-1) * l.bytes}
	}
	return resp, err
}

// TestRunWithinEstimateRetried: a run whose provider loses every attempt
// of a call but the last (cost.Attempts of them, as agentc run's retries
// make them), each billed and charged, spends within its estimate, on one
// model and on a fallback chain whose first model loses all its attempts.
// Each attempt fits in the model's window, as the estimate assumes. The
// estimate counted each call once: one round of the model with a window
// of 400 was bounded at 400 tokens, and the run spent over a thousand.
func TestRunWithinEstimateRetried(t *testing.T) {
	table, err := cost.Parse("prices.json", []byte(`{"as_of": "2025-01-01", "models": {"openai": {
		"small": {"input": 1, "output": 4, "context_window": 400, "max_output": 100},
		"other": {"input": 2, "output": 8, "context_window": 400, "max_output": 100}}}}`), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"]}`)
	for _, fallback := range []bool{false, true} {
		for _, tokens := range []int{0, 300} {
			p := &plan.Plan{Agent: plan.Agent{
				Name: "labeller", Model: plan.Model{Provider: "openai", Name: "small", MaxOutputTokens: 100}, Instructions: "Label the issue.",
				Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
				Output:       &plan.Output{Name: "answer", Description: "The label.", Schema: schema, Mode: "tool"},
				Budgets:      plan.Budgets{Rounds: 1, Tokens: tokens}, Strategy: plan.Strategy{OnProse: "remind", Reminders: 1},
			}}
			if fallback {
				p.Agent.Model.Fallback = &plan.Fallback{Models: []string{"openai:other"}}
				p.Fallbacks = []plan.FallbackModel{{Model: plan.Model{Provider: "openai", Name: "other", MaxOutputTokens: 100}}}
			}
			if err := p.Seal(); err != nil {
				t.Fatal(err)
			}
			est, err := cost.Worst(p, table)
			if err != nil {
				t.Fatal(err)
			}
			var calls []agentrt.Usage
			events := func(e agentrt.Event) {
				if e.Type == agentrt.EventModelResponse {
					calls = append(calls, *e.Usage)
				}
			}
			model := lossy{m: testmodel.Model{}, attempts: cost.Attempts, bytes: 400, fail: fallback}
			r, err := agentrt.New(p, agentrt.Options{Model: model, Prices: table, Events: events,
				FallbackModel: func(*plan.Plan) (agentrt.Model, error) {
					return lossy{m: testmodel.Model{}, attempts: cost.Attempts, bytes: 400}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := r.Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome != agentrt.OutcomeOK || len(rep.Fallbacks) != len(p.Fallbacks) || len(calls) != 1 {
				t.Fatalf("fallback %v: outcome %s (%s), %d fallbacks, %d replies", fallback, rep.Outcome, rep.Error, len(rep.Fallbacks), len(calls))
			}
			// Each attempt: the request's input, and at most 100 out.
			if in := calls[0].Input / cost.Attempts; in+100 > 400 {
				t.Fatalf("an attempt takes %d in and up to 100 out, more than the window the test assumes", in)
			}
			if got := int64(rep.Usage.Total()); got > *est.Tokens {
				t.Errorf("fallback %v, tokens %d: the run spent %d tokens, more than its estimate %d (%s)", fallback, tokens, got, *est.Tokens, est.Decides)
			}
			if rep.Cost.USD > *est.USD {
				t.Errorf("fallback %v, tokens %d: the run cost $%v, more than its estimate $%v", fallback, tokens, rep.Cost.USD, *est.USD)
			}
		}
	}
}

// TestAttempts: the estimate counts the attempts agentc run's providers
// make of a call.
func TestAttempts(t *testing.T) {
	if cost.Attempts != retry.Default.Attempts {
		t.Errorf("cost.Attempts is %d, the providers' retry.Default makes %d", cost.Attempts, retry.Default.Attempts)
	}
}
