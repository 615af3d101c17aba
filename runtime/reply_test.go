package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// TestCheckReply: the text, each call's ID, name and arguments (one
// token's bytes at least, replylimit.CallBytes) and the provider's state
// count; one byte past the bound is refused.
func TestCheckReply(t *testing.T) {
	bound := int(replylimit.ReplyBound(1))
	msg := agentrt.Message{Role: agentrt.Assistant, Content: "ab",
		ToolCalls: []agentrt.ToolCall{{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}},
		State:     &agentrt.ProviderState{Provider: "p", Data: json.RawMessage(`[]`)}}
	if n := agentrt.ReplySize(&msg); n != 2+replylimit.CallBytes+3 {
		t.Fatalf("ReplySize = %d, want %d", n, 2+replylimit.CallBytes+3)
	}
	msg.ToolCalls[0].Arguments = json.RawMessage(`{"city":"` + strings.Repeat("p", replylimit.CallBytes) + `"}`)
	if n := agentrt.ReplySize(&msg); n != int64(2+2+len(msg.ToolCalls[0].Arguments)+3) {
		t.Fatalf("ReplySize = %d, want the call's bytes past replylimit.CallBytes", n)
	}
	msg.ToolCalls[0].Arguments = json.RawMessage(`{}`)
	msg.Content = strings.Repeat("x", bound-replylimit.CallBytes-3)
	if err := agentrt.CheckReply(1, &msg); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	if err := agentrt.CheckReply(0, &msg); err != nil {
		t.Errorf("no limit: %v", err)
	}
	msg.State.Data = json.RawMessage(`[0]`)
	var re *replylimit.ReplyError
	if err := agentrt.CheckReply(1, &msg); !errors.As(err, &re) || re.Size != int64(bound+1) || re.Cut ||
		err.Error() != "the reply holds 65665 bytes of text and tool calls, more than 1 output tokens (the request's limit) can make (65664: 128 bytes a token and 64 KiB besides): the server did not keep to the limit, and the reply is refused" {
		t.Errorf("one byte past: %v", err)
	}
}
