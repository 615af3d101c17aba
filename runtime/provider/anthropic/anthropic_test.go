package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/retry"
)

const secretKey = "sk-ant-SECRET-0123456789"

// fake is a Messages API server: it serves scripted replies, one per
// attempt (the last one repeats), and keeps each request body it received.
type fake struct {
	t       testing.TB
	srv     *httptest.Server
	replies []http.HandlerFunc

	mu      sync.Mutex
	bodies  []map[string]any
	raws    [][]byte // the bodies as sent
	headers []http.Header
}

func newFake(t testing.TB, replies ...http.HandlerFunc) *fake {
	f := &fake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v\n%s", err, raw)
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.raws = append(f.raws, raw)
	f.headers = append(f.headers, r.Header.Clone())
	n := len(f.bodies)
	f.mu.Unlock()
	f.replies[min(n, len(f.replies))-1](w, r)
}

func (f *fake) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fake) body(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func (f *fake) model(t testing.TB, p retry.Policy) *Model {
	t.Helper()
	if p.Attempts == 0 {
		p = fastRetry
	}
	m, err := New(Config{APIKey: secretKey, BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Retry: p})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var fastRetry = retry.Policy{Attempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond, RetryAfterCap: time.Second}

// reply answers with a JSON body and status, as the API does.
func reply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_011CTest")
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func message(content, stopReason, usage string) http.HandlerFunc {
	if usage == "" {
		usage = `{"input_tokens": 25, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 12, "service_tier": "standard"}`
	}
	return reply(200, `{
  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": `+content+`,
  "stop_reason": "`+stopReason+`",
  "stop_sequence": null,
  "usage": `+usage+`
}`)
}

func apiError(status int, typ, msg string, header ...string) http.HandlerFunc {
	return reply(status, `{"type": "error", "error": {"type": "`+typ+`", "message": "`+msg+`"}, "request_id": "req_011CTest"}`, header...)
}

// jsonEq compares a decoded request field with the JSON it should be.
func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, want)
	}
}

func ptr[T any](v T) *T { return &v }

func TestPlainAnswer(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "Paris is "}, {"type": "text", "text": "the capital."}]`, "end_turn", ""))
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:           "claude-sonnet-4-5",
		Reasoning:       "low",
		Temperature:     ptr(0.2),
		MaxOutputTokens: 1000,
		Messages: []agentrt.Message{
			{Role: agentrt.System, Content: "Be brief."},
			{Role: agentrt.System, Content: "Answer in English."},
			{Role: agentrt.User, Content: "Capital of France?"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentrt.Response{
		Message: agentrt.Message{Role: agentrt.Assistant, Content: "Paris is the capital."},
		Usage:   agentrt.Usage{Input: 25, Output: 12},
		Model:   "claude-sonnet-4-5-20250929",
	}
	if !reflect.DeepEqual(*resp, want) {
		t.Errorf("response %+v, want %+v", *resp, want)
	}
	b := f.body(0)
	jsonEq(t, "model", b["model"], `"claude-sonnet-4-5"`)
	jsonEq(t, "max_tokens", b["max_tokens"], `1000`)
	jsonEq(t, "temperature", b["temperature"], `0.2`)
	jsonEq(t, "output_config", b["output_config"], `{"effort": "low"}`)
	jsonEq(t, "system", b["system"], `[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Answer in English."}]`)
	jsonEq(t, "messages", b["messages"], `[{"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}]`)
	for _, k := range []string{"tools", "tool_choice", "thinking", "stream"} {
		if v, ok := b[k]; ok {
			t.Errorf("request has %s = %v; want none", k, v)
		}
	}
	h := f.headers[0]
	if h.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	if !strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), secretKey) {
		t.Error("the key was not sent")
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""))
	_, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:    "claude-haiku-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	jsonEq(t, "max_tokens", b["max_tokens"], `4096`)
	for _, k := range []string{"temperature", "output_config", "system"} {
		if v, ok := b[k]; ok {
			t.Errorf("request has %s = %v; want none", k, v)
		}
	}
}

var weatherTools = []agentrt.ToolSpec{
	{Name: "get_weather", Description: "Current weather of a city.", Schema: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}`)},
	{Name: "answer", Description: "The final answer.", Schema: json.RawMessage(`{"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}`)},
}

func TestSeveralToolUses(t *testing.T) {
	f := newFake(t, message(`[
    {"type": "text", "text": "Let me check both."},
    {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Oslo"}}
  ]`, "tool_use", ""))
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:      "claude-sonnet-4-5",
		Messages:   []agentrt.Message{{Role: agentrt.User, Content: "Weather in Paris and Oslo?"}},
		Tools:      weatherTools,
		ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Let me check both." {
		t.Errorf("content %q", resp.Message.Content)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("got %d tool calls, want 2: %+v", len(calls), calls)
	}
	for i, want := range []struct{ id, args string }{{"toolu_01A", `{"city": "Paris"}`}, {"toolu_01B", `{"city": "Oslo"}`}} {
		if calls[i].ID != want.id || calls[i].Name != "get_weather" {
			t.Errorf("call %d = %s %s", i, calls[i].ID, calls[i].Name)
		}
		var got any
		if err := json.Unmarshal(calls[i].Arguments, &got); err != nil {
			t.Fatalf("call %d arguments: %v", i, err)
		}
		jsonEq(t, "arguments", got, want.args)
	}
	b := f.body(0)
	jsonEq(t, "tools", b["tools"], `[
    {"name": "get_weather", "description": "Current weather of a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}},
    {"name": "answer", "description": "The final answer.",
     "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}
  ]`)
	jsonEq(t, "tool_choice", b["tool_choice"], `{"type": "auto"}`)
}

func TestToolChoice(t *testing.T) {
	for _, tc := range []struct {
		choice agentrt.ToolChoice
		want   string
	}{
		{agentrt.ToolChoice{Mode: agentrt.ChooseAuto}, `{"type": "auto"}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseRequired}, `{"type": "any"}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseTool, Name: "answer"}, `{"type": "tool", "name": "answer"}`},
	} {
		t.Run(tc.choice.Mode, func(t *testing.T) {
			f := newFake(t, message(`[{"type": "tool_use", "id": "toolu_01C", "name": "answer", "input": {"summary": "Sunny."}}]`, "tool_use", ""))
			resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
				Model:      "claude-sonnet-4-5",
				Messages:   []agentrt.Message{{Role: agentrt.User, Content: "Summarise."}},
				Tools:      weatherTools,
				ToolChoice: tc.choice,
				OutputTool: "answer",
			})
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, "tool_choice", f.body(0)["tool_choice"], tc.want)
			if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"summary": "Sunny."}` {
				t.Errorf("tool calls %+v", resp.Message.ToolCalls)
			}
		})
	}
}

func TestToolResultsGrouped(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "Paris is sunny; Oslo is unknown."}]`, "end_turn", ""))
	_, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model: "claude-sonnet-4-5",
		Messages: []agentrt.Message{
			{Role: agentrt.System, Content: "Use the tools."},
			{Role: agentrt.User, Content: "Weather in Paris and Oslo?"},
			{Role: agentrt.Assistant, Content: "Checking.", ToolCalls: []agentrt.ToolCall{
				{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_01B", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			}},
			{Role: agentrt.ToolRole, ToolCallID: "toolu_01A", Name: "get_weather", Content: "sunny, 21C"},
			{Role: agentrt.ToolRole, ToolCallID: "toolu_01B", Name: "get_weather", Content: "station offline", IsError: true},
			{Role: agentrt.User, Content: "Now answer."},
		},
		Tools: weatherTools,
	})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "messages", f.body(0)["messages"], `[
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Oslo?"}]},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
      {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Oslo"}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_01A", "content": [{"type": "text", "text": "sunny, 21C"}]},
      {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "station offline"}], "is_error": true},
      {"type": "text", "text": "Now answer."}
    ]}
  ]`)
	jsonEq(t, "system", f.body(0)["system"], `[{"type": "text", "text": "Use the tools."}]`)
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		stop    string
		wantErr error
		calls   int
	}{
		{"max_tokens", `[{"type": "text", "text": "The answer is"}]`, "max_tokens", ErrTruncated, 0},
		// A tool_use block of a cut turn may be cut short, its input an
		// object that still fits the schema: no call of it is made.
		{"max_tokens with tool_use", `[{"type": "tool_use", "id": "toolu_01D", "name": "answer", "input": {"summary": "The results were strong, but"}}]`, "max_tokens", ErrTruncated, 0},
		{"refusal", `[]`, "refusal", ErrRefused, 0},
		{"end_turn with tool_use", `[{"type": "tool_use", "id": "toolu_01E", "name": "answer", "input": {}}]`, "end_turn", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, message(tc.content, tc.stop, ""))
			resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
				Model:    "claude-sonnet-4-5",
				Messages: []agentrt.Message{{Role: agentrt.User, Content: "Go."}},
				Tools:    weatherTools,
			})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "anthropic: ") {
					t.Errorf("error %q lacks the provider prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Message.ToolCalls) != tc.calls {
				t.Errorf("%d tool calls, want %d", len(resp.Message.ToolCalls), tc.calls)
			}
			if f.attempts() != 1 {
				t.Errorf("%d attempts", f.attempts())
			}
		})
	}
}

func TestUsageWithCache(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn",
		`{"input_tokens": 100, "cache_creation_input_tokens": 50, "cache_read_input_tokens": 900, "output_tokens": 20,
		  "cache_creation": {"ephemeral_5m_input_tokens": 50, "ephemeral_1h_input_tokens": 0}, "service_tier": "standard"}`))
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (agentrt.Usage{Input: 1050, Output: 20, Cached: 900, CacheWrite: 50}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
}

func TestRetried(t *testing.T) {
	ok := message(`[{"type": "text", "text": "ok"}]`, "end_turn", "")
	for _, tc := range []struct {
		name     string
		first    http.HandlerFunc
		minWait  time.Duration
		wantText string
	}{
		{"429 with retry-after", apiError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "Retry-After", "0.05"), 50 * time.Millisecond, "429 Too Many Requests: Number of request tokens"},
		{"500", apiError(500, "api_error", "Internal server error"), 0, "500 Internal Server Error: Internal server error"},
		{"529 overloaded", apiError(529, "overloaded_error", "Overloaded"), 0, "529 Overloaded: Overloaded"},
		{"connection dropped mid-response", dropMidResponse, 0, "anthropic: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.first, ok)
			var seen []error
			var waits []time.Duration
			p := fastRetry
			p.OnAttempt = func(_ int, err error, wait time.Duration) {
				seen = append(seen, err)
				waits = append(waits, wait)
			}
			resp, err := f.model(t, p).Complete(context.Background(), &agentrt.Request{
				Model:    "claude-sonnet-4-5",
				Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "ok" {
				t.Errorf("content %q", resp.Message.Content)
			}
			if f.attempts() != 2 || len(seen) != 1 {
				t.Fatalf("%d attempts, %d failures heard; want 2 and 1", f.attempts(), len(seen))
			}
			if !strings.Contains(seen[0].Error(), tc.wantText) {
				t.Errorf("failed attempt %q, want it to contain %q", seen[0], tc.wantText)
			}
			if waits[0] < tc.minWait {
				t.Errorf("waited %v, want at least %v (Retry-After)", waits[0], tc.minWait)
			}
			// Each attempt sends the same request.
			if !reflect.DeepEqual(f.body(0), f.body(1)) {
				t.Errorf("retry sent a different body")
			}
		})
	}
}

// dropMidResponse sends the start of a 200 response and hangs up.
func dropMidResponse(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"id\": \"msg_01\", \"type\": \"mess")
	buf.Flush()
	conn.Close()
}

func TestFinalErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		typ    string
		msg    string
		want   string
	}{
		{401, "authentication_error", "invalid x-api-key", "anthropic: 401 Unauthorized: invalid x-api-key (request-id req_011CTest)"},
		// A server that echoes the key must not get it into our errors.
		{401, "authentication_error", "Invalid API key: " + secretKey, "anthropic: 401 Unauthorized: Invalid API key: [redacted] (request-id req_011CTest)"},
		{400, "invalid_request_error", "max_tokens: Field required", "anthropic: 400 Bad Request: max_tokens: Field required (request-id req_011CTest)"},
		{403, "permission_error", "Your API key does not have permission to use the specified resource.", "anthropic: 403 Forbidden: Your API key does not have permission to use the specified resource. (request-id req_011CTest)"},
		{404, "not_found_error", "model: claude-nope", "anthropic: 404 Not Found: model: claude-nope (request-id req_011CTest)"},
	} {
		t.Run(tc.typ+"/"+tc.msg, func(t *testing.T) {
			f := newFake(t, apiError(tc.status, tc.typ, tc.msg))
			_, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
				Model:    "claude-sonnet-4-5",
				Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
			})
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%q, want\n%q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "Bearer") {
				t.Errorf("error leaks the key or headers: %q", err)
			}
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.Type != tc.typ {
				t.Errorf("error %#v is not the StatusError wanted", err)
			}
			if f.attempts() != 1 {
				t.Errorf("%d attempts; a %d is final", f.attempts(), tc.status)
			}
		})
	}
}

// TestNoKey: a server named by a base URL may be sent no key, and then
// gets no credential header at all; without a base URL a key is required.
func TestNoKey(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "Hi."}]`, "end_turn", ""))
	m, err := New(Config{BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), &agentrt.Request{Model: "claude-sonnet-4-5", Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	h := f.headers[0]
	for _, name := range []string{"Authorization", "X-Api-Key"} {
		if v, ok := h[name]; ok {
			t.Errorf("request without a key sent %s: %q", name, v)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a key or a base URL succeeded")
	}
}

func TestRetryAfterBeyondCapIsFinal(t *testing.T) {
	f := newFake(t, apiError(429, "rate_limit_error", "slow down", "Retry-After", "3600"))
	_, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
	})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 429 || f.attempts() != 1 {
		t.Errorf("error %v after %d attempts; want the 429 after 1", err, f.attempts())
	}
}

func TestDeadline(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.model(t, retry.Policy{}).Complete(ctx, &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v", d)
	}
	if f.attempts() != 1 {
		t.Errorf("%d attempts after the deadline", f.attempts())
	}
}

func TestCanceled(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.model(t, retry.Policy{}).Complete(ctx, &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestBadRequests(t *testing.T) {
	m, err := New(Config{APIKey: secretKey, BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	user := []agentrt.Message{{Role: agentrt.User, Content: "hi"}}
	for _, tc := range []struct {
		name string
		req  agentrt.Request
		want string
	}{
		{"reasoning", agentrt.Request{Model: "m", Reasoning: "extreme", Messages: user}, `unknown reasoning "extreme"`},
		{"tool choice", agentrt.Request{Model: "m", Messages: user, Tools: weatherTools, ToolChoice: agentrt.ToolChoice{Mode: "some"}}, `unknown tool choice mode "some"`},
		{"tool choice without name", agentrt.Request{Model: "m", Messages: user, Tools: weatherTools, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseTool}}, `names no tool`},
		{"role", agentrt.Request{Model: "m", Messages: []agentrt.Message{{Role: "developer", Content: "x"}}}, `message 0: unknown role "developer"`},
		{"schema", agentrt.Request{Model: "m", Messages: user, Tools: []agentrt.ToolSpec{{Name: "t", Schema: json.RawMessage(`{"type": "string"}`)}}}, `tool "t": schema has type string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Complete(context.Background(), &tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a key succeeded")
	}
}

// BenchmarkRound is one round's request building and response parsing
// against an in-process server: a conversation with tool results in, two
// tool calls out.
func BenchmarkRound(b *testing.B) {
	f := newFake(b, message(`[
    {"type": "text", "text": "Checking."},
    {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Oslo"}}
  ]`, "tool_use", ""))
	m := f.model(b, retry.Policy{})
	req := &agentrt.Request{
		Model: "claude-sonnet-4-5",
		Messages: []agentrt.Message{
			{Role: agentrt.System, Content: "Use the tools."},
			{Role: agentrt.User, Content: "Weather in Paris and Oslo?"},
			{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "toolu_00", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}},
			{Role: agentrt.ToolRole, ToolCallID: "toolu_00", Content: "sunny"},
		},
		Tools: weatherTools,
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNativeStructuredOutput(t *testing.T) {
	answer := `{"city":"Paris","population":2100000}`
	f := newFake(t, message(fmt.Sprintf(`[{"type": "text", "text": %q}]`, answer), "end_turn", ""))
	schema := `{"type":"object","properties":{"city":{"type":"string"},"population":{"type":"integer","description":"{minimum: 1}"}},"required":["city"],"additionalProperties":false}`
	resp, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:     "claude-sonnet-4-5",
		Reasoning: "medium",
		Messages:  []agentrt.Message{{Role: agentrt.User, Content: "Capital of France?"}},
		Answer:    &agentrt.AnswerFormat{Mode: plan.ModeNative, Name: "answer", Description: "The capital.", Schema: json.RawMessage(schema), Strict: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != answer {
		t.Errorf("content %q, want %q", resp.Message.Content, answer)
	}
	jsonEq(t, "output_config", f.body(0)["output_config"], `{"effort": "medium", "format": {"type": "json_schema", "schema": `+schema+`}}`)
}

func TestStrictToolAndPrompted(t *testing.T) {
	f := newFake(t, message(`[{"type": "text", "text": "ok"}]`, "end_turn", ""))
	tools := append([]agentrt.ToolSpec(nil), weatherTools...)
	tools[0].Strict = true
	_, err := f.model(t, retry.Policy{}).Complete(context.Background(), &agentrt.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "Weather?"}},
		Tools:    tools, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		Answer: &agentrt.AnswerFormat{Mode: plan.ModePrompted, Name: "answer", Description: "d", Schema: json.RawMessage(`{"type":"string"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	sent := b["tools"].([]any)
	if sent[0].(map[string]any)["strict"] != true {
		t.Errorf("strict tool sent as %v", sent[0])
	}
	if _, ok := sent[1].(map[string]any)["strict"]; ok {
		t.Errorf("non-strict tool sent with strict: %v", sent[1])
	}
	if oc, ok := b["output_config"]; ok {
		t.Errorf("prompted mode sent output_config %v", oc)
	}
}

// TestResponseTooLarge: a server that sends more than a reply to the
// request's max_tokens (4096 when the request sets none) can take fails
// the call with a clear error, once: the response is cut as it is read
// (replylimit.BodyBound, about 3.6 MB here), not read to the 32 MiB a response
// may hold and decoded.
func TestResponseTooLarge(t *testing.T) {
	huge := strings.Repeat("x", replylimit.MaxResponse)
	f := newFake(t, message(`[{"type": "text", "text": "`+huge+`"}]`, "end_turn", ""))
	_, err := f.model(t, retry.Policy{}).Complete(t.Context(), &agentrt.Request{Model: "claude-sonnet-4-5", Messages: []agentrt.Message{{Role: agentrt.User, Content: "Hi."}}})
	if err == nil || !strings.HasPrefix(err.Error(), "anthropic: the response's body passed ") || !strings.Contains(err.Error(), "4096 output tokens (the request's limit)") || !strings.Contains(err.Error(), "the response was cut") {
		t.Fatalf("err = %v", err)
	}
	if f.attempts() != 1 {
		t.Errorf("%d attempts, want 1", f.attempts())
	}
}
