package bedrock

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/internal/limit"
	"agentc.dev/agentc/runtime/provider/retry"
)

// exception is a stream whose first event is followed by an exception
// frame, as the service sends one mid-stream.
func exception(t *testing.T, typ, message string) reply {
	t.Helper()
	r := events(t, streamEvents[0])
	var b bytes.Buffer
	msg := eventstream.Message{Payload: []byte(`{"message":` + quote(message) + `}`)}
	msg.Headers.Set(":exception-type", eventstream.StringValue(typ))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
	if err := eventstream.NewEncoder().Encode(&b, msg); err != nil {
		t.Fatal(err)
	}
	r.body += b.String()
	return r
}

// TestErrorBodyBounded: a server answering with megabytes of an error
// (a status's body, or an exception in a stream) has a few KiB of it
// quoted in the call's error, which every event of the call and the
// journal copy; and of an error status's body, whole or streamed, little
// is read.
func TestErrorBodyBounded(t *testing.T) {
	big := strings.Repeat("E", 8<<20)
	for _, stream := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			reply  reply
			status string // "" for an exception in a stream
		}{
			// The body is cut at limit.MaxErrorBody, past what the SDK can
			// decode: the error holds its status and code.
			{"400", awsError(400, "ValidationException", big), "bedrock: 400 Bad Request (ValidationException)"},
			{"503", awsError(503, "ServiceUnavailableException", big), "bedrock: 503 Service Unavailable (ServiceUnavailableException)"},
			{"exception", exception(t, "validationException", big), ""},
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
				m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL,
					Retry: retry.Policy{Attempts: 1}, HTTPClient: &http.Client{Transport: c}})
				if err != nil {
					t.Fatal(err)
				}
				req := &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				_, err = m.Complete(t.Context(), req)
				if err == nil {
					t.Fatal("no error")
				}
				if msg := err.Error(); len(msg) > 8<<10 || tc.status == "" && !strings.Contains(msg, "EEEE… (") || !strings.HasPrefix(msg, "bedrock: ") || !strings.Contains(msg, tc.status) {
					t.Errorf("error of %d bytes, want under 8 KiB, and %q (or the message cut and marked): %.300s", len(msg), tc.status, msg)
				}
				if tc.status != "" && c.Read() > 2*limit.MaxErrorBody {
					t.Errorf("%d bytes of the error's body were read, want at most %d", c.Read(), 2*limit.MaxErrorBody)
				}
			})
		}
	}
}

// TestStreamException: an exception frame mid-stream has no status of
// its own; its code says whether another attempt may be served
// (throttling, a service unavailable or failing, the model's stream
// failing) and what class of failure it is, for a fallback. A
// validation exception is final.
func TestStreamException(t *testing.T) {
	req := func() *agentrt.Request {
		return &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}, Stream: func(agentrt.Delta) {}}
	}
	for _, code := range []string{"throttlingException", "serviceUnavailableException", "internalServerException", "modelStreamErrorException"} {
		t.Run(code, func(t *testing.T) {
			f := newFake(t, exception(t, code, "try again"), events(t, streamEvents...))
			resp, err := newModel(t, f, 2, nil).Complete(t.Context(), req())
			if err != nil || resp.Message.Content != "Let me answer." || len(f.requests()) != 2 {
				t.Fatalf("%v after %d requests, want the answer after 2", err, len(f.requests()))
			}
			f = newFake(t, exception(t, code, "try again"))
			_, err = newModel(t, f, 1, nil).Complete(t.Context(), req())
			var fc interface{ FailureClass() string }
			if !errors.As(err, &fc) || fc.FailureClass() != "unavailable" {
				t.Errorf("%v: want the class unavailable", err)
			}
			if err == nil || !strings.Contains(err.Error(), "try again") || strings.Contains(err.Error(), "bedrock: 0") {
				t.Errorf("error %v, want the exception's code and message", err)
			}
		})
	}
	t.Run("validationException", func(t *testing.T) {
		f := newFake(t, exception(t, "validationException", "bad input"), events(t, streamEvents...))
		_, err := newModel(t, f, 2, nil).Complete(t.Context(), req())
		if err == nil || len(f.requests()) != 1 {
			t.Fatalf("%v after %d requests, want a final error after 1", err, len(f.requests()))
		}
	})
}
