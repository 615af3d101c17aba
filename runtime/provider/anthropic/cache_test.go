package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// cachedConversation is a request of a later round: instructions, tools,
// a tool call and its results.
func cachedConversation(cache bool) *agentrt.Request {
	return &agentrt.Request{
		Model: "claude-sonnet-4-5",
		Messages: []agentrt.Message{
			{Role: agentrt.System, Content: "Use the tools."},
			{Role: agentrt.System, Content: "Answer in English."},
			{Role: agentrt.User, Content: "Weather in Paris and Oslo?"},
			{Role: agentrt.Assistant, Content: "Checking.", ToolCalls: []agentrt.ToolCall{
				{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_01B", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			}},
			{Role: agentrt.ToolRole, ToolCallID: "toolu_01A", Name: "get_weather", Content: "sunny, 21C"},
			{Role: agentrt.ToolRole, ToolCallID: "toolu_01B", Name: "get_weather", Content: "station offline", IsError: true},
		},
		Tools:      weatherTools,
		ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		Cache:      cache,
		CacheKey:   "0123456789abcdef",
	}
}

// TestCacheBreakpoints: a request that asks for caching carries an
// ephemeral breakpoint on its last tool, its last system block and the
// last block of its last message, and nowhere else; cache reads and
// writes come back as usage.
func TestCacheBreakpoints(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "Paris is sunny."}]`, "end_turn",
		`{"input_tokens": 12, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 1200, "output_tokens": 8,
		  "cache_creation": {"ephemeral_5m_input_tokens": 300, "ephemeral_1h_input_tokens": 0}, "service_tier": "standard"}`))
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), cachedConversation(true))
	if err != nil {
		t.Fatal(err)
	}
	if want := (agentrt.Usage{Input: 1512, Output: 8, Cached: 1200, CacheWrite: 300}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	b := f.body(0)
	jsonEq(t, "tools", b["tools"], `[
    {"name": "get_weather", "description": "Current weather of a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}},
    {"name": "answer", "description": "The final answer.",
     "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
     "cache_control": {"type": "ephemeral"}}
  ]`)
	jsonEq(t, "system", b["system"], `[{"type": "text", "text": "Use the tools."},
    {"type": "text", "text": "Answer in English.", "cache_control": {"type": "ephemeral"}}]`)
	jsonEq(t, "messages", b["messages"], `[
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Oslo?"}]},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
      {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Oslo"}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_01A", "content": [{"type": "text", "text": "sunny, 21C"}]},
      {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "station offline"}], "is_error": true,
       "cache_control": {"type": "ephemeral"}}
    ]}
  ]`)
	if n := breakpoints(t, b); n != 3 {
		t.Errorf("%d breakpoints, want 3 (the API takes at most 4)", n)
	}
	if _, ok := b["prompt_cache_key"]; ok {
		t.Error("the request has a prompt_cache_key, which the Messages API does not take")
	}
}

// TestCacheBreakpointsFirstTurn: a run's first call writes the tools and
// the instructions to the cache, which the run's later calls and the next
// runs of the agent read, but not its conversation: that is the run's own
// input (a document, as often as not), which no other call reads, and a
// write costs more than input. A request without tools or instructions
// asks for nothing.
func TestCacheBreakpointsFirstTurn(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""), message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""))
	m := f.model(t, retry.Policy{})
	_, err := m.Complete(context.Background(), &agentrt.Request{
		Model:    "claude-haiku-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
		Cache:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	jsonEq(t, "messages", b["messages"], `[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]`)
	if n := breakpoints(t, b); n != 0 {
		t.Errorf("%d breakpoints, want 0", n)
	}
	_, err = m.Complete(context.Background(), &agentrt.Request{
		Model:    "claude-haiku-4-5",
		Messages: []agentrt.Message{{Role: agentrt.System, Content: "Be brief."}, {Role: agentrt.User, Content: "a long document"}},
		Cache:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	b = f.body(1)
	jsonEq(t, "messages", b["messages"], `[{"role": "user", "content": [{"type": "text", "text": "a long document"}]}]`)
	if n := breakpoints(t, b); n != 1 {
		t.Errorf("%d breakpoints, want 1: the instructions'", n)
	}
}

// TestNoCacheBreakpoints: a request that does not ask for caching (the
// manifest's model.cache false) carries no cache_control.
func TestNoCacheBreakpoints(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""))
	if _, err := f.model(t, retry.Policy{}).Complete(context.Background(), cachedConversation(false)); err != nil {
		t.Fatal(err)
	}
	if n := breakpoints(t, f.body(0)); n != 0 {
		t.Errorf("%d breakpoints, want none", n)
	}
}

// breakpoints counts the cache_control members of a request body.
func breakpoints(t *testing.T, body map[string]any) int {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), `"cache_control"`)
}
