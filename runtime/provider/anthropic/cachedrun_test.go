package anthropic

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// cachedRun runs p against f through this provider, recording to file
// when it is not empty.
func cachedRun(t testing.TB, p *plan.Plan, f *cacheFake, file string) *agentrt.Report {
	t.Helper()
	m, err := New(Config{APIKey: secretKey, BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	opts := agentrt.Options{Model: m, Provider: "anthropic", Tools: map[string]agentrt.Tool{"search": searchTool{}}}
	if file != "" {
		w, err := journal.Create(file, journal.Header{Plan: string(p.Digests.Plan), Run: "cached", Agent: p.Agent.Name, Started: time.Unix(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		opts.Journal = &agentrt.Journal{Writer: w}
	}
	r, err := agentrt.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("run: %s %s %s", rep.Outcome, rep.Bound, rep.Error)
	}
	return rep
}

// offline is a model that refuses every call: a replay must make none.
type offline struct{}

func (offline) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, errors.New("a replay called the model")
}

// TestCachedRun: a run of four rounds against a server that honours
// cache_control writes its prefix in the first round and reads it in
// each later one, writing only what the round added; the report counts
// the reads and writes and prices them at their rates; and the run's
// journal replays offline to the same report.
func TestCachedRun(t *testing.T) {
	p := triagePlan(t, true)
	f := newCacheFake(t, 3, `{"label": "bug"}`)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	rec := cachedRun(t, p, f, file)
	if len(rec.Rounds) != 4 {
		t.Fatalf("%d rounds, want 4", len(rec.Rounds))
	}
	for i, rr := range rec.Rounds {
		u := rr.Usage
		switch {
		case i == 0 && (u.Cached != 0 || u.CacheWrite == 0 || u.CacheWrite > u.Input):
			t.Errorf("round 1: %+v; want its prefix written, nothing read", u)
		case i > 0 && (u.Cached < rec.Rounds[i-1].Usage.Input-60 || u.CacheWrite == 0 || u.CacheWrite >= u.Cached):
			// A round reads what the round before sent (but for the
			// breakpoint's block, which moved) and writes what it adds.
			t.Errorf("round %d: %+v after %+v; want the conversation so far read and the new turn written", i+1, u, rec.Rounds[i-1].Usage)
		}
		if u.Cached+u.CacheWrite > u.Input {
			t.Errorf("round %d: reads and writes past the input: %+v", i+1, u)
		}
	}
	var sum agentrt.Usage
	for _, rr := range rec.Rounds {
		sum = sum.Add(rr.Usage)
	}
	if rec.Usage != sum || rec.Usage.Cached == 0 || rec.Usage.CacheWrite == 0 {
		t.Errorf("run usage %+v, rounds' %+v", rec.Usage, sum)
	}
	// Priced by the embedded table: claude-sonnet-4-5 at $3 input, $0.30
	// a cache read, $3.75 a cache write, $15 output per million.
	u := rec.Usage
	want := (float64(u.Input-u.Cached-u.CacheWrite)*3 + float64(u.Cached)*0.3 + float64(u.CacheWrite)*3.75 + float64(u.Output)*15) / 1e6
	if d := rec.Cost.USD - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost $%v, want $%v", rec.Cost.USD, want)
	}

	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: offline{}, Provider: "anthropic", Tools: map[string]agentrt.Tool{"search": searchTool{}},
		Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Divergence != nil || rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != string(rec.Answer) {
		t.Fatalf("replay: %s %s, divergence %+v", rep.Outcome, rep.Error, rep.Divergence)
	}
	if rep.Usage != rec.Usage || !reflect.DeepEqual(rep.Cost, rec.Cost) || rep.UsagePaid != (agentrt.Usage{}) {
		t.Errorf("replay usage %+v (paid %+v), cost %+v; recorded %+v, %+v", rep.Usage, rep.UsagePaid, rep.Cost, rec.Usage, rec.Cost)
	}
	for i := range rec.Rounds {
		if rep.Rounds[i].Usage != rec.Rounds[i].Usage {
			t.Errorf("round %d: replayed %+v, recorded %+v", i+1, rep.Rounds[i].Usage, rec.Rounds[i].Usage)
		}
	}
}

// TestUncachedRun: with model.cache false the same run asks for no
// caching, and every input token is billed as input.
func TestUncachedRun(t *testing.T) {
	rep := cachedRun(t, triagePlan(t, false), newCacheFake(t, 3, `{"label": "bug"}`), "")
	if u := rep.Usage; u.Cached != 0 || u.CacheWrite != 0 || u.Input == 0 {
		t.Errorf("usage %+v; want input and no cache", u)
	}
}

// BenchmarkCachedRun runs a triage agent for eight search rounds and its
// answer against a server that honours cache_control, with caching on
// and off, and reports per run: the input tokens sent, those billed as
// input, cache reads and cache writes, billed-input (the input in input
// tokens' worth at Anthropic's rates: a read at a tenth, a write at a
// quarter more) and the run's cost by the embedded table.
func BenchmarkCachedRun(b *testing.B) {
	for _, cache := range []bool{true, false} {
		name := "cache=off"
		if cache {
			name = "cache=on"
		}
		b.Run(name, func(b *testing.B) {
			p := triagePlan(b, cache)
			var u agentrt.Usage
			var usd float64
			for b.Loop() {
				// A new server each run: its cache starts empty, as a
				// run's first request finds it after five minutes.
				rep := cachedRun(b, p, newCacheFake(b, 8, `{"label": "bug"}`), "")
				u, usd = rep.Usage, rep.Cost.USD
			}
			uncached := u.Input - u.Cached - u.CacheWrite
			b.ReportMetric(float64(u.Input), "input-tokens/run")
			b.ReportMetric(float64(uncached), "uncached-input/run")
			b.ReportMetric(float64(u.Cached), "cache-reads/run")
			b.ReportMetric(float64(u.CacheWrite), "cache-writes/run")
			b.ReportMetric(float64(uncached)+0.1*float64(u.Cached)+1.25*float64(u.CacheWrite), "billed-input/run")
			b.ReportMetric(usd, "usd/run")
		})
	}
}
