package runview

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/runtime/journal"
)

// BenchmarkBuildLong builds the page of a run of n rounds, each a model
// call that asks for a tool and the tool's call: the page costs time in
// the journal's entries, not in entries times rounds (a planted journal
// of a million entries fits the reader's bound).
func BenchmarkBuildLong(b *testing.B) {
	for _, rounds := range []int{1000, 4000, 16000} {
		b.Run(fmt.Sprint(rounds), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "run.jsonl")
			w, err := journal.Create(file, journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "long", OutputSuffix: "0badcafe", Agent: "long", Started: time.Unix(0, 0)})
			if err != nil {
				b.Fatal(err)
			}
			for r := 1; r <= rounds; r++ {
				call := fmt.Sprintf(`{"id":"c%d","name":"lookup","arguments":{"n":%d}}`, r, r)
				entries := []journal.Entry{
					{Key: journal.Key{Round: r}, Kind: journal.KindModel,
						Request:  []byte(fmt.Sprintf(`{"provider":"openai","model":"m","messages":{"after":%d,"new":[{"role":"tool","tool_call_id":"c%d","content":"ok"}]}}`, 2*r, r-1)),
						Response: []byte(fmt.Sprintf(`{"message":{"role":"assistant","tool_calls":[%s]},"usage":{"input":10,"output":5}}`, call))},
					{Key: journal.Key{Round: r, Ordinal: 1}, Kind: journal.KindTool,
						Request:  []byte(fmt.Sprintf(`{"tool":"lookup","call":%s}`, call)),
						Response: []byte(`{"content":"ok"}`)},
				}
				for _, e := range entries {
					e.Started = time.Unix(int64(r), 0)
					if err := w.Append(e); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				j, err := journal.Open(file)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Build(j, nil, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*rounds), "ns/entry")
		})
	}
}
