package bedrock

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replytest"
	"agentc.dev/agentc/runtime/provider/retry"
)

// FuzzResponse: whatever a server sends, Complete returns a response or an
// error, never panics, keeps the credentials out of its error, and gives
// tool calls arguments that are JSON objects. Seeds in testdata/fuzz.
func FuzzResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		reply := replytest.Reply{Status: replytest.Status(status), ContentType: "application/json", Body: data}
		m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: "http://bedrock.test",
			HTTPClient: reply.Client(), Retry: retry.Policy{Attempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		req := &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
		resp := replytest.Complete(t, m, req, false, testAKID, testSecret, url.QueryEscape(testSecret), strings.ReplaceAll(testSecret, "/", `\/`))
		if resp == nil {
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
