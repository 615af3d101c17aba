package runtime_test

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestRequestsAskForCache: every request of a run asks for prompt caching
// under the plan digest's hex digits, unless the plan turns caching off.
func TestRequestsAskForCache(t *testing.T) {
	p := agent(t, withTool)
	r := runWith(t, p, agentrt.Options{}, call(100, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 100))
	key := strings.TrimPrefix(string(p.Digests.Plan), digest.Prefix)
	if len(key) != 64 {
		t.Fatalf("key %q: want 64 hex digits", key)
	}
	if len(r.model.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(r.model.reqs))
	}
	for i, req := range r.model.reqs {
		if !req.Cache || req.CacheKey != key {
			t.Errorf("request %d: cache %v, key %q; want true, %q", i+1, req.Cache, req.CacheKey, key)
		}
	}

	off := false
	p = agent(t, func(a *plan.Agent) { withTool(a); a.Model.Cache = &off })
	r = runWith(t, p, agentrt.Options{}, call(100, "search", `{"q":"x"}`), answer(`{"label":"bug"}`, 100))
	for i, req := range r.model.reqs {
		if req.Cache || req.CacheKey != "" {
			t.Errorf("model.cache false: request %d: cache %v, key %q; want neither", i+1, req.Cache, req.CacheKey)
		}
	}
}

// cachedTable prices an Anthropic model whose cache reads cost a tenth of
// input and writes a quarter more.
func cachedTable(t *testing.T) *cost.Table {
	t.Helper()
	tab, err := cost.Parse("p.json", []byte(`{"as_of": "2025-01-01", "models": {"anthropic": {
		"claude-sonnet-4-5": {"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15}}}}`), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// cachedTurns are a run's two rounds as a provider that caches reports
// them: the first writes its prefix to the cache, the second reads it and
// writes what it adds.
func cachedTurns() []turn {
	return []turn{
		func(req *agentrt.Request) (*agentrt.Response, error) {
			resp, err := call(0, "search", `{"q":"x"}`)(req)
			resp.Usage = agentrt.Usage{Input: 400, CacheWrite: 380, Output: 40}
			return resp, err
		},
		func(req *agentrt.Request) (*agentrt.Response, error) {
			resp, err := answer(`{"label":"bug"}`, 0)(req)
			resp.Usage = agentrt.Usage{Input: 500, Cached: 380, CacheWrite: 100, Output: 20}
			return resp, err
		},
	}
}

// TestCachedUsageReportedAndPriced: cache reads and writes the provider
// reports are the rounds' and the run's usage, and each is priced at its
// own rate.
func TestCachedUsageReportedAndPriced(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "anthropic", Name: "claude-sonnet-4-5-20250929"}
	})
	r := runWith(t, p, agentrt.Options{Provider: "anthropic", Prices: cachedTable(t)}, cachedTurns()...)
	expect(t, r.rep, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)
	want := []agentrt.Usage{{Input: 400, CacheWrite: 380, Output: 40}, {Input: 500, Cached: 380, CacheWrite: 100, Output: 20}}
	// Round 1: 20 × $3 + 380 × $3.75 + 40 × $15 per million = $0.002085.
	// Round 2: 20 × $3 + 380 × $0.30 + 100 × $3.75 + 20 × $15 per million = $0.000849.
	usd := []float64{0.002085, 0.000849}
	for i, rr := range r.rep.Rounds {
		if rr.Usage != want[i] || math.Abs(rr.Cost.USD-usd[i]) > 1e-12 || rr.UsageEstimated {
			t.Errorf("round %d: usage %+v, cost %+v; want %+v, $%v", i+1, rr.Usage, rr.Cost, want[i], usd[i])
		}
	}
	if u := r.rep.Usage; u != (agentrt.Usage{Input: 900, Cached: 380, CacheWrite: 480, Output: 60}) {
		t.Errorf("run usage %+v", u)
	}
	if c := r.rep.Cost.USD; math.Abs(c-0.002934) > 1e-12 {
		t.Errorf("run cost $%v, want $0.002934", c)
	}
}

// TestCachedRunReplays: a run whose provider read and wrote its cache
// replays from its journal offline with the same usage and cost, and a
// replay with caching turned off serves the same calls: caching is not
// part of what identifies a request.
func TestCachedRunReplays(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "anthropic", Name: "claude-sonnet-4-5-20250929"}
	})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	opts := agentrt.Options{Provider: "anthropic", Prices: cachedTable(t), Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}}
	rec := journaled(t, p, file, false, &scripted{turns: cachedTurns()}, opts)
	if rec.Outcome != agentrt.OutcomeOK {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	rep := replay(t, p, file, opts)
	if rep.Divergence != nil || rep.Replayed != 3 || string(rep.Answer) != string(rec.Answer) {
		t.Fatalf("replay: %s %s, divergence %+v, %d replayed", rep.Outcome, rep.Error, rep.Divergence, rep.Replayed)
	}
	if rep.Usage != rec.Usage || !reflect.DeepEqual(rep.Cost, rec.Cost) || rep.UsageReplayed != rec.Usage || rep.UsagePaid != (agentrt.Usage{}) {
		t.Errorf("replay usage %+v (replayed %+v, paid %+v), cost %+v; recorded %+v, %+v", rep.Usage, rep.UsageReplayed, rep.UsagePaid, rep.Cost, rec.Usage, rec.Cost)
	}
	for i := range rec.Rounds {
		if rep.Rounds[i].Usage != rec.Rounds[i].Usage || !reflect.DeepEqual(rep.Rounds[i].Cost, rec.Rounds[i].Cost) {
			t.Errorf("round %d: replayed %+v %+v, recorded %+v %+v", i+1, rep.Rounds[i].Usage, rep.Rounds[i].Cost, rec.Rounds[i].Usage, rec.Rounds[i].Cost)
		}
	}

	off := false
	q := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "anthropic", Name: "claude-sonnet-4-5-20250929", Cache: &off}
	})
	if rep := replay(t, q, file, opts); rep.Divergence != nil || rep.Usage != rec.Usage {
		t.Errorf("replay with caching off: divergence %+v, usage %+v", rep.Divergence, rep.Usage)
	}
}
