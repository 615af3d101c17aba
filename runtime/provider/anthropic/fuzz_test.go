package anthropic

import (
	"fmt"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/retry"
)

// FuzzResponse: whatever a server sends as a reply, whole or streamed,
// Complete returns a response or an error, never panics, and keeps the key
// out of its error and of every delta it hands on. The SDK parses the
// body and the events; this package reads what it made of them.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Paris."}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`,
		`{"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":null}],"stop_reason":"max_tokens"}`,
		`{"content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"redacted_thinking","data":"d"}]}`,
		`{"content":"x"}`, `{"content":[null]}`, `[]`, `null`, ``,
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-SECRET-0123456789"}}`,
		`{"type":"message","content":[],"stop_reason":"refusal","stop_details":{"type":"refusal","explanation":"sk-ant-SECRET-0123456789"}}`,
	} {
		f.Add(200, false, []byte(s))
	}
	f.Add(401, false, []byte(`{"type":"error","error":{"type":"authentication_error","message":"sk-ant-SECRET-0123456789"}}`))
	var full strings.Builder
	for _, ev := range streamed {
		fmt.Fprintf(&full, "event: x\ndata: %s\n\n", ev)
	}
	f.Add(200, true, []byte(full.String()))
	f.Add(200, true, []byte(full.String()[:full.Len()/2]))
	f.Add(200, true, []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":9,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n"))
	f.Add(200, true, []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"sk-ant-SECRET-0123456789\"}}\n\n"))
	f.Add(200, true, []byte("event: message_stop\ndata: null\n\n"))
	f.Fuzz(func(t *testing.T, status int, stream bool, data []byte) {
		reply := replytest.Reply{Status: replytest.Status(status), ContentType: replytest.ContentType(stream), Body: data}
		m, err := New(Config{APIKey: secretKey, HTTPClient: reply.Client(), Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		req := &agentrt.Request{
			Model:      "claude-sonnet-4-5",
			Messages:   []agentrt.Message{{Role: agentrt.User, Content: "Weather in Paris?"}},
			Tools:      weatherTools,
			ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		}
		replytest.Complete(t, m, req, stream, secretKey)
	})
}
