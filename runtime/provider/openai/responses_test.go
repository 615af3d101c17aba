package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// newResponsesFake is a server of the Responses API: POST /responses,
// each body checked against the spec's CreateResponse.
func newResponsesFake(t *testing.T, replies ...http.HandlerFunc) *fake {
	t.Helper()
	return newFakeAt(t, "/responses", checkResponsesSchema, replies...)
}

func newResponsesModel(t *testing.T, f *fake, a *attempts) *Model {
	t.Helper()
	if a == nil {
		a = &attempts{}
	}
	m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy(), API: APIResponses})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rawBody is the nth request body as it was sent.
func (f *fake) rawBody(n int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[n]
}

const defaultUsage = `{"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
	"output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}`

// responseObject answers with a response object of these output items;
// status "incomplete" takes the reason; usage "" is the default, "-" none.
func responseObject(status, reason, output, usage string) http.HandlerFunc {
	switch usage {
	case "":
		usage = `, "usage": ` + defaultUsage
	case "-":
		usage = ""
	default:
		usage = `, "usage": ` + usage
	}
	incomplete := "null"
	if reason != "" {
		incomplete = fmt.Sprintf(`{"reason": %q}`, reason)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{
  "id": "resp_67ccd2bed1ec8190", "object": "response", "created_at": 1741476542,
  "status": %q, "error": null, "incomplete_details": %s,
  "instructions": null, "max_output_tokens": null, "model": "gpt-test-2025-04-14",
  "output": [%s],
  "parallel_tool_calls": true, "previous_response_id": null,
  "reasoning": {"effort": null, "summary": null}, "store": false, "temperature": 1.0,
  "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
  "truncation": "disabled"%s, "user": null, "metadata": {}}`, status, incomplete, output, usage)
	}
}

func textItem(text string) string {
	return fmt.Sprintf(`{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
		"content": [{"type": "output_text", "text": %q, "annotations": []}]}`, text)
}

func callItem(callID, name, args string) string {
	return fmt.Sprintf(`{"arguments":%q,"call_id":%q,"name":%q,"type":"function_call","id":"fc_%s","status":"completed"}`, args, callID, name, callID)
}

var okResponse = responseObject("completed", "", textItem("Paris."), "")

func TestResponsesPlainAnswer(t *testing.T) {
	f := newResponsesFake(t, okResponse)
	req := request()
	req.Messages = append([]agentrt.Message{{Role: agentrt.System, Content: "You answer geography questions."}}, req.Messages...)
	temp := 0.2
	req.Temperature = &temp
	req.MaxOutputTokens = 300
	req.Reasoning = "medium"
	resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Role != agentrt.Assistant || resp.Message.Content != "Paris." || len(resp.Message.ToolCalls) != 0 || resp.Message.State != nil {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Usage != (agentrt.Usage{Input: 10, Output: 5}) || resp.Model != "gpt-test-2025-04-14" {
		t.Errorf("usage = %+v, model %q", resp.Usage, resp.Model)
	}
	equalJSON(t, "body", f.body(0), `{
		"model": "gpt-test",
		"instructions": "You answer geography questions.\n\nBe brief.",
		"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]}],
		"store": false,
		"include": ["reasoning.encrypted_content"],
		"reasoning": {"effort": "medium"},
		"temperature": 0.2,
		"max_output_tokens": 300}`)
	if got := f.auth[0]; got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

// A model that does not reason is not asked for what it cannot give.
func TestResponsesNoReasoning(t *testing.T) {
	for _, effort := range []string{"", "none"} {
		f := newResponsesFake(t, okResponse)
		req := request()
		req.Reasoning = effort
		if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		equalJSON(t, "body", f.body(0), `{
			"model": "gpt-test", "instructions": "Be brief.", "store": false,
			"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]}]}`)
	}
}

func TestResponsesNativeStructuredOutput(t *testing.T) {
	answer := `{"note":null,"city":"Paris"}`
	f := newResponsesFake(t, responseObject("completed", "", textItem(answer), ""))
	req := request()
	// Properties out of alphabetical order: the model writes them in the
	// schema's order, which must reach it.
	schema := `{"type":"object","properties":{"note":{"type":["string","null"]},"city":{"type":"string"}},"required":["note","city"],"additionalProperties":false}`
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModeNative, Name: "answer", Description: "The capital.", Strict: true, Schema: json.RawMessage(schema)}
	resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != answer || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
	body := f.body(0)
	equalJSON(t, "text", body["text"], `{"format": {"type": "json_schema", "name": "answer", "description": "The capital.", "strict": true, "schema": `+schema+`}}`)
	if !bytes.Contains(f.rawBody(0), []byte(`"schema":`+schema)) {
		t.Errorf("the schema was not sent as written:\n%s", f.rawBody(0))
	}
	for _, k := range []string{"tools", "tool_choice"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent with no tools", k)
		}
	}

	// Not strict: said so, not left to the default.
	req.Answer.Strict = false
	f = newResponsesFake(t, responseObject("completed", "", textItem(answer), ""))
	if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "text.format.strict", f.body(0)["text"].(map[string]any)["format"].(map[string]any)["strict"], `false`)
}

func TestResponsesPromptedSendsNoFormat(t *testing.T) {
	f := newResponsesFake(t, okResponse)
	req := request()
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModePrompted, Name: "answer", Description: "d", Schema: json.RawMessage(`{"type":"string"}`)}
	if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if tx, ok := f.body(0)["text"]; ok {
		t.Errorf("prompted mode sent text %v", tx)
	}
}

// The Responses API makes a function strict when nothing is said; each
// tool says what agentc decided.
func TestResponsesStrictPinned(t *testing.T) {
	f := newResponsesFake(t, okResponse)
	req := toolRequest()
	req.Tools[1].Strict = true
	if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "tools", f.body(0)["tools"], `[
		{"type": "function", "name": "weather", "description": "Weather of a city.", "strict": false, "parameters": `+string(weatherSchema)+`},
		{"type": "function", "name": "answer", "description": "Give the answer.", "strict": true,
		 "parameters": {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}}]`)
	if !bytes.Contains(f.rawBody(0), []byte(`"strict":false`)) {
		t.Errorf("the body does not say strict false:\n%s", f.rawBody(0))
	}
}

func TestResponsesToolChoice(t *testing.T) {
	for _, tc := range []struct {
		choice agentrt.ToolChoice
		want   string
	}{
		{agentrt.ToolChoice{Mode: agentrt.ChooseTool, Name: "answer"}, `{"type": "function", "name": "answer"}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseRequired}, `"required"`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseAuto}, `"auto"`},
		{agentrt.ToolChoice{Mode: "none"}, `"none"`},
	} {
		t.Run(tc.choice.Mode, func(t *testing.T) {
			f := newResponsesFake(t, responseObject("completed", "", callItem("call_9", "answer", `{"text":"Paris"}`), ""))
			req := toolRequest()
			req.ToolChoice = tc.choice
			resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := []agentrt.ToolCall{{ID: "call_9", Name: "answer", Arguments: json.RawMessage(`{"text":"Paris"}`)}}
			if !reflect.DeepEqual(resp.Message.ToolCalls, want) || resp.Message.Content != "" {
				t.Errorf("message = %+v", resp.Message)
			}
			equalJSON(t, "tool_choice", f.body(0)["tool_choice"], tc.want)
		})
	}
}

// TestResponsesReasoningRoundTrip: the reasoning items a response
// carries come back in the assistant message's State, and go back
// verbatim, before the call they led to, in the next round's input.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	reasoning := `{"id": "rs_6820f383d7c08191846711c5df8233bc",
		"type": "reasoning",
		"summary": [{"type": "summary_text", "text": "**Checking the weather**\n\nThe user asks about Paris."}],
		"encrypted_content": "gAAAAABoIPOGx3fT0b0n5TnYmQn2Z0rE+Xo/k1w=="}`
	// Without encrypted content an item could only be sent to a server
	// that stored it: it is not kept.
	stored := `{"id": "rs_stored", "type": "reasoning", "summary": []}`
	f := newResponsesFake(t,
		responseObject("completed", "", reasoning+", "+stored+", "+callItem("call_1", "weather", `{"city":"Paris"}`), ""),
		okResponse)
	m := newResponsesModel(t, f, nil)
	req := toolRequest()
	req.Reasoning = "high"
	first, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	st := first.Message.State
	if st == nil || st.Provider != "openai-responses" {
		t.Fatalf("state = %+v", st)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(reasoning)); err != nil {
		t.Fatal(err)
	}
	if string(st.Data) != "["+compact.String()+"]" {
		t.Errorf("state data = %s", st.Data)
	}
	// The state goes through the journal as JSON.
	js, _ := json.Marshal(first.Message)
	var back agentrt.Message
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, back,
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "call_1", Name: "weather", Content: "sunny"})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	input := f.body(1)["input"].([]any)
	if len(input) != 4 {
		t.Fatalf("input = %v", input)
	}
	equalJSON(t, "reasoning item", input[1], reasoning)
	equalJSON(t, "rest of the input", input[2:], `[
		{"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]`)
	if !bytes.Contains(f.rawBody(1), compact.Bytes()) {
		t.Errorf("the reasoning item was not sent verbatim:\n%s", f.rawBody(1))
	}

	// Another provider's state, or none, sends no reasoning.
	req.Messages[len(req.Messages)-2].State = &agentrt.ProviderState{Provider: "google", Data: json.RawMessage(`"sig"`)}
	f = newResponsesFake(t, okResponse)
	if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if input := f.body(0)["input"].([]any); len(input) != 3 || input[1].(map[string]any)["type"] != "function_call" {
		t.Errorf("input = %v", input)
	}
}

func TestResponsesSeveralCalls(t *testing.T) {
	f := newResponsesFake(t, responseObject("completed", "",
		callItem("call_1", "weather", `{"city":"Paris"}`)+",\n"+callItem("call_2", "weather", `{"city":"Lyon"}`), ""))
	req := toolRequest()
	req.Messages = append(req.Messages,
		agentrt.Message{Role: agentrt.Assistant, Content: "Let me look.", ToolCalls: []agentrt.ToolCall{
			{ID: "call_0", Name: "weather", Arguments: json.RawMessage(`{"city":"Nice"}`)},
			{ID: "call_x", Name: "weather", Arguments: json.RawMessage(`{"city":"Atlantis"}`)},
		}},
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "call_0", Name: "weather", Content: "sunny"},
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "call_x", Name: "weather", Content: "error: no such city", IsError: true},
		agentrt.Message{Role: agentrt.Assistant, Content: "Nice is sunny."},
		agentrt.Message{Role: agentrt.User, Content: "And Paris and Lyon?"},
	)
	resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentrt.ToolCall{
		{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "call_2", Name: "weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)},
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) || resp.Message.Content != "" {
		t.Errorf("message = %+v", resp.Message)
	}
	b := f.body(0)
	equalJSON(t, "input", b["input"], `[
		{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Capital of France?"}]},
		{"type": "message", "role": "assistant", "content": "Let me look."},
		{"type": "function_call", "call_id": "call_0", "name": "weather", "arguments": "{\"city\":\"Nice\"}"},
		{"type": "function_call", "call_id": "call_x", "name": "weather", "arguments": "{\"city\":\"Atlantis\"}"},
		{"type": "function_call_output", "call_id": "call_0", "output": "sunny"},
		{"type": "function_call_output", "call_id": "call_x", "output": "error: no such city"},
		{"type": "message", "role": "assistant", "content": "Nice is sunny."},
		{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And Paris and Lyon?"}]}]`)
	equalJSON(t, "tool_choice", b["tool_choice"], `"auto"`)
}

func TestResponsesRefusal(t *testing.T) {
	f := newResponsesFake(t, responseObject("completed", "", `{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
		"content": [{"type": "refusal", "refusal": "I can't help with that."}]}`, ""))
	resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "I can't help with that." {
		t.Errorf("content = %q", resp.Message.Content)
	}
}

func TestResponsesIncomplete(t *testing.T) {
	for _, c := range []struct {
		name, reason, output string
		want                 string
		is                   error
	}{
		{"cut", "max_output_tokens", textItem("Paris is the cap"), "openai: the output was cut at the token limit", nil},
		{"cut while reasoning", "max_output_tokens", `{"id": "rs_1", "type": "reasoning", "summary": []}`, "openai: the output was cut at the token limit", nil},
		// A call of a cut turn may be cut short and still fit its schema:
		// none is made.
		{"cut with a call", "max_output_tokens", callItem("call_1", "answer", `{"text":"Par"}`), "openai: the output was cut at the token limit", nil},
		{"filtered", "content_filter", textItem("Here is how"), "openai: the content filter stopped the answer", ErrFiltered},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newResponsesFake(t, responseObject("incomplete", c.reason, c.output, ""))
			_, err := newResponsesModel(t, f, nil).Complete(t.Context(), toolRequest())
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if f.requests() != 1 {
				t.Errorf("%d requests, want 1", f.requests())
			}
		})
	}
}

func TestResponsesUsage(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        agentrt.Usage
	}{
		{"cached and reasoning", `{
			"output_tokens_details": {"reasoning_tokens": 128},
			"total_tokens": 2306, "input_tokens": 2006,
			"input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 300}`, agentrt.Usage{Input: 2006, Output: 300, Cached: 1920}},
		{"written to the cache", `{"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 30},
			"output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 123}`, agentrt.Usage{Input: 36, Output: 87, CacheWrite: 30}},
		{"reasoning past the output", `{"input_tokens": 36, "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 1000000}}`,
			agentrt.Usage{Input: 36, Output: 1000000}},
		{"none", "-", agentrt.Usage{}},
		{"null", "null", agentrt.Usage{}},
		// Counts that are no int are read as Chat Completions' are (the
		// runtime holds what is implausible to its estimate), where they
		// failed the reply: a count written as a float, one past an int,
		// a string, one of no kind of number.
		{"floats", `{"input_tokens": 36.0, "output_tokens": 87.9}`, agentrt.Usage{Input: 36, Output: 87}},
		{"past an int", `{"input_tokens": 1e30, "output_tokens": 99999999999999999999, "input_tokens_details": {"cached_tokens": -1e30}}`,
			agentrt.Usage{Input: math.MaxInt, Output: math.MaxInt, Cached: math.MinInt}},
		{"strings", `{"input_tokens": "36", "output_tokens": "many"}`, agentrt.Usage{Input: 36}},
		{"objects", `{"input_tokens": {}, "output_tokens": [87], "output_tokens_details": {"reasoning_tokens": true}}`, agentrt.Usage{}},
	} {
		f := newResponsesFake(t, responseObject("completed", "", textItem("Paris."), c.usage))
		resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.Usage != c.want || resp.Message.Content != "Paris." {
			t.Errorf("%s: usage = %+v, want %+v", c.name, resp.Usage, c.want)
		}
	}
}

func TestResponsesRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    http.HandlerFunc
		minWait  time.Duration
		inErrMsg string
	}{
		{"429 Retry-After", apiError(429, "requests", "rate_limit_exceeded", "Rate limit reached.", "Retry-After", "0.05"), 50 * time.Millisecond, "openai: 429 Too Many Requests: Rate limit reached."},
		{"500", apiError(500, "server_error", "", "The server had an error."), 0, "openai: 500 Internal Server Error: The server had an error."},
		{"500 not JSON", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "upstream broke", 500) }, 0, "openai: 500 Internal Server Error"},
		{"503", apiError(503, "server_error", "", "Unavailable."), 0, "openai: 503 Service Unavailable"},
		{"dropped mid-response", hangUp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\": \"resp_1\", \"outp"), 0, "openai: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attempts{}
			f := newResponsesFake(t, tc.first, okResponse)
			resp, err := newResponsesModel(t, f, a).Complete(t.Context(), request())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "Paris." || f.requests() != 2 || len(a.errs) != 1 {
				t.Fatalf("content %q, %d requests, %d failed attempts; want 2 and 1", resp.Message.Content, f.requests(), len(a.errs))
			}
			var re *retry.Error
			if !errors.As(a.errs[0], &re) || !re.Retryable || !strings.HasPrefix(a.errs[0].Error(), tc.inErrMsg) {
				t.Errorf("first attempt's error %v: not retryable, or not %q", a.errs[0], tc.inErrMsg)
			}
			if a.waits[0] < tc.minWait {
				t.Errorf("waited %v, want at least %v", a.waits[0], tc.minWait)
			}
		})
	}
}

func TestResponsesFinal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"401 echoing the key", apiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey),
			"openai: 401 Unauthorized: Incorrect API key provided: [redacted]"},
		{"400", apiError(400, "invalid_request_error", "", "Invalid schema for function 'answer'."), "openai: 400 Bad Request: Invalid schema for function 'answer'."},
		{"insufficient_quota", apiError(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota.", "Retry-After", "0.01"),
			"openai: 429 Too Many Requests: You exceeded your current quota."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newResponsesFake(t, tc.reply, okResponse)
			_, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %q", err, tc.want)
			}
			if f.requests() != 1 {
				t.Errorf("%d requests, want 1", f.requests())
			}
			if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), testKey) {
				t.Errorf("error mentions the key: %v", err)
			}
			var se *StatusError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *StatusError", err)
			}
		})
	}
}

// A failed response (status "failed" in a 200) is an error that says why.
func TestResponsesFailed(t *testing.T) {
	f := newResponsesFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"resp_1","object":"response","created_at":1741476542,"status":"failed","model":"gpt-test",
			"error":{"code":"server_error","message":"The model failed."},"output":[],"usage":null}`)
	})
	_, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
	if err == nil || err.Error() != "openai: the response failed (server_error): The model failed." {
		t.Fatalf("err = %v", err)
	}
}

// TestResponsesNotAResponse: a body answered 200 that is an error object
// (as a proxy or a gateway may send), or holds no output at all, whole or
// in a stream's response.completed event, is an error of the call, where
// it was taken as an empty answer (an agent without an output contract
// printed "" and exited 0); the error's text is quoted, the key redacted.
func TestResponsesNotAResponse(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"error object", `{"error":{"message":"The server is overloaded.","type":"server_error","param":null,"code":null}}`,
			"openai: the response is an error, not a response object (server_error): The server is overloaded."},
		{"error object, the key", `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"openai: the response is an error, not a response object (invalid_api_key): Incorrect API key provided: [redacted]"},
		{"completed, an error", `{"status":"completed","error":{"code":"server_error","message":"The model failed."},"output":[]}`,
			"openai: the response is an error, not a response object (server_error): The model failed."},
		{"no output", `{"id":"resp_1","object":"response"}`, "openai: the response is not a response object: it has no output"},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				f := newResponsesFake(t, responseReply(tc.body, stream))
				req := request()
				if stream {
					req.Stream = func(agentrt.Delta) {}
				}
				resp, err := newResponsesModel(t, f, nil).Complete(t.Context(), req)
				if err == nil || err.Error() != tc.want {
					t.Fatalf("response %+v, error %v; want %q", resp, err, tc.want)
				}
				if f.requests() != 1 {
					t.Errorf("%d requests, want 1", f.requests())
				}
			})
		}
	}
}

func TestResponsesTooLargeAndStalled(t *testing.T) {
	huge := strings.Repeat("x", replylimit.MaxResponse)
	f := newResponsesFake(t, responseObject("completed", "", textItem(huge), ""))
	_, err := newResponsesModel(t, f, nil).Complete(t.Context(), request())
	if err == nil || !strings.Contains(err.Error(), "openai: the response is larger than the 32 MiB agentc accepts from a provider") || f.requests() != 1 {
		t.Fatalf("err = %v after %d requests", err, f.requests())
	}

	if _, err := responsesSchema(); err != nil {
		t.Fatal(err)
	}
	a := &attempts{}
	f = newResponsesFake(t, stall(`{"id": "resp_1", "object": "resp`), okResponse)
	m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy(), Stall: 300 * time.Millisecond, API: APIResponses})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), request())
	if err != nil || resp.Message.Content != "Paris." || len(a.errs) != 1 || !strings.Contains(a.errs[0].Error(), "the body came too slowly: 32 bytes in") {
		t.Fatalf("err %v, failed attempts %v", err, a.errs)
	}
}

// A redirect elsewhere is refused: the key goes to the base URL's origin.
func TestResponsesRedirectRefused(t *testing.T) {
	var elsewhere sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Store("auth", r.Header.Get("Authorization"))
		okResponse(w, r)
	}))
	defer other.Close()
	a := &attempts{}
	f := newResponsesFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	if _, err := newResponsesModel(t, f, a).Complete(t.Context(), request()); err == nil {
		t.Error("a redirect to another origin was followed")
	}
	if v, ok := elsewhere.Load("auth"); ok {
		t.Errorf("the other origin was sent a request (Authorization %q)", v)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

func TestResponsesFilePartsSent(t *testing.T) {
	s := store(t)
	pngData, jpegData, pdfData := pngBytes(t), jpegBytes(t), pdfBytes()
	pngF := put(t, s, "photo", "photo.png", pngData, "image/png")
	jpegF := put(t, s, "scan", "scan.jpg", jpegData, "image/jpeg")
	pdfF := put(t, s, "invoice", "invoice-2024.pdf", pdfData, "application/pdf")
	pdfNoName := put(t, s, "contract", "", append(pdfBytes(), "% copy\n"...), "application/pdf")
	txtF := put(t, s, "notes", "notes.txt", []byte(plainText), "text/plain")
	bomF := put(t, s, "memo", "memo.txt", []byte("\ufeff"+bomBody), "text/plain")

	f := newResponsesFake(t, okResponse)
	_, err := newResponsesModel(t, f, nil).Complete(t.Context(), fileRequest(s,
		text("Compare "), file(pngF), text(" with "), file(jpegF),
		text(", then read "), file(pdfF), file(pdfNoName),
		text(" and the notes: "), file(txtF), file(bomF), text("."),
	))
	if err != nil {
		t.Fatal(err)
	}
	b := f.body(0)
	equalJSON(t, "instructions", b["instructions"], `"Read the files."`)
	input := b["input"].([]any)
	if len(input) != 1 {
		t.Fatalf("input = %v", input)
	}
	got := input[0].(map[string]any)["content"].([]any)
	it := func(s string) any { return map[string]any{"type": "input_text", "text": s} }
	img := func(mt string, data []byte) any {
		return map[string]any{"type": "input_image", "detail": "auto", "image_url": "data:" + mt + ";base64," + b64(data)}
	}
	want := []any{
		it("Compare "), img("image/png", pngData), it(" with "), img("image/jpeg", jpegData), it(", then read "),
		map[string]any{"type": "input_file", "file_data": "data:application/pdf;base64," + b64(pdfData), "filename": "invoice-2024.pdf"},
		map[string]any{"type": "input_file", "file_data": "data:application/pdf;base64," + b64(append(pdfBytes(), "% copy\n"...)), "filename": "contract.pdf"},
		it(" and the notes: "), it(plainText), it(bomBody), it("."),
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("user content:\n%s", g)
	}
	part := func(i int) map[string]any { return got[i].(map[string]any) }
	if !bytes.Equal(dataURL(t, part(1)["image_url"], "image/png"), pngData) ||
		!bytes.Equal(dataURL(t, part(3)["image_url"], "image/jpeg"), jpegData) ||
		!bytes.Equal(dataURL(t, part(5)["file_data"], "application/pdf"), pdfData) {
		t.Error("the bytes sent are not the files stored")
	}
}

// A file changed in the store, or one the API does not take, fails the
// call before anything is sent.
func TestResponsesFileRefused(t *testing.T) {
	s := store(t)
	tampered := put(t, s, "altered", "altered.png", append(pngBytes(t), "trailing bytes to alter"...), "image/png")
	tamper(t, s, tampered)
	tamperedPDF := put(t, s, "forged", "forged.pdf", pdfBytes(), "application/pdf")
	tamper(t, s, tamperedPDF)
	tiff := &agentrt.File{Name: "fax", MediaType: "image/tiff", Size: tampered.Size, Digest: tampered.Digest}
	for _, c := range []struct {
		file *agentrt.File
		want string
	}{
		{tampered, "altered"},
		{tamperedPDF, "forged"},
		{tiff, "openai does not take image/tiff"},
	} {
		f := newResponsesFake(t, okResponse)
		_, err := newResponsesModel(t, f, nil).Complete(t.Context(), fileRequest(s, text("Look: "), file(c.file)))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "openai:") != 1 {
			t.Errorf("%s: err = %v", c.file.Name, err)
		}
		if f.requests() != 0 {
			t.Errorf("%s: the server received %d requests", c.file.Name, f.requests())
		}
	}
}

// Files tools returned go in a user message after the turn's outputs.
func TestResponsesToolFilesSent(t *testing.T) {
	s := store(t)
	pngData := pngBytes(t)
	pngF := put(t, s, "camera", "", pngData, "image/png")
	f := newResponsesFake(t, okResponse)
	req := &agentrt.Request{Model: "gpt-test", Files: s, Messages: []agentrt.Message{
		{Role: agentrt.System, Content: "Look."},
		{Role: agentrt.User, Content: "Take a picture."},
		{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "camera", Arguments: json.RawMessage(`{}`)}}},
		{Role: agentrt.ToolRole, ToolCallID: "c1", Name: "camera", Content: "[image content: image/png]", Parts: []agentrt.Part{file(pngF)}},
	}}
	if _, err := newResponsesModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	input := f.body(0)["input"].([]any)
	equalJSON(t, "input after the call", input[1:3], `[
		{"type": "function_call", "call_id": "c1", "name": "camera", "arguments": "{}"},
		{"type": "function_call_output", "call_id": "c1", "output": "[image content: image/png]"}]`)
	equalJSON(t, "files message", input[3], `{"type": "message", "role": "user", "content": [
		{"type": "input_text", "text": "The tool camera returned this file (image/png):"},
		{"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,`+b64(pngData)+`"}]}`)
}

// Azure's Responses API takes the deployment as the model, at
// /openai/responses.
func TestResponsesAzure(t *testing.T) {
	f := newAzureFake(t, okResponse)
	m, err := New(Config{API: APIResponses, Retry: (&attempts{}).policy(),
		Azure: &Azure{Endpoint: f.srv.URL, APIVersion: "2025-04-01-preview", Deployment: "prod-5", APIKey: "az-key-SECRET"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), request())
	if err != nil || resp.Message.Content != "Paris." {
		t.Fatalf("%v %+v", err, resp)
	}
	got := f.request(0)
	if got.path != "/openai/responses" || got.version != "2025-04-01-preview" || got.apiKey != "az-key-SECRET" {
		t.Errorf("sent %s?api-version=%s Api-Key %q", got.path, got.version, got.apiKey)
	}
	if !bytes.Contains(got.body, []byte(`"model":"prod-5"`)) {
		t.Errorf("the body names another model: %s", got.body)
	}
}

func TestResponsesBadConfigAndRequests(t *testing.T) {
	if _, err := New(Config{APIKey: testKey, API: "assistants"}); err == nil || !strings.Contains(err.Error(), `unknown API "assistants"`) {
		t.Errorf("unknown API: %v", err)
	}
	m, err := New(Config{APIKey: testKey, BaseURL: "http://127.0.0.1:1", API: APIResponses})
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*agentrt.Request){
		"role":      func(r *agentrt.Request) { r.Messages[0].Role = "narrator" },
		"choice":    func(r *agentrt.Request) { r.ToolChoice.Mode = "any" },
		"reasoning": func(r *agentrt.Request) { r.Reasoning = "extreme" },
		"schema":    func(r *agentrt.Request) { r.Tools[0].Schema = json.RawMessage(`{`) },
		"state": func(r *agentrt.Request) {
			r.Messages = append(r.Messages, agentrt.Message{Role: agentrt.Assistant, Content: "x", State: &agentrt.ProviderState{Provider: StateProvider, Data: json.RawMessage(`{}`)}})
		},
	} {
		req := toolRequest()
		mut(req)
		if _, err := m.Complete(t.Context(), req); err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func FuzzParseResponsesBody(f *testing.F) {
	for _, seed := range []string{
		`{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}]}`,
		`{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"type":"function_call","call_id":"c","name":"n","arguments":"{}"}],"usage":{"input_tokens":1,"output_tokens":2,"input_tokens_details":{"cached_tokens":1}}}`,
		`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`,
		`{"status":"incomplete","incomplete_details":null,"output":null}`,
		`{"status":"failed","error":{"code":"x","message":"y"}}`,
		`{"output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}],"usage":null}`,
		`{"output":[1]}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := parseResponsesBody(data, func(s string) string { return s })
		if err != nil {
			return
		}
		if resp.Message.Role != agentrt.Assistant {
			t.Fatalf("role %q", resp.Message.Role)
		}
		if st := resp.Message.State; st != nil {
			var items []json.RawMessage
			if st.Provider != StateProvider || json.Unmarshal(st.Data, &items) != nil || len(items) == 0 {
				t.Fatalf("state %+v", st)
			}
		}
	})
}

// responseReply answers with the response object body: whole, or streamed
// as the response.completed event that carries it.
func responseReply(body string, stream bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":0,\"response\":%s}\n\n", body)
	}
}
