package google

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// body answers every request with a status and a body, in process.
type body struct {
	status int
	data   []byte
}

func (b body) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{
		StatusCode: b.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b.data)), ContentLength: int64(len(b.data)), Request: req,
	}, nil
}

// FuzzResponse: whatever a server sends, Complete returns a response or an
// error, never panics, and keeps the key out of its error. The SDK parses
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
		f.Add(200, []byte(s))
	}
	f.Add(429, []byte(`{"error":{"code":429,"details":[{"@type":7}]}}`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		if status < 100 || status > 599 || status == 304 || (status >= 300 && status < 400) {
			status = 200
		}
		m, err := New(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: body{status, data}}, Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(t.Context(), toolRequest())
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
