package openai

import (
	"fmt"
	"strings"
	"testing"

	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/retry"
)

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
		`{"status":"failed","error":{"code":"invalid_api_key","message":"Incorrect API key provided: sk-test-SECRET"},"output":[]}`,
		`{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":-1}}`,
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
		api := APIChat
		if responses {
			api = APIResponses
		}
		reply := replytest.Reply{Status: replytest.Status(status), ContentType: replytest.ContentType(stream), Body: data}
		m, err := New(Config{APIKey: testKey, HTTPClient: reply.Client(), Retry: retry.Policy{Attempts: 1}, API: api})
		if err != nil {
			t.Fatal(err)
		}
		replytest.Complete(t, m, toolRequest(), stream, testKey)
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
