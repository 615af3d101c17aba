package google

import (
	"io"
	"net/http"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/internal/limit"
	"agentc.dev/agentc/runtime/provider/retry"
)

// TestErrorBodyBounded: a server answering with megabytes of an error
// (a status's body, JSON or not, or an error event in a stream) has a
// few KiB of it quoted in the call's error, which every event of the
// call and the journal copy; and of an error status's body, whole or
// streamed, little is read.
func TestErrorBodyBounded(t *testing.T) {
	big := strings.Repeat("E", 8<<20)
	plain := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			io.WriteString(w, big)
		}
	}
	// The SDK quotes a line that is not an event's data whole.
	notData := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: "+big+"\n\n")
	}
	midStream := sse(geminiChunks[0], `{"error": {"code": 503, "message": "`+big+`", "status": "UNAVAILABLE"}}`)
	for _, stream := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			reply  http.HandlerFunc
			status string // "" for an error event in a stream
		}{
			{"400 not JSON", plain(400), "google: 400 Bad Request"},
			{"503 JSON", apiError(503, "UNAVAILABLE", big), "google: 503 Service Unavailable"},
			{"error event", midStream, ""},
			{"not an event", notData, ""},
		} {
			if tc.status == "" && !stream {
				continue
			}
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				path := "/v1beta/models/gemini-test:generateContent"
				if stream {
					path = streamPath
				}
				f := newFakeAt(t, path, tc.reply)
				c := &replytest.Counting{}
				m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: retry.Policy{Attempts: 1}, HTTPClient: &http.Client{Transport: c}})
				if err != nil {
					t.Fatal(err)
				}
				req := request()
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err = m.Complete(t.Context(), req)
				if err == nil {
					t.Fatal("no error")
				}
				if msg := err.Error(); len(msg) > 8<<10 || !strings.Contains(msg, "EEEE… (") || !strings.HasPrefix(msg, "google: ") || !strings.Contains(msg, tc.status) {
					t.Errorf("error of %d bytes, want under 8 KiB, the message cut and marked, and %q: %.300s", len(msg), tc.status, msg)
				}
				if tc.status != "" && c.Read() > 2*limit.MaxErrorBody {
					t.Errorf("%d bytes of the error's body were read, want at most %d", c.Read(), 2*limit.MaxErrorBody)
				}
			})
		}
	}
}

// TestResponseTextQuoted: what a response says of itself where it is
// refused or empty (a finish or block reason, and its message) is quoted
// as an error status's message is, the key redacted and cut at a few KiB:
// a megabyte of it, the key too, went into the call's error whole.
func TestResponseTextQuoted(t *testing.T) {
	big := strings.Repeat("E", 1<<20) + " " + testKey
	for _, tc := range []struct{ name, body, want string }{
		{"block message", `{"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"` + big + `"}}`, "google: the model refused to answer: the prompt was blocked (blockReason SAFETY): EEE"},
		{"block reason", `{"promptFeedback":{"blockReason":"` + big + `"}}`, "google: the model refused to answer: the prompt was blocked (blockReason EEE"},
		{"finish reason", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"` + big + `"}]}`, "google: the response has no content (finishReason EEE"},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			path, handler := "/v1beta/models/gemini-test:generateContent", reply(tc.body)
			if stream {
				name += ", streamed"
				path, handler = streamPath, sse(tc.body)
			}
			t.Run(name, func(t *testing.T) {
				f := newFakeAt(t, path, handler)
				req := toolRequest()
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err := newModel(t, f, nil).Complete(t.Context(), req)
				if err == nil {
					t.Fatal("no error")
				}
				if msg := err.Error(); len(msg) > 8<<10 || !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, testKey) {
					t.Errorf("error of %d bytes, want under 8 KiB, beginning %q, without the key: %.300s", len(msg), tc.want, msg)
				}
			})
		}
	}
}
