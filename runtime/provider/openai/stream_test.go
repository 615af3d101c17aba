package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// sse writes chunks as a Chat Completions stream: each a data line,
// flushed; done ends it with [DONE]. hold, when set, is waited on after
// the second chunk (the first with text).
func sse(chunks []string, done bool, hold <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for i, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
			if i == 1 && hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
		}
		if done {
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}
}

// chunk is one chat.completion.chunk with a choice delta and finish
// reason ("" for none).
func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","system_fingerprint":"fp_1","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`, delta, f)
}

var streamed = []string{
	chunk(`{"role":"assistant","content":"","refusal":null}`, ""),
	chunk(`{"content":"Let me "}`, ""),
	chunk(`{"content":"answer."}`, ""),
	chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"answer","arguments":""}}]}`, ""),
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]}`, ""),
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris.\"}"}}]}`, ""),
	chunk(`{}`, "tool_calls"),
	`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`,
}

// TestStream: a request that asks for the reply as it comes is streamed
// (stream and stream_options in a body valid by OpenAI's spec); each
// piece of text and of the output tool's arguments reaches the caller
// while the server still holds the rest, and the reply is the whole
// completion, usage included.
func TestStream(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, sse(streamed, true, release))
	m := newModel(t, f, nil)
	var got []agentrt.Delta
	req := toolRequest()
	req.Stream = func(d agentrt.Delta) {
		if len(got) == 0 {
			close(release) // the first piece came before the rest was sent
		}
		got = append(got, d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound, not a measure
	defer cancel()
	resp, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var text, answer strings.Builder
	for _, d := range got {
		text.WriteString(d.Text)
		answer.WriteString(d.Answer)
		if d.Restart {
			t.Error("a restart in a stream that did not fail")
		}
	}
	if text.String() != "Let me answer." || answer.String() != `{"text":"Paris."}` {
		t.Errorf("deltas: text %q, answer %q", text.String(), answer.String())
	}
	if resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"text":"Paris."}` {
		t.Errorf("message %+v", resp.Message)
	}
	if resp.Usage.Input != 12 || resp.Usage.Output != 9 {
		t.Errorf("usage %+v", resp.Usage)
	}
	body := f.body(0)
	equalJSON(t, "stream", body["stream"], `true`)
	equalJSON(t, "stream_options", body["stream_options"], `{"include_usage":true}`)
}

// TestStreamCut: a stream that ends before its finish_reason is tried
// again; the caller hears the restart, and the reply is the second
// attempt's. A stream without usage is a reply without usage.
func TestStreamCut(t *testing.T) {
	a := &attempts{}
	f := newFake(t, sse(streamed[:3], false, nil), sse(streamed[:7], true, nil))
	m := newModel(t, f, a)
	var restarts int
	var text strings.Builder
	req := toolRequest()
	req.Stream = func(d agentrt.Delta) {
		if d.Restart {
			restarts++
			text.Reset()
		}
		text.WriteString(d.Text)
	}
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if restarts != 1 || f.requests() != 2 || len(a.errs) != 1 {
		t.Errorf("%d restarts, %d requests, %d failed attempts; want 1, 2, 1", restarts, f.requests(), len(a.errs))
	}
	if text.String() != "Let me answer." || resp.Message.Content != "Let me answer." {
		t.Errorf("text %q, message %q", text.String(), resp.Message.Content)
	}
	if resp.Usage != (agentrt.Usage{}) {
		t.Errorf("usage %+v from a stream that sent none", resp.Usage)
	}
}

// TestStreamError: an error status is the same error streamed or not.
func TestStreamError(t *testing.T) {
	f := newFake(t, apiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey))
	m := newModel(t, f, nil)
	req := request()
	req.Stream = func(agentrt.Delta) { t.Error("a delta of a refused request") }
	_, err := m.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "openai: 401") || strings.Contains(err.Error(), testKey) {
		t.Errorf("error %v", err)
	}
}

// responseEvents streams a Responses API reply: the output items added,
// text and the output tool's arguments in deltas, and the response whole
// in response.completed; cut leaves out the last n events.
func responseEvents(cut int) http.HandlerFunc {
	whole := `{"id":"resp_s","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,` +
		`"instructions":null,"max_output_tokens":null,"model":"gpt-test-2025-04-14","output":[` + textItem("Let me answer.") + `,` + callItem("call_1", "answer", `{"text":"Paris."}`) + `],` +
		`"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1.0,` +
		`"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":` + defaultUsage + `,"user":null,"metadata":{}}`
	events := []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_s","object":"response","created_at":1741476542,"status":"in_progress","output":[],"model":"gpt-test-2025-04-14"}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Let me "}`,
		`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"answer."}`,
		`{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"type":"function_call","id":"fc_call_1","call_id":"call_1","name":"answer","arguments":"","status":"in_progress"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_call_1","output_index":1,"delta":"{\"text\":"}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":6,"item_id":"fc_call_1","output_index":1,"delta":"\"Paris.\"}"}`,
		`{"type":"response.completed","sequence_number":7,"response":` + whole + `}`,
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events[:len(events)-cut] {
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal([]byte(ev), &head)
			var line bytes.Buffer
			_ = json.Compact(&line, []byte(ev)) // an event's data is one line
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, line.Bytes())
			w.(http.Flusher).Flush()
		}
	}
}

// TestResponsesStream: on the Responses API, a request that asks for the
// reply as it comes is streamed (stream in a body valid by OpenAI's
// spec); the text and the output tool's arguments reach the caller in
// their pieces, and the reply is the response.completed event's; a
// stream cut before it is tried again, the caller told.
func TestResponsesStream(t *testing.T) {
	f := newResponsesFake(t, responseEvents(1), responseEvents(0))
	m := newResponsesModel(t, f, nil)
	req := toolRequest()
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
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if restarts != 1 || f.requests() != 2 {
		t.Errorf("%d restarts, %d requests", restarts, f.requests())
	}
	if text.String() != "Let me answer." || answer.String() != `{"text":"Paris."}` {
		t.Errorf("deltas: text %q, answer %q", text.String(), answer.String())
	}
	if resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || resp.Usage.Input != 10 {
		t.Errorf("response %+v", resp)
	}
	equalJSON(t, "stream", f.body(0)["stream"], `true`)
}

// TestStreamEndless: a server that streams text for ever (or past what
// agentc takes of a response) fails the call at the response bound, not
// at the deadline, and holds no more of it in memory.
func TestStreamEndless(t *testing.T) {
	piece := chunk(`{"content":"`+strings.Repeat("x", 4000)+`"}`, "")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", piece); err != nil {
				return
			}
		}
	})
	m := newModel(t, f, nil)
	req := request()
	n := 0
	req.Stream = func(d agentrt.Delta) { n += len(d.Text) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	_, err := m.Complete(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v", err)
	}
	if n > 33<<20 {
		t.Errorf("%d bytes of text were passed on", n)
	}
}

// TestStreamUsageCumulative: a server that reports usage in every chunk
// (what the completion has used so far, not what the chunk added) is
// read by its last report; OpenAI's own, usage in the last chunk alone
// and null in the others, is read as before. The chunks' reports were
// added up: 40 chunks of a 100-token prompt counted 4,000 tokens in.
func TestStreamUsageCumulative(t *testing.T) {
	withUsage := func(c, usage string) string { return strings.TrimSuffix(c, "}") + `,"usage":` + usage + `}` }
	var every, last []string
	for i := range 40 {
		d, finish := fmt.Sprintf(`{"content":"%d "}`, i), ""
		if i == 39 {
			d, finish = `{}`, "stop"
		}
		c := chunk(d, finish)
		every = append(every, withUsage(c, fmt.Sprintf(`{"prompt_tokens":100,"completion_tokens":%d,"total_tokens":%d}`, i+1, 100+i+1)))
		last = append(last, withUsage(c, "null"))
	}
	last = append(last, `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140}}`)
	for name, chunks := range map[string][]string{"every chunk": every, "the last chunk": last} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, sse(chunks, true, nil))
			req := request()
			req.Stream = func(agentrt.Delta) {}
			resp, err := newModel(t, f, nil).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if u := resp.Usage; u.Input != 100 || u.Output != 40 {
				t.Errorf("usage %+v, want 100 in and 40 out", u)
			}
		})
	}
}

// TestStreamErrorEvent: an error a Chat Completions stream sends after it
// began is tried again when it is the server's own failure (OpenAI's
// server_error, a gateway's code of a status that is retried: an
// upstream that failed mid-reply), as the same failure of a plain request
// and Anthropic's overloaded_error in a stream are; the caller hears the
// restart. Any other is final. Each was final.
func TestStreamErrorEvent(t *testing.T) {
	for _, tc := range []struct {
		name, event string
		again       bool
	}{
		{"server error", `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, true},
		{"a gateway's 502", `{"error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`, true},
		{"a gateway's 400", `{"error":{"code":400,"message":"Bad request"}}`, false},
		{"invalid request", `{"error":{"message":"Invalid 'messages'","type":"invalid_request_error","param":"messages","code":null}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attempts{}
			f := newFake(t, sse(append(slices.Clip(streamed[:3]), tc.event), false, nil), sse(streamed, true, nil))
			var restarts int
			req := toolRequest()
			req.Stream = func(d agentrt.Delta) {
				if d.Restart {
					restarts++
				}
			}
			resp, err := newModel(t, f, a).Complete(t.Context(), req)
			if len(a.errs) == 0 || !strings.HasPrefix(a.errs[0].Error(), "openai: received error while streaming: ") {
				t.Fatalf("failed attempts %v, want the error event first", a.errs)
			}
			if !tc.again {
				if err == nil || f.requests() != 1 {
					t.Errorf("%d requests, error %v; want one, failing", f.requests(), err)
				}
				return
			}
			if err != nil || resp.Message.Content != "Let me answer." || f.requests() != 2 || restarts != 1 {
				t.Errorf("%d requests, %d restarts, error %v; want the second to answer", f.requests(), restarts, err)
			}
		})
	}
}

// TestStreamAnsweredWhole: a server that ignores "stream" and answers a
// streamed request with the whole completion (JSON, not an event stream)
// has its reply taken as it is, in one request, its text and the output
// tool's arguments heard as a piece each: read as a stream it held no
// event, and the call was taken for one cut short and made again, each
// attempt billed, then failed. Likewise the Responses API's whole object.
func TestStreamAnsweredWhole(t *testing.T) {
	chat := completion(`{"role": "assistant", "content": "Let me answer.", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "answer", "arguments": "{\"text\":\"Paris.\"}"}}]}`, "tool_calls", "")
	responses := responseObject("completed", "", textItem("Let me answer.")+","+callItem("call_1", "answer", `{"text":"Paris."}`), `{"input_tokens": 10, "output_tokens": 5}`)
	for _, tc := range []struct {
		name  string
		model func(*testing.T, *fake, *attempts) *Model
		fake  func(*testing.T, ...http.HandlerFunc) *fake
		reply http.HandlerFunc
	}{
		{"chat", newModel, func(t *testing.T, h ...http.HandlerFunc) *fake { return newFake(t, h...) }, chat},
		{"responses", newResponsesModel, func(t *testing.T, h ...http.HandlerFunc) *fake { return newResponsesFake(t, h...) }, responses},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake(t, tc.reply, tc.reply)
			a := &attempts{}
			req := toolRequest()
			var text, answer strings.Builder
			req.Stream = func(d agentrt.Delta) {
				text.WriteString(d.Text)
				answer.WriteString(d.Answer)
			}
			resp, err := tc.model(t, f, a).Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if f.requests() != 1 || len(a.errs) != 0 {
				t.Errorf("%d requests, failed attempts %v", f.requests(), a.errs)
			}
			if text.String() != "Let me answer." || answer.String() != `{"text":"Paris."}` {
				t.Errorf("deltas: text %q, answer %q", text.String(), answer.String())
			}
			if resp.Message.Content != "Let me answer." || len(resp.Message.ToolCalls) != 1 || resp.Usage.Input != 10 || resp.Usage.Output != 5 {
				t.Errorf("response %+v", resp)
			}
			equalJSON(t, "stream", f.body(0)["stream"], `true`)
		})
	}
}

// TestStreamLabelledJSON: an event stream its server labels
// application/json is read as the stream it is, as the SDK reads one
// whatever it is labelled; only a body that begins as a JSON document is
// a whole reply.
func TestStreamLabelledJSON(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "\n"+sseBody(streamed, true))
	})
	req := toolRequest()
	var text strings.Builder
	req.Stream = func(d agentrt.Delta) { text.WriteString(d.Text) }
	resp, err := newModel(t, f, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if f.requests() != 1 || text.String() != "Let me answer." || resp.Message.Content != "Let me answer." || resp.Usage.Input != 12 {
		t.Errorf("%d requests, text heard %q, response %+v", f.requests(), text.String(), resp)
	}
}

// TestStreamAnsweredWholeBounded: a whole reply to a streamed request is
// held to what a whole reply may weigh for the output tokens the request
// allowed (replylimit.BodyBound), as a reply to a request for one is, not
// to the 32 MiB a stream may: a megabyte for 16 tokens fails the call.
func TestStreamAnsweredWholeBounded(t *testing.T) {
	big := completion(fmt.Sprintf(`{"role": "assistant", "content": %q}`, strings.Repeat("x", 1<<20)), "stop", "")
	f := newFake(t, big, big)
	req := toolRequest()
	req.MaxOutputTokens = 16
	req.Stream = func(agentrt.Delta) {}
	_, err := newModel(t, f, &attempts{}).Complete(context.Background(), req)
	var re *replylimit.ReplyError
	if !errors.As(err, &re) || re.Tokens != 16 || !re.Body || f.requests() != 1 {
		t.Errorf("%d requests, error %v; want the reply past 16 tokens' bound refused", f.requests(), err)
	}
}
