package batch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/testmodel"
)

// echoPlan is an agent that answers with its input's prompt.
func echoPlan(tb testing.TB) *plan.Plan {
	tb.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "echo",
		Model:        plan.Model{Provider: "openai", Name: "m1", MaxOutputTokens: 50},
		Instructions: "Echo the item.",
		Prompt:       "item-{{.id}}",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output: &plan.Output{Name: "answer", Description: "The echo.", Mode: "tool", Enforce: "local",
			Schema: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]}`)},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// chatServer speaks the Chat Completions wire format: it answers a forced
// function call with {"echo": the user message}, after hold returns.
func chatServer(tb testing.TB, hold func(user string)) *openai.Model {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.ToolChoice.Function.Name == "" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		user := req.Messages[len(req.Messages)-1].Content
		if hold != nil {
			hold(user)
		}
		args, _ := json.Marshal(map[string]string{"echo": user})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls",
"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":%q}}]}}],
"usage":{"prompt_tokens":40,"completion_tokens":10,"total_tokens":50}}`, req.ToolChoice.Function.Name, args)
	}))
	tb.Cleanup(srv.Close)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func inputs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"id\":%d}\n", i)
	}
	return b.String()
}

// TestOrderAndReadAhead: while the first item's call is held, the batch
// reads at most four times Parallel items and runs the rest of them; the
// results come out in input order once it is answered.
func TestOrderAndReadAhead(t *testing.T) {
	release := make(chan struct{})
	m := chatServer(t, func(user string) {
		if user == "item-0" {
			<-release
		}
	})
	r, err := agentrt.New(echoPlan(t), agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	const parallel, n = 3, 100
	// Each run's end, with what the batch had read by then: the reader
	// may never be more than four times Parallel items ahead of item 0.
	type end struct{ index, read int }
	ended := make(chan end, n)
	var b *batch.Batch
	b = batch.New(r, batch.Options{Parallel: parallel, Events: func(i int, e agentrt.Event) {
		if e.Type == agentrt.EventRunEnd && e.Agent == "" {
			ended <- end{i, b.Progress().Read}
		}
	}})
	var got []batch.Result
	done := make(chan batch.Summary)
	go func() {
		sum, err := b.Run(context.Background(), strings.NewReader(inputs(n)), func(res batch.Result) error {
			got = append(got, res)
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	// Items 1 to 11 end while item 0 is held; the window holds no more.
	for range 4*parallel - 1 {
		e := <-ended
		if e.index == 0 || e.index >= 4*parallel {
			t.Fatalf("item %d ran while item 0 was held, with %d read ahead", e.index, 4*parallel)
		}
		if e.read > 4*parallel {
			t.Errorf("with item 0 held, %d items were read, more than %d", e.read, 4*parallel)
		}
	}
	// Every place in the window is held until item 0's result is out, so
	// this count cannot grow before close(release).
	if p := b.Progress(); p.Read != 4*parallel || p.InFlight < 1 {
		t.Errorf("with item 0 held: %+v; want %d read, item 0 in flight", p, 4*parallel)
	}
	close(release)
	sum := <-done
	if len(got) != n || sum.Done != n || sum.Failed != 0 {
		t.Fatalf("%d results, summary %+v", len(got), sum)
	}
	for i, res := range got {
		if res.Index != i || res.Line != i+1 || string(res.Answer) != fmt.Sprintf(`{"echo":"item-%d"}`, i) {
			t.Fatalf("result %d: %+v %s", i, res, res.Answer)
		}
	}
}

// TestCancel: a cancelled batch stops reading, and says it was
// interrupted; the results it gives are still in order.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	m := chatServer(t, func(string) {
		if calls.Add(1) == 5 {
			cancel()
		}
	})
	r, _ := agentrt.New(echoPlan(t), agentrt.Options{Model: m})
	last := -1
	sum, err := batch.New(r, batch.Options{Parallel: 2}).Run(ctx, strings.NewReader(inputs(1000)), func(res batch.Result) error {
		if res.Index <= last {
			t.Errorf("result %d after %d", res.Index, last)
		}
		last = res.Index
		return nil
	})
	if err != nil || !sum.Interrupted || sum.Read > 20 || calls.Load() > 20 {
		t.Errorf("err %v, summary %+v, %d calls", err, sum, calls.Load())
	}
}

// benchBatch runs a batch of n items on model m, b.N times, and reports
// the time and allocated bytes per item.
func benchBatch(b *testing.B, m agentrt.Model, parallel, n int) {
	r, err := agentrt.New(echoPlan(b), agentrt.Options{Model: m, Provider: "openai"})
	if err != nil {
		b.Fatal(err)
	}
	in := inputs(n)
	runtime.GC()
	var ms runtime.MemStats
	var peak uint64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sum, err := batch.New(r, batch.Options{Parallel: parallel}).Run(context.Background(), strings.NewReader(in), func(res batch.Result) error {
			if res.Index%50 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			return nil
		})
		if err != nil || sum.Done != n || sum.Failed != 0 {
			b.Fatalf("err %v, summary %+v", err, sum)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
	b.ReportMetric(float64(peak), "peak-heap-B")
}

// BenchmarkRunLoop is the baseline of BenchmarkBatchOverhead: the same
// runs one after another, with no batch.
func BenchmarkRunLoop(b *testing.B) {
	r, err := agentrt.New(echoPlan(b), agentrt.Options{Model: testmodel.Model{}, Provider: "openai"})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	lines := strings.Split(strings.TrimSpace(inputs(n)), "\n")
	b.ReportAllocs()
	for b.Loop() {
		for _, line := range lines {
			if rep, err := r.Run(context.Background(), json.RawMessage(line)); err != nil || rep.Outcome != "ok" {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
}

// BenchmarkBatch is batch throughput against a zero-latency server
// speaking the Chat Completions wire format (the HTTP client, the request
// and response JSON included), at 1, 8 and 64 runs at once.
func BenchmarkBatch(b *testing.B) {
	m := chatServer(b, nil)
	for _, parallel := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) { benchBatch(b, m, parallel, 1000) })
	}
}

// BenchmarkBatchOverhead isolates the batch's own cost per item: the test
// model answers in process, so what is left is the run (validation,
// prompt, the output tool) and the batch (reading, scheduling, ordering).
// B/op divided by the items is the memory per item, flat from 100 to
// 1,000 items.
func BenchmarkBatchOverhead(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, parallel := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("items=%d/parallel=%d", n, parallel), func(b *testing.B) { benchBatch(b, testmodel.Model{}, parallel, n) })
		}
	}
}

// TestItemsRunnerFor: item lines run, many at once, against the runner
// of the model each names, or the batch's own; each result names the
// model that ran and repeats the line's id, in input order.
func TestItemsRunnerFor(t *testing.T) {
	m := chatServer(t, nil)
	own, err := agentrt.New(echoPlan(t), agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	p2 := echoPlan(t)
	p2.Agent.Model.Name = "m2"
	if err := p2.Seal(); err != nil {
		t.Fatal(err)
	}
	other, err := agentrt.New(p2, agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	asked := map[string]int{}
	b := batch.New(own, batch.Options{Parallel: 8, Items: true, RunnerFor: func(model string) (*agentrt.Runner, error) {
		mu.Lock()
		defer mu.Unlock()
		asked[model]++
		if model == "openai:m2" {
			return other, nil
		}
		return nil, fmt.Errorf("no such model")
	}})
	var in strings.Builder
	for i := range 40 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"input":{"id":%d},"id":"i%d"}`+"\n", i, i)
		case 1:
			fmt.Fprintf(&in, `{"id":"i%d","model":"openai:m2","input":{"id":%d}}`+"\n", i, i)
		default:
			fmt.Fprintf(&in, `{"input":{"id":%d},"model":"nope"}`+"\n", i)
		}
	}
	var got []batch.Result
	if _, err := b.Run(context.Background(), strings.NewReader(in.String()), func(r batch.Result) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Fatalf("%d results for 40 items", len(got))
	}
	for i, r := range got {
		wantModel, wantID, ok := "openai:m1", fmt.Sprintf("i%d", i), true
		switch i % 3 {
		case 1:
			wantModel = "openai:m2"
		case 2:
			wantModel, wantID, ok = "", "", false
		}
		if r.Index != i || r.Model != wantModel || r.ID != wantID || (r.Outcome == agentrt.OutcomeOK) != ok {
			t.Errorf("item %d: index %d, model %q, id %q, outcome %s (%s); want model %q, id %q", i, r.Index, r.Model, r.ID, r.Outcome, r.Error, wantModel, wantID)
		}
		if ok && string(r.Answer) != fmt.Sprintf(`{"echo":"item-%d"}`, i) {
			t.Errorf("item %d: answer %s", i, r.Answer)
		}
		if !ok && r.Error != fmt.Sprintf(`line %d: no such model`, i+1) {
			t.Errorf("item %d: error %q", i, r.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["openai:m2"] != 13 || asked["nope"] != 13 {
		t.Errorf("RunnerFor asked %v", asked)
	}
}

// endless is a reader of zeros that never ends: a sparse file's holes.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// TestCount: Count finds the items Scan finds, lines longer than its
// buffer and ends split across its reads included, and reads an input
// with no line end no further than Scan would, where it counts the line
// the batch ends on.
func TestCount(t *testing.T) {
	long := strings.Repeat(" ", 100<<10)
	for _, c := range []struct {
		in      string
		maxLine int
	}{
		{"", 0},
		{"\n\n \r\n", 0},
		{"{}\n\n{}", 0},
		{"{}\r\n" + long + "\r\n{}\n", 0},
		{long + "\r\n", 64},
		{long[:64<<10-1] + "\r\n", 64<<10 - 1},
		{long[:64<<10-1] + "\r\n", 64<<10 - 2},
		{long[:64<<10] + "\r\n{}", 64 << 10},
		{long[:64<<10+1] + "\r\n", 64 << 10},
	} {
		var items int64
		if err := batch.Scan(strings.NewReader(c.in), c.maxLine, func(batch.Item) error { items++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n := batch.Count(strings.NewReader(c.in), c.maxLine); n != items {
			t.Errorf("Count(%.20q…, %d) = %d, Scan found %d", c.in, c.maxLine, n, items)
		}
	}
	zeros := &endless{}
	if n := batch.Count(io.MultiReader(strings.NewReader("{}\n"), zeros), 64); n != 2 || zeros.n > batch.MaxSkip+128<<10 {
		t.Errorf("Count of a line without end: %d items, %d bytes of it read", n, zeros.n)
	}
}

// TestCancelWhileReading: a batch whose input stalls (a pipe its writer
// holds open and writes no more to) ends when its context does, rather
// than when the writer at last writes or closes: a stop signal must stop
// a batch whatever its input is doing.
func TestCancelWhileReading(t *testing.T) {
	r, err := agentrt.New(echoPlan(t), agentrt.Options{Model: &testmodel.Model{}, Provider: "test"})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(inputs(2))) // and no more, and no end
	ctx, cancel := context.WithCancel(context.Background())
	type ended struct {
		sum batch.Summary
		err error
		n   int
	}
	done := make(chan ended, 1)
	go func() {
		n := 0
		sum, err := batch.New(r, batch.Options{Parallel: 2}).Run(ctx, pr, func(batch.Result) error {
			if n++; n == 2 {
				cancel() // both items are out; the reader waits on the pipe
			}
			return nil
		})
		done <- ended{sum, err, n}
	}()
	select {
	case e := <-done:
		if e.err != nil || !e.sum.Interrupted || e.n != 2 {
			t.Errorf("err %v, summary %+v, %d results", e.err, e.sum, e.n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the batch did not end when its context did: it waits on a read of its input")
	}
}
