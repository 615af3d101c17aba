package runtime_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

var benchHeader = journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "bench", OutputSuffix: "0badcafe", Agent: "label", Started: time.Unix(0, 0)}

// recordRun runs the benchmark agent for rounds rounds, journaled to a new
// file, and returns the file.
func recordRun(b *testing.B, rounds int) string {
	file := filepath.Join(b.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	r := benchRunnerWith(b, rounds, agentrt.Options{Journal: &agentrt.Journal{Writer: w}})
	if rep, _ := r.Run(context.Background(), nil); rep.Outcome != "ok" {
		b.Fatal(rep.Error)
	}
	return file
}

// BenchmarkRecordRound is the cost per round of journaling a run: each
// round is two effects (a model call and a tool call), each fingerprinted,
// appended and synced to disk. Compare with BenchmarkRound.
func BenchmarkRecordRound(b *testing.B) {
	const rounds = 100
	b.ReportAllocs()
	for b.Loop() {
		recordRun(b, rounds)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
}

// BenchmarkReplay1000 replays a journal of 1,000 effects (500 rounds of a
// model call and a tool call): reading it, and running the agent with every
// effect served from it.
func BenchmarkReplay1000(b *testing.B) { benchReplay(b, 500) }

// BenchmarkReplay10000 is BenchmarkReplay1000 for a run ten times as long.
func BenchmarkReplay10000(b *testing.B) { benchReplay(b, 5000) }

func benchReplay(b *testing.B, rounds int) {
	file := recordRun(b, rounds)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		j, err := journal.Open(file)
		if err != nil {
			b.Fatal(err)
		}
		if len(j.Entries) != 2*rounds-1 {
			b.Fatalf("%d effects recorded", len(j.Entries))
		}
		r := benchRunnerWith(b, rounds, agentrt.Options{Model: refusingModel{}, Journal: &agentrt.Journal{Recorded: j, Replay: true}})
		rep, _ := r.Run(context.Background(), nil)
		if rep.Outcome != "ok" || rep.Replayed != len(j.Entries) {
			b.Fatalf("%s %s, %d replayed", rep.Outcome, rep.Error, rep.Replayed)
		}
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
