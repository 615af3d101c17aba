package google

import (
	"testing"

	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/retry"
)

// FuzzResponse: whatever a server sends, whole or streamed, Complete
// returns a response or an error, never panics, and keeps the key out of
// its error and of every streamed piece. The SDK parses
// the body (through untyped maps); this package reads what it made of it.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"Paris."}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1,{"b":null}]}}}]}}],"responseId":"r"}`,
		`{"candidates":{"0":1}}`,
		`{"candidates":[{"content":{"parts":"x"}}]}`,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"error":{"code":429,"message":"AIzaTest-SECRET-key","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]}}`,
		`[]`, `null`, ``, `{"candidates":[null]}`,
	} {
		f.Add(200, false, []byte(s))
		f.Add(200, true, []byte("data: "+s+"\r\n\r\n"))
	}
	f.Add(429, false, []byte(`{"error":{"code":429,"details":[{"@type":7}]}}`))
	f.Add(200, true, []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Pa\"}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ris.\"}]},\"finishReason\":\"STOP\"}]}\n\n"))
	// A model may write the header's name or "Bearer": only the key must not show.
	f.Add(200, true, []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Use a Bearer token in x-goog-api-key.\"}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Fuzz(func(t *testing.T, status int, stream bool, data []byte) {
		reply := replytest.Reply{Status: replytest.Status(status), ContentType: replytest.ContentType(stream), Body: data}
		m, err := New(Config{APIKey: testKey, HTTPClient: reply.Client(), Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		// The server's own message, which an error repeats, may say them.
		resp := replytest.Complete(t, m, toolRequest(), stream, testKey, replytest.NotIn(data, "x-goog-api-key", "Bearer")...)
		if resp == nil {
			return
		}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" || len(c.Arguments) == 0 || c.Arguments[0] != '{' {
				t.Errorf("call %+v", c)
			}
		}
	})
}
