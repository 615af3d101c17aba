package google

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

// body answers every request with a status and a body, in process.
type body struct {
	status int
	data   []byte
	stream bool
}

func (b body) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{
		StatusCode: b.status, Header: http.Header{"Content-Type": {map[bool]string{false: "application/json", true: "text/event-stream"}[b.stream]}},
		Body: io.NopCloser(bytes.NewReader(b.data)), ContentLength: int64(len(b.data)), Request: req,
	}, nil
}

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
	f.Fuzz(func(t *testing.T, status int, stream bool, data []byte) {
		if status < 100 || status > 599 || status == 304 || (status >= 300 && status < 400) {
			status = 200
		}
		m, err := New(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: body{status, data, stream}}, Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		req := toolRequest()
		if stream {
			req.Stream = func(d agentrt.Delta) {
				if strings.Contains(fmt.Sprintf("%+v", d), testKey) {
					t.Errorf("a piece holds the key: %+v", d)
				}
			}
		}
		resp, err := m.Complete(t.Context(), req)
		if err != nil {
			noSecret(t, err)
			return
		}
		if resp.Message.Role != agentrt.Assistant {
			t.Errorf("role %q", resp.Message.Role)
		}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" || len(c.Arguments) == 0 || c.Arguments[0] != '{' {
				t.Errorf("call %+v", c)
			}
		}
	})
}
