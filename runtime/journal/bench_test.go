package journal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

// conversation builds the model requests of a run the way a runtime sends
// them: a system prompt, tool specs and an output schema that never
// change, and a conversation that grows by one message each call.
type conversation struct {
	id   int
	msgs []string
}

const benchSystem = `You label issues of an open source project. Read the issue, search the tracker for duplicates, ` +
	`fetch the pages it links to when they help, and answer with a label and a one-line title. Never invent a duplicate.`

func (c *conversation) add() {
	i := len(c.msgs)
	var m string
	switch i % 3 {
	case 0:
		m = fmt.Sprintf(`{"role":"user","content":%q}`, fmt.Sprintf("Run %d, turn %d. %s", c.id, i, strings.Repeat("The app crashes on start when the config file is empty. ", 8)))
	case 1:
		m = fmt.Sprintf(`{"role":"assistant","tool_calls":[{"id":"call_%d_%d","name":"search","arguments":{"q":"crash on start empty config %d"}}]}`, c.id, i, i)
	default:
		m = fmt.Sprintf(`{"role":"tool","tool_call_id":"call_%d_%d","content":%q}`, c.id, i-1, strings.Repeat(fmt.Sprintf(`{"id":%d,"title":"Crash on start","state":"open"},`, 1000+i), 12))
	}
	c.msgs = append(c.msgs, m)
}

func (c *conversation) request() json.RawMessage {
	return json.RawMessage(`{"provider":"openai","model":"gpt-a","system":"` + benchSystem + `","messages":[` + strings.Join(c.msgs, ",") +
		`],"tools":` + testTools + `,"tool_choice":"required","output":` + testOutput + `,"sampling":{"temperature":0,"max_tokens":1024}}`)
}

// benchEffects calls f with n effects: model calls whose conversation
// starts at 10 messages and grows by one each call, starting over with a
// new conversation after 10 calls, and, when withTools is set, a tool
// call after each model call.
func benchEffects(b *testing.B, n int, withTools bool, f func(journal.Entry)) {
	var c *conversation
	for i := 0; i < n; {
		model := i
		if withTools {
			model = i / 2
		}
		if model%10 == 0 && (c == nil || c.id != model/10) {
			c = &conversation{id: model / 10}
			for range 10 {
				c.add()
			}
		}
		// No fingerprint: Append computes it from the canonical form it
		// makes anyway.
		f(journal.Entry{Key: journal.Key{Round: model}, Kind: journal.KindModel, Request: c.request(),
			Response:   json.RawMessage(`{"message":{"role":"assistant","tool_calls":[{"id":"c1","name":"search","arguments":{"q":"crash"}}]}}`),
			Usage:      json.RawMessage(`{"input_tokens":3200,"output_tokens":31}`),
			Started:    testStart,
			DurationMS: 850})
		c.add()
		i++
		if withTools && i < n {
			f(toolEntry(b, journal.Key{Round: model, Ordinal: 1}, fmt.Sprintf(`{"q":"crash on start empty config %d"}`, model)))
			i++
		}
	}
}

func benchAppend(b *testing.B, sync bool) {
	path := filepath.Join(b.TempDir(), "j")
	var w *journal.Writer
	var err error
	if sync {
		w, err = journal.Create(path, testHeader())
	} else {
		w, err = journal.CreateNoSync(path, testHeader())
	}
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	b.ResetTimer()
	benchEffects(b, b.N, false, func(e journal.Entry) {
		if err := w.Append(e); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkAppend is the cost of recording one model call: a request of
// 10 to 19 messages (about 8 to 15 KiB), its new message written as a
// value line, the entry line, and an fsync.
func BenchmarkAppend(b *testing.B) { benchAppend(b, true) }

// BenchmarkAppendNoSync is BenchmarkAppend without the fsync: the CPU
// cost of recording.
func BenchmarkAppendNoSync(b *testing.B) { benchAppend(b, false) }

// BenchmarkRead1000 reads a journal of 1,000 effects, model and tool calls
// alternating, the requests as in BenchmarkAppend.
func BenchmarkRead1000(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j")
	w, err := journal.CreateNoSync(path, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	benchEffects(b, 1000, true, func(e journal.Entry) {
		if err := w.Append(e); err != nil {
			b.Fatal(err)
		}
	})
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	data := readFile(b, path)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		j, err := journal.Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if len(j.Entries) != 1000 {
			b.Fatalf("%d entries", len(j.Entries))
		}
	}
}

// BenchmarkReadLongRun reads the journal of a long run as the runtime
// records it: each model call stores its one new message and sends the
// same 128 KiB of tool specs (an MCP server's worth), stored once, so the
// requests name far more than the file holds (250 MiB once expanded, for
// 2,000 calls). held-MiB is the heap the journal read holds.
func BenchmarkReadLongRun(b *testing.B) {
	for _, rounds := range []int{1000, 2000} {
		b.Run(strconv.Itoa(rounds), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "j")
			w, err := journal.CreateNoSync(path, testHeader())
			if err != nil {
				b.Fatal(err)
			}
			tools := `[{"name":"search","description":"` + strings.Repeat("Search the tracker. ", 128<<10/20) + `"}]`
			c := &conversation{}
			for i := range rounds {
				c.add()
				req := `{"provider":"openai","model":"gpt-a","messages":{"after":` + strconv.Itoa(i) + `,"new":[` + c.msgs[i] + `]},"tools":` + tools + `}`
				e := journal.Entry{Key: journal.Key{Round: i + 1}, Kind: journal.KindModel, Request: json.RawMessage(req),
					Response: json.RawMessage(`{"message":{"role":"assistant","content":"ok"}}`), Started: testStart, DurationMS: 850}
				if err := w.Append(e); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			data := readFile(b, path)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var held uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				j, err := journal.Read(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				held = max(held, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
				runtime.KeepAlive(j)
			}
			b.ReportMetric(float64(held)/(1<<20), "held-MiB")
		})
	}
}
