package runtime

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInputBoundKept: a run keeps its conversation's share of the input
// bound and adds only what new messages add; round after round it equals
// the bound measured afresh, and a conversation that starts again (shorter)
// is measured afresh.
func TestInputBoundKept(t *testing.T) {
	var c convSizes
	req := &Request{Tools: []ToolSpec{{Name: "lookup", Description: "looks up", Schema: json.RawMessage(`{"type":"object"}`)}}}
	check := func(step string) {
		t.Helper()
		if got, want := inputBound(req, &c), InputBound(req); got != want {
			t.Fatalf("%s: kept bound %d, measured afresh %d", step, got, want)
		}
	}
	check("no messages")
	req.Messages = append(req.Messages, Message{Role: System, Content: "be brief"}, Message{Role: User, Parts: []Part{{Text: "the text"}}})
	check("first round")
	for i := range 20 {
		req.Messages = append(req.Messages,
			Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "c" + strings.Repeat("1", i), Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}}},
			Message{Role: ToolRole, ToolCallID: "c", Name: "lookup", Content: strings.Repeat("r", i*7)})
		check("a later round")
	}
	long := inputBound(req, &c)
	req.Messages = req.Messages[:1]
	check("a conversation started again")
	if short := inputBound(req, &c); short >= long {
		t.Fatalf("the bound did not shrink with the conversation: %d, then %d", long, short)
	}
	req.Messages = nil
	check("no messages again")
}

// TestInputBoundAllocatesNothing: InputBound, which a pool's every
// reservation reads, measures a conversation without allocating.
func TestInputBoundAllocatesNothing(t *testing.T) {
	req := &Request{Messages: []Message{{Role: System, Content: "be brief"}, {Role: User, Parts: []Part{{Text: "the text"}}},
		{Role: Assistant, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}}}}}
	if n := testing.AllocsPerRun(100, func() { InputBound(req) }); n != 0 {
		t.Fatalf("InputBound allocated %v times a call", n)
	}
}
