package openai

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// canned answers every request with a status, a content type and a body,
// in process.
type canned struct {
	status      int
	contentType string
	data        []byte
}

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{
		StatusCode: c.status, Header: http.Header{"Content-Type": {c.contentType}},
		Body: io.NopCloser(bytes.NewReader(c.data)), ContentLength: int64(len(c.data)), Request: req,
	}, nil
}

// FuzzResponse: whatever a server sends as a reply (Chat Completions or
// Responses, whole or streamed), Complete returns a response or an error,
// never panics, and keeps the key out of its error and of every delta it
// hands on. The SDK parses the body; this package reads what it made of it
// and, for a stream, puts the chunks together.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
		`{"choices":[{"message":{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"answer","arguments":"{\"text\":\"x\"}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"content_filter"}]}`,
		`{"choices":[{"message":{},"finish_reason":"length"}]}`,
		`{"choices":[]}`, `{"choices":{"0":1}}`, `[]`, `null`, ``,
		`{"error":{"message":"Incorrect API key provided: sk-test-SECRET","type":"invalid_request_error","code":"invalid_api_key"}}`,
		`{"status":"completed","output":[{"type":"function_call","call_id":"c","name":"answer","arguments":"{}"}]}`,
	} {
		f.Add(200, false, false, []byte(s))
		f.Add(200, false, true, []byte(s))
	}
	f.Add(401, false, false, []byte(`{"error":{"message":"Incorrect API key provided: sk-test-SECRET"}}`))
	f.Add(200, true, false, []byte(sseBody(streamed, true)))
	f.Add(200, true, false, []byte(sseBody(streamed[:4], false)))
	f.Add(200, true, false, []byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":7,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	f.Add(200, true, false, []byte("event: error\ndata: {\"error\":{\"message\":\"sk-test-SECRET\"}}\n\n"))
	f.Add(200, true, true, []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Pa\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"Paris.\"}]}]}}\n\n"))
	f.Add(200, true, true, []byte("data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"x\",\"delta\":\"{\"}\n\n"))
	f.Fuzz(func(t *testing.T, status int, stream, responses bool, data []byte) {
		if status < 100 || status > 599 || status == 304 || (status >= 300 && status < 400) {
			status = 200
		}
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		api := APIChat
		if responses {
			api = APIResponses
		}
		m, err := New(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: canned{status, ct, data}}, Retry: retry.Policy{Attempts: 1}, API: api})
		if err != nil {
			t.Fatal(err)
		}
		req := toolRequest()
		if stream {
			req.Stream = func(d agentrt.Delta) {
				if strings.Contains(fmt.Sprintf("%+v", d), testKey) {
					t.Errorf("a delta holds the key: %+v", d)
				}
			}
		}
		resp, err := m.Complete(t.Context(), req)
		if err != nil {
			if strings.Contains(fmt.Sprintf("%v %+v", err, err), testKey) {
				t.Errorf("the error holds the key: %v", err)
			}
			return
		}
		if resp.Message.Role != agentrt.Assistant {
			t.Errorf("role %q", resp.Message.Role)
		}
		if resp.Usage.Input < 0 || resp.Usage.Output < 0 || resp.Usage.Cached < 0 || resp.Usage.CacheWrite < 0 {
			t.Errorf("usage %+v", resp.Usage)
		}
	})
}

// sseBody is a Chat Completions stream of chunks, ended by [DONE] when
// done.
func sseBody(chunks []string, done bool) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}
