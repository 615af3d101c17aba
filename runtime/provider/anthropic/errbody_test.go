package anthropic

import (
	"errors"
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
	midStream := sse([]string{streamed[0], streamed[1], `{"type": "error", "error": {"type": "overloaded_error", "message": "` + big + `"}}`}, 0)
	for _, stream := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			reply  http.HandlerFunc
			status string // "" for an error event in a stream
		}{
			{"400 not JSON", plain, "anthropic: 400"},
			{"529 JSON", apiError(529, "overloaded_error", big), "anthropic: 529"},
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
				m, err := New(Config{APIKey: secretKey, BaseURL: f.srv.URL, Retry: retry.Policy{Attempts: 1}, HTTPClient: &http.Client{Transport: c}})
				if err != nil {
					t.Fatal(err)
				}
				req := &agentrt.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 1000, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err = m.Complete(t.Context(), req)
				if err == nil {
					t.Fatal("no error")
				}
				if msg := err.Error(); len(msg) > 8<<10 || !strings.HasPrefix(msg, "anthropic: ") || !strings.Contains(msg, tc.status) {
					t.Errorf("error of %d bytes, want under 8 KiB, and %q: %.300s", len(msg), tc.status, msg)
				}
				if tc.status != "" && c.Read() > 2*limit.MaxErrorBody {
					t.Errorf("%d bytes of the error's body were read, want at most %d", c.Read(), 2*limit.MaxErrorBody)
				}
			})
		}
	}
}

// TestRefusalQuoted: a refusal's explanation, whole or streamed (the
// message_delta's stop_details), is quoted in the call's error as an error
// status's message is: a few KiB of it, the key redacted. Quoted whole, a
// server's megabyte echoing the key went into the error, and from it into
// standard error, every event of the call and the journal.
func TestRefusalQuoted(t *testing.T) {
	big := strings.Repeat("E", 1<<20) + " " + secretKey
	for _, tc := range []struct{ name, explanation, want string }{
		{"long", big, "anthropic: the model refused to answer: EEE"},
		{"the key", "Your key is " + secretKey, "anthropic: the model refused to answer: Your key is [redacted]"},
	} {
		details := `{"type":"refusal","category":"cyber","explanation":"` + tc.explanation + `"}`
		whole := reply(200, `{"id":"msg_01R","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],`+
			`"stop_reason":"refusal","stop_sequence":null,"stop_details":`+details+`,"usage":{"input_tokens":25,"output_tokens":1}}`)
		streamedRefusal := sse([]string{streamed[0],
			`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":` + details + `},"usage":{"output_tokens":1}}`,
			`{"type":"message_stop"}`}, 0)
		for _, stream := range []bool{false, true} {
			name, h := tc.name, whole
			if stream {
				name, h = name+", streamed", streamedRefusal
			}
			t.Run(name, func(t *testing.T) {
				f := newFake(t, h)
				req := &agentrt.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 1000, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err := f.model(t, fastRetry).Complete(t.Context(), req)
				if !errors.Is(err, ErrRefused) {
					t.Fatalf("error %v, want ErrRefused", err)
				}
				if msg := err.Error(); len(msg) > 8<<10 || !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, secretKey) {
					t.Errorf("error of %d bytes, want under 8 KiB, beginning %q, without the key: %.300s", len(msg), tc.want, msg)
				}
			})
		}
	}
}
