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
			file := longJournal(b, rounds)
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

// longJournal writes a journal of a run of n rounds, each a model call
// that asks for a tool and the tool's call.
func longJournal(tb testing.TB, rounds int) string {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "long", OutputSuffix: "0badcafe", Agent: "long", Started: time.Unix(0, 0)})
	if err != nil {
		tb.Fatal(err)
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
				tb.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return file
}

// TestMaxEffects: a journal of more effects than a page shows is refused,
// saying so, rather than built: each row costs about 6 KB however small
// its entry, and a planted journal of a million one-line entries took 8 GB.
func TestMaxEffects(t *testing.T) {
	defer func(n int) { MaxEffects = n }(MaxEffects)
	MaxEffects = 10
	for rounds, want := range map[int]string{5: "", 6: "the journal holds 12 effects, more than the 10 a page shows"} {
		j, err := journal.Open(longJournal(t, rounds))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(j, nil, nil, nil)
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("%d rounds: %v, want %q", rounds, err, want)
		}
	}
}
