package openai

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
	plain := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(400)
		io.WriteString(w, big)
	}
	midStream := sse([]string{streamed[0], streamed[1], `{"error": {"message": "` + big + `", "type": "server_error"}}`}, false, nil)
	for _, stream := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			reply  http.HandlerFunc
			status string // "" for an error event in a stream
		}{
			{"400 not JSON", plain, "openai: 400 Bad Request"},
			{"503 JSON", apiError(503, "server_error", "", big), "openai: 503 Service Unavailable"},
			{"error event", midStream, ""},
		} {
			if tc.status == "" && !stream {
				continue
			}
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				f := newFake(t, tc.reply)
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
				if msg := err.Error(); len(msg) > 8<<10 || !strings.HasPrefix(msg, "openai: ") || !strings.Contains(msg, tc.status) {
					t.Errorf("error of %d bytes, want under 8 KiB, and %q: %.300s", len(msg), tc.status, msg)
				}
				if tc.status != "" && c.Read() > 2*limit.MaxErrorBody {
					t.Errorf("%d bytes of the error's body were read, want at most %d", c.Read(), 2*limit.MaxErrorBody)
				}
			})
		}
	}
}

// TestResponseTextQuoted: on the Responses API, what a response object
// says of itself (a failed response's error, a status agentc does not
// know, an incomplete one's reason), whole or in a stream's
// response.completed event, is quoted in the call's error as an error
// status's message is: a few KiB of it, the key redacted. Quoted whole, a
// server's megabyte echoing the key went into the error, and from it into
// standard error, every event of the call and the journal.
func TestResponseTextQuoted(t *testing.T) {
	big := strings.Repeat("E", 1<<20) + " " + testKey
	for _, tc := range []struct{ name, body, want string }{
		{"failed", `{"status":"failed","error":{"code":"server_error","message":"` + big + `"},"output":[]}`, "openai: the response failed (server_error): EEE"},
		{"failed, the key", `{"status":"failed","error":{"code":"invalid_api_key","message":"Incorrect API key provided: ` + testKey + `"},"output":[]}`, "openai: the response failed (invalid_api_key): Incorrect API key provided: [redacted]"},
		{"failed code", `{"status":"failed","error":{"code":"` + big + `","message":"m"},"output":[]}`, "openai: the response failed (EEE"},
		{"status", `{"status":"` + big + `","output":[]}`, `openai: the response's status is "EEE`},
		{"incomplete", `{"status":"incomplete","incomplete_details":{"reason":"` + big + `"},"output":[]}`, `openai: the response is incomplete (incomplete_details.reason "EEE`},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				f := newResponsesFake(t, responseReply(tc.body, stream))
				m := newResponsesModel(t, f, nil)
				req := request()
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err := m.Complete(t.Context(), req)
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
