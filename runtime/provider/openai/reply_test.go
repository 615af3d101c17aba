package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// maxTokens is the output allowance of the requests below: a reply to
// them holds at most 16 × 128 bytes and 64 KiB besides, 67,584 bytes.
const (
	maxTokens = 16
	bound     = maxTokens*128 + 64<<10
)

func boundedRequest() *agentrt.Request {
	req := toolRequest()
	req.MaxOutputTokens = maxTokens
	return req
}

// refused holds a call to the error of a reply past its request's output
// limit, made once: another attempt would be sent as much again.
func refused(t *testing.T, err error, f *fake, cut bool) {
	t.Helper()
	want := "the reply is refused"
	if cut {
		want = "the stream was cut"
	}
	if err == nil || !strings.Contains(err.Error(), "openai: the ") || !strings.Contains(err.Error(), "16 output tokens (the request's limit)") || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want the reply past max_output_tokens refused (%s)", err, want)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// TestReplyPastMaxTokens: a server that ignores the request's
// max_completion_tokens and answers with more text, or longer tool
// arguments, than so many tokens can make (128 bytes a token, the longest
// token of OpenAI's vocabularies, and 64 KiB besides) fails the call, as
// a malformed reply does; a reply at the bound, and any reply to a
// request that set no limit, is taken.
func TestReplyPastMaxTokens(t *testing.T) {
	over := strings.Repeat("x", bound+1)
	call := func(args string) string {
		return fmt.Sprintf(`{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": %q}}]}`, args)
	}
	for _, tc := range []struct {
		name, message string
	}{
		{"text", fmt.Sprintf(`{"role": "assistant", "content": %q}`, over)},
		{"arguments", call(`{"city":"` + over + `"}`)},
		{"text beside a call", fmt.Sprintf(`{"role": "assistant", "content": %q, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}`, over)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, completion(tc.message, "stop", ""), okAnswer)
			_, err := newModel(t, f, nil).Complete(t.Context(), boundedRequest())
			refused(t, err, f, false)
			if !strings.Contains(err.Error(), fmt.Sprintf("(%d:", bound)) {
				t.Errorf("err = %v, want the bound (%d) named", err, bound)
			}
		})
	}
	t.Run("at the bound", func(t *testing.T) {
		// The rest of the bound is the call's: one token's bytes, at
		// least (replylimit.CallBytes).
		text := strings.Repeat(" ", bound-replylimit.CallBytes)
		msg := fmt.Sprintf(`{"role": "assistant", "content": %q, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}`, text)
		f := newFake(t, completion(msg, "tool_calls", ""))
		resp, err := newModel(t, f, nil).Complete(t.Context(), boundedRequest())
		if err != nil || len(resp.Message.Content) != len(text) {
			t.Fatalf("a reply at the bound: %v", err)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		f := newFake(t, completion(fmt.Sprintf(`{"role": "assistant", "content": %q}`, strings.Repeat("x", 1<<20)), "stop", ""))
		resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
		if err != nil || len(resp.Message.Content) != 1<<20 {
			t.Fatalf("a reply to a request with no limit: %v", err)
		}
	})
	t.Run("responses", func(t *testing.T) {
		f := newResponsesFake(t, responseObject("completed", "", callItem("call_1", "weather", `{"city":"`+over+`"}`), ""), okResponse)
		_, err := newResponsesModel(t, f, nil).Complete(t.Context(), boundedRequest())
		refused(t, err, f, false)
	})
}

// endless streams pieces of 4,000 bytes of text for ever, each a delta of
// the API's stream (Chat Completions' chunks, or the Responses API's
// events), until the client goes.
func endless(responses bool) http.HandlerFunc {
	piece := strings.Repeat("x", 4000)
	ev := fmt.Sprintf("data: %s\n\n", chunk(`{"content":"`+piece+`"}`, ""))
	if responses {
		ev = fmt.Sprintf("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":%q}\n\n", piece)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, ev); err != nil {
				return
			}
		}
	}
}

// TestStreamPastMaxTokens: a streamed reply is cut as soon as its text
// passes what the request's output limit can make, not read on to the
// 32 MiB a response may hold: the caller heard at most the bound of it.
func TestStreamPastMaxTokens(t *testing.T) {
	for _, responses := range []bool{false, true} {
		t.Run(map[bool]string{false: "chat", true: "responses"}[responses], func(t *testing.T) {
			var f *fake
			var m *Model
			if responses {
				f = newResponsesFake(t, endless(true), okResponse)
				m = newResponsesModel(t, f, nil)
			} else {
				f = newFake(t, endless(false), okAnswer)
				m = newModel(t, f, nil)
			}
			req := boundedRequest()
			n := 0
			req.Stream = func(d agentrt.Delta) {
				if d.Restart {
					n = 0
				}
				n += len(d.Text)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound, not a measure
			defer cancel()
			_, err := m.Complete(ctx, req)
			refused(t, err, f, true)
			if n > bound {
				t.Errorf("%d bytes of text were passed on, more than the bound (%d)", n, bound)
			}
		})
	}
}

// cut holds a call to the error of a whole response cut as it was read,
// past what a reply to its request can take (replylimit.BodyBound), made once.
func cut(t *testing.T, err error, f *fake) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), "openai: the response's body passed ") || !strings.Contains(err.Error(), "16 output tokens (the request's limit)") || !strings.Contains(err.Error(), "the response was cut") {
		t.Fatalf("err = %v, want the response cut past what 16 output tokens can take", err)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// TestWholeReplyCut: a whole response far past what its request's output
// limit can make is cut as it is read, at replylimit.BodyBound, rather than
// read up to the 32 MiB a response may hold and decoded before it is
// refused; one at the bound with every byte written as a \u escape is
// taken, and so is one that echoes a long request (the Responses API
// sends the instructions back).
func TestWholeReplyCut(t *testing.T) {
	long := strings.Repeat("x", 4<<20)
	t.Run("chat", func(t *testing.T) {
		f := newFake(t, completion(fmt.Sprintf(`{"role": "assistant", "content": %q}`, long), "stop", ""))
		_, err := newModel(t, f, nil).Complete(t.Context(), boundedRequest())
		cut(t, err, f)
	})
	t.Run("responses", func(t *testing.T) {
		f := newResponsesFake(t, responseObject("completed", "", textItem(long), ""))
		_, err := newResponsesModel(t, f, nil).Complete(t.Context(), boundedRequest())
		cut(t, err, f)
	})
	t.Run("escaped, at the bound", func(t *testing.T) {
		text := strings.Repeat("\x01", bound)
		b, _ := json.Marshal(text) // \u0001 each
		f := newFake(t, completion(fmt.Sprintf(`{"role": "assistant", "content": %s}`, b), "stop", ""))
		resp, err := newModel(t, f, nil).Complete(t.Context(), boundedRequest())
		if err != nil || resp.Message.Content != text {
			t.Fatalf("a reply at the bound, escaped: %v", err)
		}
	})
	t.Run("responses, echoing the instructions", func(t *testing.T) {
		req := boundedRequest()
		instructions := strings.Repeat("Answer in French. ", 1<<16) // 1.1 MiB
		req.Messages = append([]agentrt.Message{{Role: agentrt.System, Content: instructions}}, req.Messages...)
		echo := responseObject("completed", "", textItem("Paris."), "")
		f := newResponsesFake(t, func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			echo(rec, r)
			b, _ := json.Marshal(instructions)
			w.Header().Set("Content-Type", "application/json")
			w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"instructions": null`), append([]byte(`"instructions": `), b...), 1))
		})
		resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
		if err != nil || resp.Message.Content != "Paris." {
			t.Fatalf("a reply echoing its request's instructions: %v", err)
		}
	})
}
