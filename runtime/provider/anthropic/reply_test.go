package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// refused holds a call to the error of a reply past its request's
// max_tokens, made once: another attempt would be sent as much again.
func refused(t *testing.T, err error, f *fake, tokens int, cut bool) {
	t.Helper()
	want := "the reply is refused"
	if cut {
		want = "the stream was cut"
	}
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("anthropic: the %s", map[bool]string{false: "reply holds", true: "streamed reply passed"}[cut])) ||
		!strings.Contains(err.Error(), fmt.Sprintf("%d output tokens (the request's limit)", tokens)) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want the reply past max_tokens %d refused (%s)", err, tokens, want)
	}
	if f.attempts() != 1 {
		t.Errorf("%d attempts, want 1", f.attempts())
	}
}

// TestReplyPastMaxTokens: a server that ignores max_tokens and answers
// with more text, or a longer tool input, than so many tokens can make
// (128 bytes a token and 64 KiB besides) fails the call; the bound is the
// max_tokens sent, 4096 when the request sets none. A reply at the bound
// is taken.
func TestReplyPastMaxTokens(t *testing.T) {
	req := func(max int) *agentrt.Request {
		return &agentrt.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: max, Messages: []agentrt.Message{{Role: agentrt.User, Content: "Hi."}},
			Tools: weatherTools, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto}}
	}
	const bound16, bound4096 = 16*128 + 64<<10, 4096*128 + 64<<10
	text := func(n int) string { return fmt.Sprintf(`[{"type": "text", "text": %q}]`, strings.Repeat("x", n)) }
	for _, tc := range []struct {
		name, content string
		max, tokens   int
	}{
		{"text", text(bound16 + 1), 16, 16},
		{"tool input", fmt.Sprintf(`[{"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": %q}}]`, strings.Repeat("x", bound16)), 16, 16},
		{"the default max_tokens", text(bound4096 + 1), 0, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, message(tc.content, "end_turn", ""))
			_, err := f.model(t, retry.Policy{}).Complete(t.Context(), req(tc.max))
			refused(t, err, f, tc.tokens, false)
		})
	}
	t.Run("at the bound", func(t *testing.T) {
		f := newFake(t, message(text(bound16), "end_turn", ""))
		resp, err := f.model(t, retry.Policy{}).Complete(t.Context(), req(16))
		if err != nil || len(resp.Message.Content) != bound16 {
			t.Fatalf("a reply at the bound: %v", err)
		}
	})
}

// TestStreamPastMaxTokens: a stream is cut as soon as its text passes
// what max_tokens can make, not read on to the 32 MiB a response may
// hold: the caller heard at most the bound of it.
func TestStreamPastMaxTokens(t *testing.T) {
	piece := strings.Repeat("x", 4000)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message_start\ndata: %s\n\n", streamed[0])
		fmt.Fprintf(w, "event: content_block_start\ndata: %s\n\n", streamed[1])
		ev := fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", piece)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, ev); err != nil {
				return
			}
		}
	})
	req := longRequest()
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
	_, err := f.model(t, retry.Policy{}).Complete(ctx, req)
	refused(t, err, f, 16, true)
	if bound := 16*128 + 64<<10; n > bound {
		t.Errorf("%d bytes of text were passed on, more than the bound (%d)", n, bound)
	}
}

// TestNotMessage: a whole response answered 200 whose body is not a
// message is no reply, where the SDK decodes it to a message of no
// content and no error, which was taken as an empty answer (an agent
// without an output contract printed "" and exited 0). An error object
// in its place, as a proxy or a gateway may send, is the call's error and
// is tried again as an error event of its type in a stream is; a body of
// another type, or of no content, fails the call.
func TestNotMessage(t *testing.T) {
	ok := message(`[{"type": "text", "text": "ok"}]`, "end_turn", "")
	errorBody := func(typ, msg string) http.HandlerFunc {
		return reply(200, `{"type": "error", "error": {"type": "`+typ+`", "message": "`+msg+`"}, "request_id": "req_011CTest"}`)
	}
	for _, tc := range []struct {
		name  string
		first http.HandlerFunc
		want  string // the first attempt's error
		again bool   // the second attempt is made, and answers
	}{
		{"overloaded", errorBody("overloaded_error", "Overloaded"), "anthropic: the response, answered 200, is an error, not a message: overloaded_error: Overloaded (request-id req_011CTest)", true},
		{"api error", errorBody("api_error", "Internal server error"), "anthropic: the response, answered 200, is an error, not a message: api_error: Internal server error (request-id req_011CTest)", true},
		{"invalid request", errorBody("invalid_request_error", "prompt is too long"), "anthropic: the response, answered 200, is an error, not a message: invalid_request_error: prompt is too long (request-id req_011CTest)", false},
		{"the key echoed", errorBody("authentication_error", "invalid x-api-key "+secretKey), "anthropic: the response, answered 200, is an error, not a message: authentication_error: invalid x-api-key [redacted] (request-id req_011CTest)", false},
		{"another type", reply(200, `{"type": "completion", "completion": "ok"}`), `anthropic: the response is not a message: its type is "completion"`, false},
		{"no content", reply(200, `{}`), "anthropic: the response is not a message: it has no content", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.first, ok)
			var seen []error
			p := fastRetry
			p.OnAttempt = func(_ int, err error, _ time.Duration) { seen = append(seen, err) }
			resp, err := f.model(t, p).Complete(context.Background(), &agentrt.Request{
				Model:    "claude-sonnet-4-5",
				Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
			})
			if len(seen) == 0 || seen[0].Error() != tc.want {
				t.Fatalf("first attempt's error %v, want %q", seen, tc.want)
			}
			if !tc.again {
				if err == nil || err.Error() != tc.want || f.attempts() != 1 {
					t.Errorf("%d attempts, error %v; want one, failing with %q", f.attempts(), err, tc.want)
				}
				return
			}
			if err != nil || resp.Message.Content != "ok" || f.attempts() != 2 {
				t.Errorf("%d attempts, response %+v, error %v; want the second to answer", f.attempts(), resp, err)
			}
			var se *StatusError
			if !errors.As(seen[0], &se) || se.StatusCode != 200 || se.FailureClass() != "unavailable" {
				t.Errorf("first attempt's error %#v: want a StatusError of status 200, class unavailable", seen[0])
			}
		})
	}
}
