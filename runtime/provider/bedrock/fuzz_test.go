package bedrock

import (
	"bytes"
	"encoding/json"
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
// error, never panics, keeps the credentials out of its error, and gives
// tool calls arguments that are JSON objects. Seeds in testdata/fuzz.
func FuzzResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		if status < 100 || status > 599 || (status >= 300 && status < 400) {
			status = 200
		}
		m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: "http://bedrock.test",
			HTTPClient: &http.Client{Transport: body{status, data}}, Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(t.Context(), &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
		if err != nil {
			noSecret(t, err.Error())
			return
		}
		for _, c := range resp.Message.ToolCalls {
			var v map[string]any
			if json.Unmarshal(c.Arguments, &v) != nil || v == nil {
				t.Errorf("arguments %s", c.Arguments)
			}
		}
		if st := resp.Message.State; st != nil {
			if _, err := decodeState(st.Data); err != nil {
				t.Errorf("the state given does not read back: %v", err)
			}
		}
	})
}

// FuzzState: a message's state, which a journal holds and this package
// reads back, is read or refused, never a panic.
func FuzzState(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := decodeState(data)
		if err == nil && len(blocks) > maxStateBlocks {
			t.Errorf("%d blocks", len(blocks))
		}
	})
}
