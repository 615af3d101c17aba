package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/internal/replytest"
)

// BenchmarkRunPDF10MB runs an agent given a 10 MB PDF against a Chat
// Completions server that reads each request whole and answers: the file
// goes from the store to the request as base64 once. It reports the
// heap's high-water mark above the heap before the run (peak-heap-MiB,
// sampled every millisecond) and that mark over the file's size
// (peak-heap/file): the target is under 3.
func BenchmarkRunPDF10MB(b *testing.B) {
	data := make([]byte, 10<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	copy(data, "%PDF-1.7\n")
	benchRunFile(b, "application/pdf", data, int64(len(data)))
}

// BenchmarkRunText10MB is BenchmarkRunPDF10MB with a text file of 10 MB
// of '"', which a JSON string holds as two bytes (\"): the text goes from
// the store into the request as a JSON string's contents, escaped a chunk
// at a time, never whole.
func BenchmarkRunText10MB(b *testing.B) {
	data := bytes.Repeat([]byte(`"`), 10<<20)
	benchRunFile(b, "text/plain", data, 2*int64(len(data)))
}

// benchRunFile runs an agent given data, a file of media type mt, whose
// request's body is at least body bytes.
func benchRunFile(b *testing.B, mt string, data []byte, body int64) {
	size := len(data)
	store, err := filestore.Open(filepath.Join(b.TempDir(), "files"))
	if err != nil {
		b.Fatal(err)
	}
	blob, err := store.Put(bytesReader(data), int64(size))
	if err != nil || blob.MediaType != mt {
		b.Fatal(blob, err)
	}
	data = nil
	p := &plan.Plan{Agent: plan.Agent{
		Name: "reader", Model: plan.Model{Provider: "openai", Name: "gpt-4o-2024-08-06"}, Instructions: "Read it.",
		Prompt:       "The document: {{.doc}}",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type": "object", "required": ["doc"], "properties": {"doc": {"type": "string", "contentEncoding": "base64", "contentMediaType": "` + mt + `", "maxLength": 16000000}}}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output: &plan.Output{Name: "answer", Description: "The title.", Schema: json.RawMessage(`{"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}}`),
			Mode: "auto", Enforce: "local", Retries: 0},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 1},
	}}
	tool, err := plan.OutputToolName(&p.Agent)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if n < body {
			http.Error(w, fmt.Sprintf("a body of %d bytes holds no file of %d", n, size), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "t1", "type": "function", "function": {"name": %q, "arguments": "{\"title\": \"Invoice\"}"}}]}}], "usage": {"prompt_tokens": 3000, "completion_tokens": 10, "total_tokens": 3010}}`, tool)
	}))
	defer srv.Close()
	model, err := New(Config{APIKey: "sk-bench", BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Provider: "openai"})
	if err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"doc": {"digest": "` + blob.Digest + `", "file_name": "big"}}`)
	var peak uint64
	for b.Loop() {
		runtime.GC()
		base := heapNow()
		stop := replytest.WatchHeap()
		rep, err := r.Run(context.Background(), input)
		high := stop()
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			b.Fatalf("run: %v %+v", err, rep)
		}
		peak = max(peak, high-min(high, base))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak)/float64(size), "peak-heap/file")
}

type sliceReader struct{ b []byte }

func bytesReader(b []byte) io.Reader { return &sliceReader{b} }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapNow() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}
