package google

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
)

const streamPath = "/v1beta/models/gemini-test:streamGenerateContent"

// sse answers as streamGenerateContent does with alt=sse: a data line a
// GenerateContentResponse chunk.
func sse(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") != "sse" {
			http.Error(w, "want alt=sse", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\r\n\r\n", c)
			w.(http.Flusher).Flush()
		}
	}
}

var geminiChunks = []string{
	`{"candidates":[{"content":{"parts":[{"text":"Let me "}],"role":"model"},"index":0}],"modelVersion":"gemini-test-001","responseId":"resp-s"}`,
	`{"candidates":[{"content":{"parts":[{"text":"answer."}],"role":"model"},"index":0}],"modelVersion":"gemini-test-001","responseId":"resp-s"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"answer","args":{"text":"Paris."}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":9,"totalTokenCount":21},"modelVersion":"gemini-test-001","responseId":"resp-s"}`,
}

// TestStream: a request whose caller asks for the reply as it comes goes
// to streamGenerateContent; the text reaches the caller in its pieces,
// and the output tool's arguments when its call comes; the reply is the
// whole response, as a plain request's.
func TestStream(t *testing.T) {
	f := newFakeAt(t, streamPath, sse(geminiChunks...))
	m := newModel(t, f, nil)
	req := toolRequest()
	var text, answer strings.Builder
	pieces := 0
	req.Stream = func(d agentrt.Delta) {
		pieces++
		text.WriteString(d.Text)
		answer.WriteString(d.Answer)
	}
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if pieces != 3 || text.String() != "Let me answer." || answer.String() != `{"text":"Paris."}` {
		t.Errorf("%d pieces: text %q, answer %q", pieces, text.String(), answer.String())
	}
	if resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"text":"Paris."}` {
		t.Errorf("message %+v", resp.Message)
	}
	if resp.Usage.Input != 12 || resp.Usage.Output != 9 || resp.Model != "gemini-test-001" {
		t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
	}
}

// TestStreamCut: a stream that ends before a finish reason is tried
// again, and the caller hears the restart.
func TestStreamCut(t *testing.T) {
	a := &attempts{}
	f := newFakeAt(t, streamPath, sse(geminiChunks[:2]...), sse(geminiChunks...))
	m := newModel(t, f, a)
	req := toolRequest()
	restarts := 0
	req.Stream = func(d agentrt.Delta) {
		if d.Restart {
			restarts++
		}
	}
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if restarts != 1 || f.requests() != 2 || resp.Message.Content != "Let me answer." {
		t.Errorf("%d restarts, %d requests, message %+v", restarts, f.requests(), resp.Message)
	}
}

// TestStreamEndlessCutInLine: a stream that never ends is cut at the 32
// MiB a response may hold, and the call fails so, after one request, when
// the cut falls inside a data line: the SDK's scanner hands on the
// partial line first, whose JSON error (a body cut short, retried) hid
// the limit, and the stream was read five times over.
func TestStreamEndlessCutInLine(t *testing.T) {
	line := "data: {\"x\":\"" + strings.Repeat("p", 1000) + "\"}\n\n" // 32 MiB falls 16 bytes into a line
	lines := strings.Repeat(line, 64)
	f := newFakeAt(t, streamPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, lines); err != nil {
				return
			}
		}
	})
	req := request()
	req.Stream = func(agentrt.Delta) {}
	_, err := newModel(t, f, nil).Complete(t.Context(), req)
	if err == nil || err.Error() != "google: the response is larger than the 32 MiB agentc accepts from a provider" {
		t.Fatalf("err = %v, want the response too large", err)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// TestStreamStallIsStream: a stream's progress reaches the stall watch
// through the request the SDK makes: a stream that sent a part of the
// reply and then keeps still is given up as a stream, waited on for its
// next part, not as a whole body to come at a least rate (which would cut
// a long stream that keeps making progress).
func TestStreamStallIsStream(t *testing.T) {
	f := newFakeAt(t, streamPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", geminiChunks[0])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	a := &attempts{}
	p := a.policy()
	p.Attempts = 1
	m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: p, Stall: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req := toolRequest()
	req.Stream = func(agentrt.Delta) {}
	_, err = m.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "the stream sent keep-alives at most") {
		t.Errorf("a still stream: %v", err)
	}
}

// TestStreamComments: SSE comment lines, which a proxy may send as
// keep-alives while the model thinks, are passed over as the SSE format
// says: the SDK took each for a chunk that was not JSON, and the call
// failed at the first, for good.
func TestStreamComments(t *testing.T) {
	f := newFakeAt(t, streamPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\r\n\r\n:\n\n")
		for _, c := range geminiChunks {
			fmt.Fprintf(w, ":ping\ndata: %s\r\n: and another\r\n\r\n", c)
			w.(http.Flusher).Flush()
		}
	})
	a := &attempts{}
	req := toolRequest()
	var text strings.Builder
	req.Stream = func(d agentrt.Delta) { text.WriteString(d.Text) }
	resp, err := newModel(t, f, a).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if f.requests() != 1 || len(a.errs) != 0 {
		t.Errorf("%d requests, failed attempts %v", f.requests(), a.errs)
	}
	if text.String() != "Let me answer." || resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || resp.Usage.Input != 12 {
		t.Errorf("deltas %q, response %+v", text.String(), resp)
	}
}

// TestStreamCutAfterFeedback: a stream cut after a chunk that held only
// the prompt's feedback, which blocked nothing, is cut like any other,
// and tried again: it was taken for a whole response without
// candidates, a final error.
func TestStreamCutAfterFeedback(t *testing.T) {
	feedback := `{"promptFeedback":{"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"}]},"modelVersion":"gemini-test-001"}`
	f := newFakeAt(t, streamPath, sse(feedback), sse(append([]string{feedback}, geminiChunks...)...))
	a := &attempts{}
	req := toolRequest()
	req.Stream = func(agentrt.Delta) {}
	resp, err := newModel(t, f, a).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if f.requests() != 2 || resp.Message.Content != "Let me answer." {
		t.Errorf("%d requests, message %+v", f.requests(), resp.Message)
	}
	// A prompt the feedback says was blocked is a refusal, not retried.
	blocked := `{"promptFeedback":{"blockReason":"SAFETY"},"modelVersion":"gemini-test-001"}`
	f = newFakeAt(t, streamPath, sse(blocked), sse(geminiChunks...))
	if _, err := newModel(t, f, nil).Complete(t.Context(), req); !errors.Is(err, ErrRefused) || f.requests() != 1 {
		t.Errorf("a blocked prompt: %v, %d requests", err, f.requests())
	}
}
