package limit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

// TestReplyBound: 128 bytes a token and 64 KiB besides; no bound for a
// request that set no limit, and never past what a response may hold.
func TestReplyBound(t *testing.T) {
	for _, tc := range []struct{ tokens, want int64 }{
		{0, 0}, {-1, 0}, {1, 128 + 65536}, {256, 256*128 + 65536}, {16384, 16384*128 + 65536},
		{1 << 40, MaxResponse + 65536}, {1<<63 - 1, MaxResponse + 65536},
	} {
		if got := ReplyBound(tc.tokens); got != tc.want {
			t.Errorf("ReplyBound(%d) = %d, want %d", tc.tokens, got, tc.want)
		}
	}
}

// TestCheckReply: the text, each call's ID, name and arguments (one
// token's bytes at least, CallBytes) and the provider's state count; one
// byte past the bound is refused.
func TestCheckReply(t *testing.T) {
	bound := int(ReplyBound(1))
	msg := agentrt.Message{Role: agentrt.Assistant, Content: "ab",
		ToolCalls: []agentrt.ToolCall{{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}},
		State:     &agentrt.ProviderState{Provider: "p", Data: json.RawMessage(`[]`)}}
	if n := ReplySize(&msg); n != 2+CallBytes+3 {
		t.Fatalf("ReplySize = %d, want %d", n, 2+CallBytes+3)
	}
	msg.ToolCalls[0].Arguments = json.RawMessage(`{"city":"` + strings.Repeat("p", CallBytes) + `"}`)
	if n := ReplySize(&msg); n != int64(2+2+len(msg.ToolCalls[0].Arguments)+3) {
		t.Fatalf("ReplySize = %d, want the call's bytes past CallBytes", n)
	}
	msg.ToolCalls[0].Arguments = json.RawMessage(`{}`)
	msg.Content = strings.Repeat("x", bound-CallBytes-3)
	if err := CheckReply(1, &msg); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	if err := CheckReply(0, &msg); err != nil {
		t.Errorf("no limit: %v", err)
	}
	msg.State.Data = json.RawMessage(`[0]`)
	var re *ReplyError
	if err := CheckReply(1, &msg); !errors.As(err, &re) || re.Size != int64(bound+1) || re.Cut ||
		err.Error() != "the reply holds 65665 bytes of text and tool calls, more than 1 output tokens (the request's limit) can make (65664: 128 bytes a token and 64 KiB besides): the server did not keep to the limit, and the reply is refused" {
		t.Errorf("one byte past: %v", err)
	}
}

// TestReplyMeter: a stream is cut at the piece that passes the bound,
// and every piece after; a meter for no limit, and a nil one, cut nothing.
func TestReplyMeter(t *testing.T) {
	r := NewReply(1)
	if err := r.Add(65664); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	for range 2 {
		var re *ReplyError
		if err := r.Add(1); !errors.As(err, &re) || !re.Cut || !strings.Contains(err.Error(), "the stream was cut") {
			t.Fatalf("past the bound: %v", err)
		}
	}
	var none *Reply
	for _, r := range []*Reply{NewReply(0), none} {
		if err := r.Add(1 << 30); err != nil {
			t.Errorf("no bound: %v", err)
		}
	}
}
