package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/retry"
)

const testKey = "sk-test-SECRET"

// fake is an OpenAI-compatible server that answers each request with the
// next of its replies and keeps the bodies it received.
type fake struct {
	t       *testing.T
	mu      sync.Mutex
	replies []http.HandlerFunc
	bodies  [][]byte
	auth    []string
	srv     *httptest.Server
	// path is the endpoint it answers; check validates each body.
	path  string
	check func(*testing.T, []byte)
}

func newFake(t *testing.T, replies ...http.HandlerFunc) *fake {
	t.Helper()
	return newFakeAt(t, "/chat/completions", checkRequestSchema, replies...)
}

func newFakeAt(t *testing.T, path string, check func(*testing.T, []byte), replies ...http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t, replies: replies, path: path, check: check}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != f.path {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	f.check(f.t, body)
	if n >= len(f.replies) {
		http.Error(w, "no more replies", http.StatusTeapot)
		return
	}
	f.replies[n](w, r)
}

func (f *fake) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// body decodes the nth request body.
func (f *fake) body(n int) map[string]any {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.bodies) {
		f.t.Fatalf("request %d was never made (%d made)", n, len(f.bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(f.bodies[n], &m); err != nil {
		f.t.Fatalf("request body is not JSON: %v\n%s", err, f.bodies[n])
	}
	return m
}

// attempts records what the retry policy heard.
type attempts struct {
	mu    sync.Mutex
	errs  []error
	waits []time.Duration
}

func (a *attempts) policy() retry.Policy {
	return retry.Policy{
		Attempts: 4, Base: time.Millisecond, Max: 2 * time.Millisecond, RetryAfterCap: time.Second,
		OnAttempt: func(_ int, err error, wait time.Duration) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.errs = append(a.errs, err)
			a.waits = append(a.waits, wait)
		},
	}
}

func newModel(t *testing.T, f *fake, a *attempts) *Model {
	t.Helper()
	if a == nil {
		a = &attempts{}
	}
	m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func completion(message string, finish string, usage string) http.HandlerFunc {
	if usage == "" {
		usage = `{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}`
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
  "choices": [{"index": 0, "message": %s, "logprobs": null, "finish_reason": %q}],
  "usage": %s
}`, message, finish, usage)
	}
}

func apiError(status int, typ, code, message string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		c := "null"
		if code != "" {
			c = fmt.Sprintf("%q", code)
		}
		fmt.Fprintf(w, `{"error": {"message": %q, "type": %q, "param": null, "code": %s}}`, message, typ, c)
	}
}

var okAnswer = completion(`{"role": "assistant", "content": "Paris.", "refusal": null}`, "stop", "")

func request() *agentrt.Request {
	return &agentrt.Request{
		Model: "gpt-test",
		Messages: []agentrt.Message{
			{Role: agentrt.System, Content: "Be brief."},
			{Role: agentrt.User, Content: "Capital of France?"},
		},
	}
}

var weatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)

func toolRequest() *agentrt.Request {
	req := request()
	req.Tools = []agentrt.ToolSpec{
		{Name: "weather", Description: "Weather of a city.", Schema: weatherSchema},
		{Name: "answer", Description: "Give the answer.", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)},
	}
	req.ToolChoice = agentrt.ToolChoice{Mode: agentrt.ChooseAuto}
	req.OutputTool = "answer"
	return req
}

func equalJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	g, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(g) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, wb)
	}
}

func TestPlainAnswer(t *testing.T) {
	f := newFake(t, okAnswer)
	m := newModel(t, f, nil)
	req := request()
	temp := 0.2
	req.Temperature = &temp
	req.MaxOutputTokens = 300
	req.Reasoning = "medium"
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Role != agentrt.Assistant || resp.Message.Content != "Paris." || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Usage != (agentrt.Usage{Input: 10, Output: 5}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	b := f.body(0)
	equalJSON(t, "model", b["model"], `"gpt-test"`)
	equalJSON(t, "messages", b["messages"], `[
		{"role": "system", "content": "Be brief."},
		{"role": "user", "content": "Capital of France?"}]`)
	equalJSON(t, "temperature", b["temperature"], `0.2`)
	equalJSON(t, "max_completion_tokens", b["max_completion_tokens"], `300`)
	equalJSON(t, "reasoning_effort", b["reasoning_effort"], `"medium"`)
	for _, k := range []string{"tools", "tool_choice", "max_tokens", "stream", "n"} {
		if _, ok := b[k]; ok {
			t.Errorf("request has %q: %v", k, b[k])
		}
	}
	if got := f.auth[0]; got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestReasoningNoneAndDefaultsOmitted(t *testing.T) {
	f := newFake(t, okAnswer)
	m := newModel(t, f, nil)
	req := request()
	req.Reasoning = "none"
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	for _, k := range []string{"reasoning_effort", "temperature", "max_completion_tokens"} {
		if _, ok := b[k]; ok {
			t.Errorf("request has %q: %v", k, b[k])
		}
	}
}

func TestSeveralToolCalls(t *testing.T) {
	// finish_reason says "stop": calls are found by their presence.
	f := newFake(t, completion(`{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
		{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
		{"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Lyon\"}"}}]}`, "stop", ""))
	m := newModel(t, f, nil)
	req := toolRequest()
	// A history with an earlier round of calls and their results.
	req.Messages = append(req.Messages,
		agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{
			{ID: "call_0", Name: "weather", Arguments: json.RawMessage(`{"city":"Nice"}`)},
		}},
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "call_0", Name: "weather", Content: "sunny"},
		agentrt.Message{Role: agentrt.Assistant, Content: "Let me check more."},
		agentrt.Message{Role: agentrt.User, Content: "And Paris and Lyon?"},
	)
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentrt.ToolCall{
		{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "call_2", Name: "weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)},
	}
	got, _ := json.Marshal(resp.Message.ToolCalls)
	wb, _ := json.Marshal(want)
	if string(got) != string(wb) || resp.Message.Content != "" {
		t.Errorf("message = %+v", resp.Message)
	}
	b := f.body(0)
	equalJSON(t, "messages", b["messages"], `[
		{"role": "system", "content": "Be brief."},
		{"role": "user", "content": "Capital of France?"},
		{"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Nice\"}"}}]},
		{"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
		{"role": "assistant", "content": "Let me check more."},
		{"role": "user", "content": "And Paris and Lyon?"}]`)
	equalJSON(t, "tools", b["tools"], `[
		{"type": "function", "function": {"name": "weather", "description": "Weather of a city.", "parameters": `+string(weatherSchema)+`}},
		{"type": "function", "function": {"name": "answer", "description": "Give the answer.", "parameters": {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}}}]`)
	equalJSON(t, "tool_choice", b["tool_choice"], `"auto"`)
}

func TestToolChoice(t *testing.T) {
	for _, tc := range []struct {
		choice agentrt.ToolChoice
		want   string
	}{
		{agentrt.ToolChoice{Mode: agentrt.ChooseTool, Name: "answer"}, `{"type": "function", "function": {"name": "answer"}}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseRequired}, `"required"`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseAuto}, `"auto"`},
	} {
		t.Run(tc.choice.Mode, func(t *testing.T) {
			f := newFake(t, completion(`{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
				{"id": "call_9", "type": "function", "function": {"name": "answer", "arguments": "{\"text\":\"Paris\"}"}}]}`, "stop", ""))
			m := newModel(t, f, nil)
			req := toolRequest()
			req.ToolChoice = tc.choice
			resp, err := m.Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "answer" || string(resp.Message.ToolCalls[0].Arguments) != `{"text":"Paris"}` {
				t.Errorf("message = %+v", resp.Message)
			}
			equalJSON(t, "tool_choice", f.body(0)["tool_choice"], tc.want)
		})
	}
}

func TestRefusal(t *testing.T) {
	f := newFake(t, completion(`{"role": "assistant", "content": null, "refusal": "I can't help with that."}`, "stop", ""))
	resp, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "I can't help with that." {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

func TestLengthTruncation(t *testing.T) {
	a := &attempts{}
	f := newFake(t, completion(`{"role": "assistant", "content": "Paris is the cap", "refusal": null}`, "length", ""))
	_, err := newModel(t, f, a).Complete(t.Context(), request())
	if err == nil || !strings.Contains(err.Error(), "cut at the token limit") {
		t.Fatalf("err = %v", err)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// A completion the content filter stopped is no answer, whatever it holds,
// and is not retried: the same request meets the same filter.
func TestContentFilter(t *testing.T) {
	f := newFake(t, completion(`{"role": "assistant", "content": "Here is how", "refusal": null}`, "content_filter", ""), okAnswer)
	_, err := newModel(t, f, nil).Complete(t.Context(), request())
	if !errors.Is(err, ErrFiltered) || err.Error() != `openai: the content filter stopped the answer (finish_reason "content_filter")` || f.requests() != 1 {
		t.Fatalf("err = %v after %d requests", err, f.requests())
	}
}

// A turn cut at the token limit is an error whatever it holds: a call's
// arguments cut short can still be JSON that fits the schema ("Par" of
// "Paris"), so no call of it is made, the output's either.
func TestLengthWithToolCallIsAnError(t *testing.T) {
	f := newFake(t, completion(`{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
		{"id": "call_1", "type": "function", "function": {"name": "answer", "arguments": "{\"text\":\"Par\"}"}}]}`, "length", ""))
	resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
	if err == nil || err.Error() != `openai: the output was cut at the token limit (finish_reason "length")` || resp != nil {
		t.Fatalf("err = %v, response %+v", err, resp)
	}
}

// TestFailureSpent: a reply cut at the token limit, or stopped by the
// content filter, is billed whole: the error carries the usage reported,
// for the run to charge (it was charged nothing).
func TestFailureSpent(t *testing.T) {
	for _, finish := range []string{"length", "content_filter"} {
		f := newFake(t, completion(`{"role": "assistant", "content": "Paris is the cap", "refusal": null}`, finish, `{"prompt_tokens": 700, "completion_tokens": 256}`))
		_, err := newModel(t, f, nil).Complete(t.Context(), request())
		if got := agentrt.SpentOf(err); err == nil || got != (agentrt.Usage{Input: 700, Output: 256}) {
			t.Errorf("%s: %v spent %+v, want 700 in and 256 out", finish, err, got)
		}
	}
	f := newResponsesFake(t, responseObject("incomplete", "max_output_tokens", textItem("Paris is the cap"), `{"input_tokens": 700, "output_tokens": 256}`))
	_, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
	if got := agentrt.SpentOf(err); err == nil || got != (agentrt.Usage{Input: 700, Output: 256}) {
		t.Errorf("responses: %v spent %+v, want 700 in and 256 out", err, got)
	}
}

func TestInvalidToolArgumentsPassedThrough(t *testing.T) {
	f := newFake(t, completion(`{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
		{"id": "call_1", "type": "function", "function": {"name": "answer", "arguments": "{text: Paris"}}]}`, "tool_calls", ""))
	resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{text: Paris` {
		t.Errorf("message = %+v", resp.Message)
	}
}

func TestUsageWithCachedTokens(t *testing.T) {
	f := newFake(t, completion(`{"role": "assistant", "content": "Paris.", "refusal": null}`, "stop",
		`{"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
		  "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
		  "completion_tokens_details": {"reasoning_tokens": 128, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}`))
	resp, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if want := (agentrt.Usage{Input: 2006, Output: 300, Cached: 1920}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// TestUsageWithCacheWrites: a model that bills writing to its prompt
// cache says how many prompt tokens it wrote (prompt_tokens_details'
// cache_write_tokens), which usage counts apart from reads, for the run
// to price at the model's cache_write rate.
func TestUsageWithCacheWrites(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        agentrt.Usage
	}{
		{"written", `{"completion_tokens":300,"prompt_tokens":2006,"total_tokens":2306,
		  "prompt_tokens_details":{"cache_write_tokens":1900,"cached_tokens":0,"text_tokens":2006}}`,
			agentrt.Usage{Input: 2006, Output: 300, CacheWrite: 1900}},
		{"read and written", `{"prompt_tokens": 4000, "completion_tokens": 10, "total_tokens": 4010,
		  "prompt_tokens_details": {"cached_tokens": 1920, "cache_write_tokens": 2000}}`,
			agentrt.Usage{Input: 4000, Output: 10, Cached: 1920, CacheWrite: 2000}},
		// completion_tokens includes the reasoning tokens (OpenAI's
		// reference); a server saying otherwise is taken at the larger.
		{"reasoning within the output", `{"prompt_tokens": 40, "completion_tokens": 300, "completion_tokens_details": {"reasoning_tokens": 256}}`,
			agentrt.Usage{Input: 40, Output: 300}},
		{"reasoning past the output", `{"prompt_tokens": 40, "completion_tokens": 1, "completion_tokens_details": {"reasoning_tokens": 1000000}}`,
			agentrt.Usage{Input: 40, Output: 1000000}},
	} {
		f := newFake(t, completion(`{"role": "assistant", "content": "Paris.", "refusal": null}`, "stop", c.usage))
		resp, err := newModel(t, f, nil).Complete(t.Context(), request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := resp.Usage; got != c.want {
			t.Errorf("%s: usage = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    http.HandlerFunc
		minWait  time.Duration
		inErrMsg string
	}{
		{"429 Retry-After", apiError(429, "requests", "rate_limit_exceeded", "Rate limit reached.", "Retry-After", "0.05"), 50 * time.Millisecond, "openai: 429 Too Many Requests: Rate limit reached."},
		{"429 Retry-After-Ms", apiError(429, "requests", "rate_limit_exceeded", "Rate limit reached.", "Retry-After-Ms", "40"), 40 * time.Millisecond, "openai: 429 Too Many Requests"},
		{"500", apiError(500, "server_error", "", "The server had an error."), 0, "openai: 500 Internal Server Error: The server had an error."},
		{"500 not JSON", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "upstream broke", 500) }, 0, "openai: 500 Internal Server Error"},
		{"502", apiError(502, "server_error", "", "Bad gateway."), 0, "openai: 502 Bad Gateway"},
		{"529", apiError(529, "overloaded_error", "", "Overloaded."), 0, "openai: 529 Overloaded: Overloaded."},
		{"408", apiError(408, "timeout", "", "Timed out."), 0, "openai: 408 Request Timeout"},
		{"409", apiError(409, "conflict", "", "Conflict."), 0, "openai: 409 Conflict"},
		{"dropped before response", hangUp(""), 0, "openai: "},
		{"dropped mid-response", hangUp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\": \"chatcmpl-1\", \"choi"), 0, "openai: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attempts{}
			f := newFake(t, tc.first, okAnswer)
			resp, err := newModel(t, f, a).Complete(t.Context(), request())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "Paris." {
				t.Errorf("content = %q", resp.Message.Content)
			}
			if f.requests() != 2 || len(a.errs) != 1 {
				t.Fatalf("%d requests, %d failed attempts; want 2 and 1", f.requests(), len(a.errs))
			}
			var re *retry.Error
			if !errors.As(a.errs[0], &re) || !re.Retryable {
				t.Errorf("first attempt's error %v is not retryable", a.errs[0])
			}
			t.Logf("first attempt: %v", a.errs[0])
			if !strings.HasPrefix(a.errs[0].Error(), tc.inErrMsg) {
				t.Errorf("error %q does not start with %q", a.errs[0], tc.inErrMsg)
			}
			if a.waits[0] < tc.minWait {
				t.Errorf("waited %v, want at least %v", a.waits[0], tc.minWait)
			}
		})
	}
}

// hangUp writes raw (perhaps a partial response) and drops the connection.
func hangUp(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString(raw)
		buf.Flush()
		conn.Close()
	}
}

func TestFinal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"401", apiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test-***CRET. You can find your API key at https://platform.openai.com/account/api-keys."),
			"openai: 401 Unauthorized: Incorrect API key provided: sk-test-***CRET. You can find your API key at https://platform.openai.com/account/api-keys."},
		// A server that echoes the key must not get it into our errors.
		{"401 echoing the key", apiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey),
			"openai: 401 Unauthorized: Incorrect API key provided: [redacted]"},
		{"400", apiError(400, "invalid_request_error", "", "Invalid schema for function 'answer'."), "openai: 400 Bad Request: Invalid schema for function 'answer'."},
		{"403", apiError(403, "invalid_request_error", "unsupported_country_region_territory", "Country not supported."), "openai: 403 Forbidden: Country not supported."},
		{"404", apiError(404, "invalid_request_error", "model_not_found", "The model `gpt-9` does not exist."), "openai: 404 Not Found: The model `gpt-9` does not exist."},
		{"insufficient_quota", apiError(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.", "Retry-After", "0.01"),
			"openai: 429 Too Many Requests: You exceeded your current quota, please check your plan and billing details."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attempts{}
			f := newFake(t, tc.reply, okAnswer)
			_, err := newModel(t, f, a).Complete(t.Context(), request())
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n got %q\nwant %q", err, tc.want)
			}
			if f.requests() != 1 {
				t.Errorf("%d requests, want 1", f.requests())
			}
			for _, s := range []string{testKey, "Bearer", "Authorization", "authorization"} {
				if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), s) {
					t.Errorf("error mentions %q: %v", s, err)
				}
			}
			var se *StatusError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *StatusError", err)
			}
		})
	}
}

func TestRetriesUsedUp(t *testing.T) {
	a := &attempts{}
	fail := apiError(503, "server_error", "", "Unavailable.")
	f := newFake(t, fail, fail, fail, fail, okAnswer)
	_, err := newModel(t, f, a).Complete(t.Context(), request())
	if err == nil || err.Error() != "after 4 attempts: openai: 503 Service Unavailable: Unavailable." {
		t.Fatalf("err = %v", err)
	}
	if f.requests() != 4 {
		t.Errorf("%d requests, want 4", f.requests())
	}
}

func TestDeadline(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newModel(t, f, nil).Complete(ctx, request())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	t.Logf("err = %v", err)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v", d)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

func TestCanceled(t *testing.T) {
	f := newFake(t, okAnswer)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := newModel(t, f, nil).Complete(ctx, request())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestNoKeyForLocalServer(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without key or base URL: no error")
	}
	f := newFake(t, okAnswer)
	m, err := New(Config{BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(t.Context(), request()); err != nil {
		t.Fatal(err)
	}
	if f.auth[0] != "" {
		t.Errorf("Authorization = %q, want none", f.auth[0])
	}
}

func TestBadRequests(t *testing.T) {
	m, err := New(Config{APIKey: testKey, BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*agentrt.Request){
		"role":      func(r *agentrt.Request) { r.Messages[0].Role = "narrator" },
		"choice":    func(r *agentrt.Request) { r.ToolChoice.Mode = "any" },
		"reasoning": func(r *agentrt.Request) { r.Reasoning = "extreme" },
		"schema":    func(r *agentrt.Request) { r.Tools[0].Schema = json.RawMessage(`{`) },
	} {
		req := toolRequest()
		mut(req)
		if _, err := m.Complete(t.Context(), req); err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func BenchmarkRound(b *testing.B) {
	srv := httptest.NewServer(completion(`{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
		{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]}`, "tool_calls", ""))
	defer srv.Close()
	m, err := New(Config{APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	req := toolRequest()
	for i := range 10 {
		req.Messages = append(req.Messages,
			agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: fmt.Sprint("call_", i), Name: "weather", Arguments: json.RawMessage(`{"city":"Nice"}`)}}},
			agentrt.Message{Role: agentrt.ToolRole, ToolCallID: fmt.Sprint("call_", i), Content: "sunny"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Complete(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNativeStructuredOutput(t *testing.T) {
	answer := `{"city":"Paris","note":null}`
	f := newFake(t, completion(fmt.Sprintf(`{"role": "assistant", "content": %q, "refusal": null}`, answer), "stop", ""))
	req := request()
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModeNative, Name: "answer", Description: "The capital.", Strict: true,
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"note":{"type":["string","null"]}},"required":["city","note"],"additionalProperties":false}`)}
	resp, err := newModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != answer || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
	body := f.body(0)
	equalJSON(t, "response_format", body["response_format"], `{"type": "json_schema", "json_schema": {
		"name": "answer", "description": "The capital.", "strict": true,
		"schema": {"type":"object","properties":{"city":{"type":"string"},"note":{"type":["string","null"]}},"required":["city","note"],"additionalProperties":false}}}`)
	for _, k := range []string{"tools", "tool_choice"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent with no tools", k)
		}
	}
}

func TestPromptedSendsNoResponseFormat(t *testing.T) {
	f := newFake(t, okAnswer)
	req := request()
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModePrompted, Name: "answer", Description: "d", Schema: json.RawMessage(`{"type":"string"}`)}
	if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if rf, ok := f.body(0)["response_format"]; ok {
		t.Errorf("prompted mode sent response_format %v", rf)
	}
}

func TestStrictTool(t *testing.T) {
	f := newFake(t, okAnswer)
	req := toolRequest()
	req.Tools[1].Strict = true
	if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	tools := f.body(0)["tools"].([]any)
	equalJSON(t, "weather tool", tools[0], `{"type": "function", "function": {"name": "weather", "description": "Weather of a city.",
		"parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}`)
	equalJSON(t, "output tool", tools[1], `{"type": "function", "function": {"name": "answer", "description": "Give the answer.", "strict": true,
		"parameters": {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}}}`)
}

// TestResponseTooLarge: a server that sends more than replylimit.MaxResponse
// fails the call with a clear error, once: another attempt would send as
// much again.
func TestResponseTooLarge(t *testing.T) {
	huge := strings.Repeat("x", replylimit.MaxResponse)
	f := newFake(t, completion(`{"role": "assistant", "content": "`+huge+`"}`, "stop", ""))
	_, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err == nil || !strings.Contains(err.Error(), "openai: the response is larger than the 32 MiB agentc accepts from a provider") {
		t.Fatalf("err = %v", err)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// stall reads the request and sends raw (a response's first bytes, or
// nothing), then nothing more until the client goes.
func stall(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if raw != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, raw)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// TestStalled: an attempt whose server sends nothing for Config.Stall,
// before its response or within it, is given up and made again; one that
// stalls every time fails saying so, before the caller's deadline.
func TestStalled(t *testing.T) {
	const d = 500 * time.Millisecond
	// The fake checks each request against the OpenAPI spec, which takes
	// longer than d to load the first time.
	if _, err := requestSchema(); err != nil {
		t.Fatal(err)
	}
	model := func(f *fake, a *attempts) *Model {
		m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy(), Stall: d})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, first := range []struct {
		h    http.HandlerFunc
		says string
	}{
		{stall(""), "the server sent nothing for 500ms"},
		{stall(`{"id": "chatcmpl-1", "object": "chat.com`), "the body came too slowly: 40 bytes in"},
	} {
		a := &attempts{}
		f := newFake(t, first.h, okAnswer)
		resp, err := model(f, a).Complete(t.Context(), request())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Content != "Paris." || f.requests() != 2 || len(a.errs) != 1 {
			t.Fatalf("content %q, %d requests, %d failed attempts", resp.Message.Content, f.requests(), len(a.errs))
		}
		var re *retry.Error
		if !errors.As(a.errs[0], &re) || !re.Retryable || !strings.Contains(a.errs[0].Error(), first.says) {
			t.Errorf("the stalled attempt: %v", a.errs[0])
		}
	}
	a := &attempts{}
	f := newFake(t, stall(""), stall(""), stall(""), stall(""))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := model(f, a).Complete(ctx, request())
	if err == nil || !strings.Contains(err.Error(), "the server sent nothing for 500ms") || f.requests() != 4 {
		t.Errorf("a server that never answers: %v after %d requests", err, f.requests())
	}
}
