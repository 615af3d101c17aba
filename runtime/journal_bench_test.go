package runtime_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

var benchHeader = journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "bench", OutputSuffix: "0badcafe", Agent: "label", Started: time.Unix(0, 0)}

// recordRun runs the benchmark agent for rounds rounds, journaled to a new
// file, and returns the file; opts and edits are benchRunnerWith's.
func recordRun(b testing.TB, rounds int, opts agentrt.Options, edits ...func(*plan.Agent)) string {
	file := filepath.Join(b.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	opts.Journal = &agentrt.Journal{Writer: w}
	r := benchRunnerWith(b, rounds, opts, edits...)
	if rep, _ := r.Run(context.Background(), nil); rep.Outcome != "ok" {
		b.Fatal(rep.Error)
	}
	return file
}

// replayRun replays the journal recordRun wrote, with the same opts and
// edits, and checks every effect was served.
func replayRun(b testing.TB, file string, rounds int, opts agentrt.Options, edits ...func(*plan.Agent)) {
	j, err := journal.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	if len(j.Entries) != 2*rounds-1 {
		b.Fatalf("%d effects recorded", len(j.Entries))
	}
	opts.Model, opts.Journal = refusingModel{}, &agentrt.Journal{Recorded: j, Replay: true}
	r := benchRunnerWith(b, rounds, opts, edits...)
	rep, _ := r.Run(context.Background(), nil)
	if rep.Outcome != "ok" || rep.Replayed != len(j.Entries) {
		b.Fatalf("%s %s, %d replayed", rep.Outcome, rep.Error, rep.Replayed)
	}
}

// BenchmarkRecordRound is the cost per round of journaling a run: each
// round is two effects (a model call and a tool call), each fingerprinted,
// appended and synced to disk. Compare with BenchmarkRound.
func BenchmarkRecordRound(b *testing.B) {
	const rounds = 100
	b.ReportAllocs()
	for b.Loop() {
		recordRun(b, rounds, agentrt.Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
}

// BenchmarkReplay1000 replays a journal of 1,000 effects (500 rounds of a
// model call and a tool call): reading it, and running the agent with every
// effect served from it.
func BenchmarkReplay1000(b *testing.B) { benchReplay(b, 500, agentrt.Options{}) }

// BenchmarkReplay10000 is BenchmarkReplay1000 for a run ten times as long.
func BenchmarkReplay10000(b *testing.B) { benchReplay(b, 5000, agentrt.Options{}) }

// BenchmarkReplay1000Tokens is BenchmarkReplay1000 with a token budget:
// every round counts its requests' input for the answer reserve (the
// test model's count, a quarter of the request's JSON).
func BenchmarkReplay1000Tokens(b *testing.B) { benchReplay(b, 500, tokenBudget) }

// BenchmarkReplay10000Tokens is BenchmarkReplay1000Tokens for a run ten
// times as long.
func BenchmarkReplay10000Tokens(b *testing.B) { benchReplay(b, 5000, tokenBudget) }

// BenchmarkReplay1000TokensGPT is BenchmarkReplay1000Tokens for an OpenAI
// model, whose requests are counted with its tokeniser.
func BenchmarkReplay1000TokensGPT(b *testing.B) { benchReplay(b, 500, tokenBudget, gpt) }

// tokenBudget gives the benchmark agent a token budget it never reaches.
var tokenBudget = agentrt.Options{Budgets: agentrt.Overrides{Tokens: new(math.MaxInt32)}}

// gpt makes the benchmark agent's model an OpenAI one.
func gpt(a *plan.Agent) { a.Model.Provider, a.Model.Name = "openai", "gpt-4o-mini" }

func benchReplay(b *testing.B, rounds int, opts agentrt.Options, edits ...func(*plan.Agent)) {
	file := recordRun(b, rounds, opts, edits...)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		replayRun(b, file, rounds, opts, edits...)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(2*rounds-1)), "ns/effect")
	if cpu := cpuTime() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

type refusingModel struct{}

func (refusingModel) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, context.Canceled
}
