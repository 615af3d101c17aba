package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// sse answers with a stream of server-sent events, as the Messages API
// does for "stream": true; cut stops before the last events.
func sse(events []string, cut int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_011CTest")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events[:len(events)-cut] {
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal([]byte(ev), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, ev)
			w.(http.Flusher).Flush()
		}
		if cut > 0 {
			// The connection goes away mid-response.
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
		}
	}
}

var streamed = []string{
	`{"type":"message_start","message":{"id":"msg_01Stream","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"ping"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking it "}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"up."}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"weather","input":{}}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`,
	`{"type":"message_stop"}`,
}

func longRequest() *agentrt.Request {
	return &agentrt.Request{
		Model:           "claude-sonnet-4-5",
		MaxOutputTokens: 64000,
		Messages:        []agentrt.Message{{Role: agentrt.User, Content: "Weather in Paris?"}},
		Tools:           weatherTools,
		ToolChoice:      agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
	}
}

// TestStreamedWhenLong: a request whose max_tokens the API would not serve
// in one plain response is streamed, and the message put together from the
// events: text, a tool call whose input arrived in pieces, and usage.
func TestStreamedWhenLong(t *testing.T) {
	f := newFake(t, sse(streamed, 0))
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), longRequest())
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "stream", f.body(0)["stream"], `true`)
	if resp.Message.Content != "Looking it up." {
		t.Errorf("content %q", resp.Message.Content)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != "toolu_01A" || resp.Message.ToolCalls[0].Name != "weather" {
		t.Fatalf("tool calls %+v", resp.Message.ToolCalls)
	}
	var args map[string]string
	if err := json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &args); err != nil || args["city"] != "Paris" {
		t.Errorf("arguments %s (%v)", resp.Message.ToolCalls[0].Arguments, err)
	}
	if want := (agentrt.Usage{Input: 35, Output: 42, Cached: 10}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
}

// A short request is not streamed.
func TestShortNotStreamed(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "Paris."}]`, "end_turn", ""))
	req := longRequest()
	req.MaxOutputTokens = 1000
	if _, err := f.model(t, retry.Policy{}).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if v, ok := f.body(0)["stream"]; ok {
		t.Errorf("a short request was sent with stream %v", v)
	}
}

// TestStreamRetried: an overloaded error event in the stream, and a stream
// cut before its message ended, are retried; the third attempt answers.
func TestStreamRetried(t *testing.T) {
	overloaded := sse([]string{streamed[0], `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, 0)
	f := newFake(t, overloaded, sse(streamed, 3), sse(streamed, 0))
	resp, err := f.model(t, fastRetry).Complete(context.Background(), longRequest())
	if err != nil {
		t.Fatal(err)
	}
	if f.attempts() != 3 || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("attempts %d, message %+v", f.attempts(), resp.Message)
	}
}

// TestStreamWholeBeforeDrop: a stream whose message is whole (stop reason
// and usage arrived) is the answer, though the connection went away before
// its last event: asking again would pay for it twice.
func TestStreamWholeBeforeDrop(t *testing.T) {
	f := newFake(t, sse(streamed, 1))
	resp, err := f.model(t, fastRetry).Complete(context.Background(), longRequest())
	if err != nil || f.attempts() != 1 || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("err %v, attempts %d", err, f.attempts())
	}
}

// TestStreamErrorFinal: an error event of a kind no retry can mend is
// final, with the provider's message.
func TestStreamErrorFinal(t *testing.T) {
	f := newFake(t, sse([]string{streamed[0], `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`}, 0))
	_, err := f.model(t, fastRetry).Complete(context.Background(), longRequest())
	var se *StatusError
	if !errors.As(err, &se) || err.Error() != "anthropic: error event in the stream: invalid_request_error: prompt is too long (request-id req_011CTest)" || f.attempts() != 1 {
		t.Errorf("err %v, attempts %d", err, f.attempts())
	}
}

// stalledStream sends the stream's first events, then nothing until the
// client goes.
func stalledStream(events []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal([]byte(ev), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, ev)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// TestStreamStalled: a stream that sends no part of its reply for
// Config.Stall is given up and asked again (package limit's tests show
// that a stream that keeps making progress may take longer than that in
// all, and that keep-alives are not progress).
func TestStreamStalled(t *testing.T) {
	const d = 500 * time.Millisecond
	var failed []error
	p := fastRetry
	p.OnAttempt = func(_ int, err error, _ time.Duration) { failed = append(failed, err) }
	f := newFake(t, stalledStream(streamed[:4]), sse(streamed, 0))
	m, err := New(Config{APIKey: secretKey, BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Retry: p, Stall: d})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), longRequest())
	if err != nil {
		t.Fatal(err)
	}
	if f.attempts() != 2 || len(resp.Message.ToolCalls) != 1 || len(failed) != 1 || !strings.Contains(failed[0].Error(), "the stream sent keep-alives at most, no part of the reply, for 500ms") {
		t.Errorf("attempts %d, message %+v, failed attempts %v", f.attempts(), resp.Message, failed)
	}
}

// TestStreamAsked: a short request whose caller asks for the reply as it
// comes is streamed; the caller hears the text and the output tool's
// input in pieces, in order; an attempt after a cut one is announced as
// a restart, and the reply is the whole message.
func TestStreamAsked(t *testing.T) {
	f := newFake(t, sse(streamed, 3), sse(streamed, 0))
	req := longRequest()
	req.MaxOutputTokens = 1000
	req.OutputTool = "weather" // its input is the answer as it forms
	var text, answer strings.Builder
	restarts := 0
	req.Stream = func(d agentrt.Delta) {
		if d.Restart {
			restarts++
			text.Reset()
			answer.Reset()
		}
		text.WriteString(d.Text)
		answer.WriteString(d.Answer)
	}
	resp, err := f.model(t, fastRetry).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "stream", f.body(0)["stream"], `true`)
	if restarts != 1 || f.attempts() != 2 {
		t.Errorf("%d restarts in %d attempts", restarts, f.attempts())
	}
	if text.String() != "Looking it up." || answer.String() != `{"city": "Paris"}` {
		t.Errorf("deltas: text %q, answer %q", text.String(), answer.String())
	}
	if resp.Message.Content != "Looking it up." || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("message %+v", resp.Message)
	}
}

// thinkingStreamed is a stream of a thinking block, signed, text that
// starts in its block's start, and a tool call, with no message_stop (the
// connection gone after the message's end).
var thinkingStreamed = []string{
	`{"type":"message_start","message":{"id":"msg_01Think","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user "}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"wants the weather."}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"1gbcDa9GJwZA"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Let me "}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"look."}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"weather","input":{}}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Oslo\"}"}}`,
	`{"type":"content_block_stop","index":2}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`,
}

// TestStreamTextsAsTheSDK: the message put together from a stream's
// events, its texts by builders, is the one the SDK's Accumulate makes,
// member for member and in its raw JSON, with and without the stream's
// last event.
func TestStreamTextsAsTheSDK(t *testing.T) {
	for name, events := range map[string][]string{"text and a call": streamed, "thinking, no message_stop": thinkingStreamed, "cut short": streamed[:8]} {
		t.Run(name, func(t *testing.T) {
			var sdkMsg, ours sdk.Message
			var texts blockTexts
			for _, e := range events {
				var ev sdk.MessageStreamEventUnion
				if err := json.Unmarshal([]byte(e), &ev); err != nil {
					t.Fatal(err)
				}
				errSDK, errOurs := sdkMsg.Accumulate(ev), texts.accumulate(&ours, ev)
				if (errSDK == nil) != (errOurs == nil) {
					t.Fatalf("%s: the SDK %v, ours %v", e, errSDK, errOurs)
				}
			}
			texts.flush(&ours)
			a, _ := json.Marshal(sdkMsg)
			b, _ := json.Marshal(ours)
			if string(a) != string(b) || sdkMsg.RawJSON() != ours.RawJSON() {
				t.Errorf("the SDK's message\n%s\n%s\nours\n%s\n%s", a, sdkMsg.RawJSON(), b, ours.RawJSON())
			}
		})
	}
}

// BenchmarkStreamAccumulate puts together a message streamed as 20,000
// text deltas of 27 bytes: by the SDK's Accumulate alone, which adds each
// to a string, and by blockTexts.
func BenchmarkStreamAccumulate(b *testing.B) {
	piece, _ := json.Marshal(strings.Repeat("x", 27))
	var events []sdk.MessageStreamEventUnion
	raw := append([]string(nil), streamed[:2]...)
	for range 20_000 {
		raw = append(raw, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(piece)+`}}`)
	}
	raw = append(raw, streamed[5], streamed[10], streamed[11])
	for _, e := range raw {
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			b.Fatal(err)
		}
		events = append(events, ev)
	}
	b.Run("sdk", func(b *testing.B) {
		for b.Loop() {
			var msg sdk.Message
			for _, ev := range events {
				msg.Accumulate(ev)
			}
		}
	})
	b.Run("builders", func(b *testing.B) {
		for b.Loop() {
			var msg sdk.Message
			var texts blockTexts
			for _, ev := range events {
				texts.accumulate(&msg, ev)
			}
		}
	})
}

// TestStreamToolInputNotJSON: a tool_use block's input is what its
// input_json_delta pieces make, byte for byte, JSON or not, so the runtime
// refuses input that is not JSON; the SDK's Accumulate made it {}, which
// fits an output schema that requires nothing and calls a tool with no
// arguments. A delta after its block's stop, or tool input for a block
// that is not tool_use, is an error of the stream.
func TestStreamToolInputNotJSON(t *testing.T) {
	const (
		start = `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01A","name":"weather","input":{}}}`
		stop  = `{"type":"content_block_stop","index":0}`
	)
	piece := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + string(b) + `}}`
	}
	end := streamed[10:] // message_delta, message_stop
	for _, c := range []struct {
		name   string
		events []string
		args   string // the call's arguments, or
		err    string // the error
	}{
		{"not JSON", []string{start, piece(`{"city":"Pa`), piece(`", oops`), stop}, `{"city":"Pa", oops`, ""},
		// The message is whole at its message_delta, the connection gone.
		{"not JSON, no stops", []string{start, piece(`{"city":"Pa`), piece(`", oops`), end[0]}, `{"city":"Pa", oops`, ""},
		{"cut", []string{start, piece(`{"city":"Pa`), stop}, `{"city":"Pa`, ""},
		{"prefilled, then a piece", []string{
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01A","name":"weather","input":{"city":"Oslo"}}}`,
			piece(`{"city":"Paris"}`), stop,
		}, `{"city":"Paris"}`, ""},
		{"prefilled, no piece", []string{
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01A","name":"weather","input":{"city":"Oslo"}}}`,
			piece(""), stop,
		}, `{"city":"Oslo"}`, ""},
		{"a piece after the stop", []string{start, piece(`{"city":"Paris"}`), stop, piece(`,"extra"`)}, "",
			"anthropic: reading the stream: the stream added to content block 0 (input_json_delta) after the block's content_block_stop"},
		{"text after the stop", []string{streamed[1], streamed[3], streamed[5], streamed[4]}, "",
			"anthropic: reading the stream: the stream added to content block 0 (text_delta) after the block's content_block_stop"},
		{"tool input in a text block", []string{streamed[1], piece(`{"city":"Paris"}`), streamed[5]}, "",
			"anthropic: reading the stream: the stream sent tool input (input_json_delta) for content block 0, a text block, not tool_use"},
	} {
		t.Run(c.name, func(t *testing.T) {
			events := append([]string{streamed[0]}, c.events...)
			if !strings.HasSuffix(c.name, "no stops") {
				events = append(events, end...)
			}
			f := newFake(t, sse(events, 0))
			resp, err := f.model(t, fastRetry).Complete(context.Background(), longRequest())
			if c.err != "" {
				if err == nil || err.Error() != c.err || f.attempts() != 1 {
					t.Fatalf("err %v after %d attempts, response %+v; want %s", err, f.attempts(), resp, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if calls := resp.Message.ToolCalls; len(calls) != 1 || string(calls[0].Arguments) != c.args {
				t.Errorf("tool calls %+v; want arguments %s", calls, c.args)
			}
		})
	}
}

// TestStreamAnsweredWhole: a server that ignores "stream" and answers a
// streamed request with the whole message (JSON, not an event stream) has
// its reply taken as it is, in one request, its text heard as one piece:
// read as a stream it held no event, and the call was taken for one cut
// short and made again, each attempt billed, then failed. An error object
// so answered is retried as the same error in a stream is.
func TestStreamAnsweredWhole(t *testing.T) {
	whole := message(`[{"type": "text", "text": "Looking it up."}, {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": {"city": "Paris"}}]`, "tool_use", "")
	overloaded := apiError(200, "overloaded_error", "Overloaded")
	f := newFake(t, overloaded, whole, whole)
	req := longRequest()
	var text strings.Builder
	req.Stream = func(d agentrt.Delta) { text.WriteString(d.Text) }
	resp, err := f.model(t, fastRetry).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "stream", f.body(1)["stream"], `true`)
	if f.attempts() != 2 || text.String() != "Looking it up." {
		t.Errorf("%d attempts, text heard %q", f.attempts(), text.String())
	}
	if resp.Message.Content != "Looking it up." || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "weather" || resp.Usage.Input != 25 || resp.Usage.Output != 12 {
		t.Errorf("response %+v", resp)
	}
}
