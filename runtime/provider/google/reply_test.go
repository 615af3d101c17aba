package google

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
)

const bound16 = 16*128 + 64<<10 // the bound of a reply to maxOutputTokens 16

// refused holds a call to the error of a reply past its request's
// maxOutputTokens, made once: another attempt would be sent as much again.
func refused(t *testing.T, err error, f *fake, cut bool) {
	t.Helper()
	want := "the reply is refused"
	if cut {
		want = "the stream was cut"
	}
	if err == nil || !strings.HasPrefix(err.Error(), "google: the ") || !strings.Contains(err.Error(), "16 output tokens (the request's limit)") || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want the reply past maxOutputTokens refused (%s)", err, want)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// TestReplyPastMaxTokens: a server that ignores maxOutputTokens and
// answers with more text, or longer arguments, than so many tokens can
// make (128 bytes a token and 64 KiB besides) fails the call; a reply at
// the bound is taken.
func TestReplyPastMaxTokens(t *testing.T) {
	req := toolRequest()
	req.MaxOutputTokens = 16
	over := strings.Repeat("x", bound16+1)
	for _, tc := range []struct{ name, parts string }{
		{"text", fmt.Sprintf(`[{"text": %q}]`, over)},
		{"arguments", fmt.Sprintf(`[{"functionCall": {"name": "weather", "args": {"city": %q}}}]`, over)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, candidate(tc.parts, "STOP", ""))
			_, err := newModel(t, f, nil).Complete(t.Context(), req)
			refused(t, err, f, false)
		})
	}
	t.Run("many empty calls", func(t *testing.T) {
		// Each call counts one token's bytes at least: 10,000 calls with
		// a one-letter name and no arguments are past what 4,096 tokens
		// make.
		parts := "[" + strings.Repeat(`{"functionCall": {"name": "w"}},`, 9999) + `{"functionCall": {"name": "w"}}]`
		for _, stream := range []bool{false, true} {
			path, reply := "/v1beta/models/gemini-test:generateContent", candidate(parts, "STOP", "")
			if stream {
				path, reply = streamPath, sse(`{"candidates":[{"content":{"parts":`+parts+`,"role":"model"},"finishReason":"STOP","index":0}]}`)
			}
			f := newFakeAt(t, path, reply)
			r := toolRequest()
			r.MaxOutputTokens = 4096
			if stream {
				r.Stream = func(agentrt.Delta) {}
			}
			_, err := newModel(t, f, nil).Complete(t.Context(), r)
			if err == nil || !strings.Contains(err.Error(), "4096 output tokens (the request's limit)") || f.requests() != 1 {
				t.Errorf("streamed %v: err = %v after %d requests, want the reply past 4096 tokens refused after 1", stream, err, f.requests())
			}
		}
	})
	t.Run("far past: cut as read", func(t *testing.T) {
		// Past replylimit.BodyBound, the response is cut before it is decoded.
		f := newFake(t, candidate(fmt.Sprintf(`[{"text": %q}]`, strings.Repeat("x", 4<<20)), "STOP", ""))
		_, err := newModel(t, f, nil).Complete(t.Context(), req)
		if err == nil || !strings.HasPrefix(err.Error(), "google: the response's body passed ") || !strings.Contains(err.Error(), "16 output tokens (the request's limit)") || !strings.Contains(err.Error(), "the response was cut") {
			t.Fatalf("err = %v, want the response cut as read", err)
		}
		if f.requests() != 1 {
			t.Errorf("%d requests, want 1", f.requests())
		}
	})
	t.Run("at the bound", func(t *testing.T) {
		f := newFake(t, candidate(fmt.Sprintf(`[{"text": %q}]`, over[1:]), "STOP", ""))
		resp, err := newModel(t, f, nil).Complete(t.Context(), req)
		if err != nil || len(resp.Message.Content) != bound16 {
			t.Fatalf("a reply at the bound: %v", err)
		}
	})
}

// TestStreamPastMaxTokens: a stream is cut as soon as its text passes
// what maxOutputTokens can make, not read on to the 32 MiB a response may
// hold: the caller heard at most the bound of it.
func TestStreamPastMaxTokens(t *testing.T) {
	ev := fmt.Sprintf("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":%q}],\"role\":\"model\"},\"index\":0}],\"modelVersion\":\"gemini-test-001\"}\r\n\r\n", strings.Repeat("x", 4000))
	f := newFakeAt(t, streamPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, ev); err != nil {
				return
			}
		}
	})
	req := toolRequest()
	req.MaxOutputTokens = 16
	n := 0
	req.Stream = func(d agentrt.Delta) {
		if d.Restart {
			n = 0
		}
		n += len(d.Text)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound, not a measure
	defer cancel()
	_, err := newModel(t, f, nil).Complete(ctx, req)
	refused(t, err, f, true)
	if n > bound16 {
		t.Errorf("%d bytes of text were passed on, more than the bound (%d)", n, bound16)
	}
}
