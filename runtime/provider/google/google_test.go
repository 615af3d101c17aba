package google

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/auth"
	"google.golang.org/genai"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/retry"
)

const testKey = "AIzaTest-SECRET-key"

var signatureRE = regexp.MustCompile(`"thoughtSignature":"[A-Za-z0-9_=+/-]*"`)

// wireRequest is a generateContent request body as the API defines it,
// in the SDK's own types: a field the API does not know fails to decode.
type wireRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
}

// fake is a Gemini server (the Gemini API's paths, or Vertex AI's) that
// answers each request with the next of its replies and keeps what it
// received.
type fake struct {
	t       testing.TB
	path    string // the path every request must have
	mu      sync.Mutex
	replies []http.HandlerFunc
	bodies  [][]byte
	headers []http.Header
	srv     *httptest.Server
}

func newFake(t testing.TB, replies ...http.HandlerFunc) *fake {
	return newFakeAt(t, "/v1beta/models/gemini-test:generateContent", replies...)
}

func newFakeAt(t testing.TB, path string, replies ...http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{t: t, path: path, replies: replies}
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
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if _, err := decodeRequest(body); err != nil {
		f.t.Errorf("request %d: %v\n%.2000s", n, err, body)
	}
	if n >= len(f.replies) {
		http.Error(w, "no more replies", http.StatusTeapot)
		return
	}
	f.replies[n](w, r)
}

// decodeRequest decodes a body strictly, as the API's types. The API
// reads bytes in base64 of either alphabet, encoding/json only the
// standard one: a thought signature is read as the API would.
func decodeRequest(body []byte) (*wireRequest, error) {
	body = signatureRE.ReplaceAllFunc(body, func(m []byte) []byte {
		return []byte(strings.NewReplacer("-", "+", "_", "/").Replace(string(m)))
	})
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req wireRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("the body is not a generateContent request: %w", err)
	}
	return &req, nil
}

func (f *fake) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// request decodes the nth request body.
func (f *fake) request(n int) *wireRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.bodies) {
		f.t.Fatalf("request %d was never made (%d made)", n, len(f.bodies))
	}
	req, err := decodeRequest(f.bodies[n])
	if err != nil {
		f.t.Fatal(err)
	}
	return req
}

// raw decodes the nth request body as plain JSON.
func (f *fake) raw(n int) map[string]any {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(f.bodies[n], &m); err != nil {
		f.t.Fatalf("request body is not JSON: %v", err)
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

func newModel(t testing.TB, f *fake, a *attempts) *Model {
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

// reply answers with body as JSON.
func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		io.WriteString(w, body)
	}
}

// candidate is a response of one candidate with parts and a finish
// reason, and usage as given ("" for none).
func candidate(parts, finish, usage string) http.HandlerFunc {
	u := ""
	if usage != "" {
		u = `,
  "usageMetadata": ` + usage
	}
	return reply(`{
  "candidates": [
    {
      "content": {
        "parts": ` + parts + `,
        "role": "model"
      },
      "finishReason": "` + finish + `",
      "index": 0
    }
  ]` + u + `,
  "modelVersion": "gemini-test-001",
  "responseId": "resp-abc123"
}
`)
}

const okUsage = `{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}]}`

var okAnswer = candidate(`[{"text": "Paris."}]`, "STOP", okUsage)

// apiError is an error response in Google's shape.
func apiError(status int, code, message string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "{\n  \"error\": {\n    \"code\": %d,\n    \"message\": %q,\n    \"status\": %q\n  }\n}\n", status, message, code)
	}
}

func request() *agentrt.Request {
	return &agentrt.Request{
		Model: "gemini-test",
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
		{Name: "answer", Description: "Give the answer.", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
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
	var gv any
	json.Unmarshal(g, &gv)
	g, _ = json.Marshal(gv)
	wb, _ := json.Marshal(w)
	if string(g) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, wb)
	}
}

func TestTextAnswer(t *testing.T) {
	f := newFake(t, okAnswer)
	req := request()
	temp := 0.25
	req.Temperature = &temp
	req.MaxOutputTokens = 300
	resp, err := newModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Role != agentrt.Assistant || resp.Message.Content != "Paris." || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Usage != (agentrt.Usage{Input: 10, Output: 5}) || resp.Model != "gemini-test-001" {
		t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
	}
	b := f.raw(0)
	equalJSON(t, "contents", b["contents"], `[{"role": "user", "parts": [{"text": "Capital of France?"}]}]`)
	equalJSON(t, "systemInstruction", b["systemInstruction"], `{"role": "user", "parts": [{"text": "Be brief."}]}`)
	equalJSON(t, "generationConfig", b["generationConfig"], `{"temperature": 0.25, "maxOutputTokens": 300}`)
	for _, k := range []string{"tools", "toolConfig"} {
		if _, ok := b[k]; ok {
			t.Errorf("request has %q: %v", k, b[k])
		}
	}
	h := f.headers[0]
	if h.Get("x-goog-api-key") != testKey || h.Get("Authorization") != "" {
		t.Errorf("x-goog-api-key %q, Authorization %q", h.Get("x-goog-api-key"), h.Get("Authorization"))
	}
}

// Thinking: Gemini 2.5 by budget, Gemini 3 by level; a family that does
// not think is sent nothing.
func TestReasoning(t *testing.T) {
	for _, tc := range []struct {
		model, reasoning string
		want             string
	}{
		{"gemini-2.5-flash", "none", `{"thinkingBudget": 0}`},
		{"gemini-2.5-flash", "high", `{"thinkingBudget": 24576}`},
		{"gemini-2.5-pro", "none", `{"thinkingBudget": 128}`},
		{"gemini-2.5-pro", "medium", `{"thinkingBudget": 8192}`},
		{"gemini-3-flash-preview", "none", `{"thinkingLevel": "MINIMAL"}`},
		{"gemini-3-flash-preview", "medium", `{"thinkingLevel": "MEDIUM"}`},
		{"gemini-3-pro-preview", "none", `{"thinkingLevel": "LOW"}`},
		{"gemini-3-pro-preview", "high", `{"thinkingLevel": "HIGH"}`},
		{"gemini-2.0-flash", "high", `null`},
		{"gemini-3-flash-preview", "", `null`},
	} {
		t.Run(tc.model+"/"+tc.reasoning, func(t *testing.T) {
			f := newFakeAt(t, "/v1beta/models/"+tc.model+":generateContent", okAnswer)
			req := request()
			req.Model, req.Reasoning = tc.model, tc.reasoning
			if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			gc, _ := f.raw(0)["generationConfig"].(map[string]any)
			equalJSON(t, "thinkingConfig", gc["thinkingConfig"], tc.want)
		})
	}
}

func TestNativeAnswer(t *testing.T) {
	answer := `{"city":"Paris","note":null}`
	f := newFake(t, candidate(fmt.Sprintf(`[{"text": %q}]`, answer), "STOP", okUsage))
	req := request()
	schema := `{"type":"object","properties":{"city":{"type":"string","minLength":1},"note":{"type":["string","null"]}},"required":["city","note"],"additionalProperties":false}`
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModeNative, Name: "answer", Description: "The capital.", Schema: json.RawMessage(schema)}
	resp, err := newModel(t, f, nil).Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != answer {
		t.Errorf("content = %q", resp.Message.Content)
	}
	equalJSON(t, "generationConfig", f.raw(0)["generationConfig"], `{"responseMimeType": "application/json", "responseJsonSchema": `+schema+`}`)
	if gc := f.request(0).GenerationConfig; gc.ResponseSchema != nil {
		t.Errorf("the OpenAPI-subset responseSchema was sent: %+v", gc.ResponseSchema)
	}
}

func TestPromptedSendsNoSchema(t *testing.T) {
	f := newFake(t, okAnswer)
	req := request()
	req.Answer = &agentrt.AnswerFormat{Mode: plan.ModePrompted, Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
	if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if gc := f.request(0).GenerationConfig; gc != nil && (gc.ResponseMIMEType != "" || gc.ResponseJsonSchema != nil) {
		t.Errorf("prompted mode sent a response format: %+v", gc)
	}
}

func TestToolMode(t *testing.T) {
	for _, tc := range []struct {
		choice agentrt.ToolChoice
		want   string
	}{
		{agentrt.ToolChoice{Mode: agentrt.ChooseTool, Name: "answer"}, `{"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["answer"]}}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseRequired}, `{"functionCallingConfig": {"mode": "ANY"}}`},
		{agentrt.ToolChoice{Mode: agentrt.ChooseAuto}, `{"functionCallingConfig": {"mode": "AUTO"}}`},
		{agentrt.ToolChoice{Mode: "none"}, `{"functionCallingConfig": {"mode": "NONE"}}`},
	} {
		t.Run(tc.choice.Mode, func(t *testing.T) {
			f := newFake(t, candidate(`[{"functionCall": {"name": "answer", "args": {"text": "Paris"}}, "thoughtSignature": "c2lnbmF0dXJl"}]`, "STOP", okUsage))
			req := toolRequest()
			req.ToolChoice = tc.choice
			resp, err := newModel(t, f, nil).Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "answer" || string(resp.Message.ToolCalls[0].Arguments) != `{"text":"Paris"}` {
				t.Errorf("message = %+v", resp.Message)
			}
			b := f.raw(0)
			equalJSON(t, "toolConfig", b["toolConfig"], tc.want)
			equalJSON(t, "tools", b["tools"], `[{"functionDeclarations": [
				{"name": "weather", "description": "Weather of a city.", "parametersJsonSchema": `+string(weatherSchema)+`},
				{"name": "answer", "description": "Give the answer.", "parametersJsonSchema": {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}]`)
			for _, d := range f.request(0).Tools[0].FunctionDeclarations {
				if d.Parameters != nil {
					t.Errorf("%s: the OpenAPI-subset parameters were sent", d.Name)
				}
			}
		})
	}
}

// A call the API gave an ID keeps it, there and back; one it gave none
// gets an ID of the response's, and goes back without one, in order.
func TestFunctionCallRoundTrip(t *testing.T) {
	f := newFake(t,
		candidate(`[{"functionCall": {"id": "fc-1", "name": "weather", "args": {"city": "Nice"}}}]`, "STOP", okUsage),
		candidate(`[{"functionCall": {"name": "weather", "args": {"city": "Lyon"}}}]`, "STOP", okUsage),
		okAnswer)
	m := newModel(t, f, nil)
	req := toolRequest()
	req.Model = "gemini-test"
	for round := range 2 {
		resp, err := m.Complete(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 {
			t.Fatalf("round %d: message = %+v", round, resp.Message)
		}
		call := resp.Message.ToolCalls[0]
		req.Messages = append(req.Messages, resp.Message,
			agentrt.Message{Role: agentrt.ToolRole, ToolCallID: call.ID, Name: call.Name, Content: "sunny", IsError: round == 1})
	}
	calls := []agentrt.ToolCall{req.Messages[2].ToolCalls[0], req.Messages[4].ToolCalls[0]}
	if calls[0].ID != "fc-1" || calls[1].ID != idPrefix+"resp-abc123-0" {
		t.Errorf("IDs %q and %q", calls[0].ID, calls[1].ID)
	}
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "contents", f.raw(2)["contents"], `[
		{"role": "user", "parts": [{"text": "Capital of France?"}]},
		{"role": "model", "parts": [{"functionCall": {"id": "fc-1", "name": "weather", "args": {"city": "Nice"}},"thoughtSignature":"skip_thought_signature_validator"}]},
		{"role": "user", "parts": [{"functionResponse": {"id": "fc-1", "name": "weather", "response": {"content": "sunny"}}}]},
		{"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Lyon"}},"thoughtSignature":"skip_thought_signature_validator"}]},
		{"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"error": "sunny"}}}]}]`)
}

// Gemini 3 refuses a history whose function calls lack thought
// signatures; they are sent with the one Google documents for that.
func TestThoughtSignatureOnGemini3(t *testing.T) {
	for model, signed := range map[string]bool{"gemini-3-flash-preview": true, "gemini-2.5-flash": false} {
		f := newFakeAt(t, "/v1beta/models/"+model+":generateContent", okAnswer)
		req := toolRequest()
		req.Model = model
		req.Messages = append(req.Messages,
			agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Nice"}`)}}},
			agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "c1", Content: "sunny"})
		if _, err := newModel(t, f, nil).Complete(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		part, _ := f.raw(0)["contents"].([]any)[1].(map[string]any)["parts"].([]any)[0].(map[string]any)
		got, _ := part["thoughtSignature"].(string)
		if want := skipSignature; signed && got != want || !signed && got != "" {
			t.Errorf("%s: thought signature %q", model, got)
		}
		if resp := f.request(0).Contents[2].Parts[0].FunctionResponse; resp == nil || resp.Name != "weather" {
			t.Errorf("%s: the result names no tool: %+v", model, resp)
		}
	}
}

func TestParallelCalls(t *testing.T) {
	f := newFake(t,
		reply(`{"candidates":[{"content":{"role":"model","parts":[
			{"text":"Checking both."},
			{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},
			{"functionCall":{"name":"weather","args":{"city":"Lyon","days":2.5,"z":{"b":1,"a":[true,null]}}}}]},
			"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":20,"thoughtsTokenCount":30,"cachedContentTokenCount":64,"totalTokenCount":150},"modelVersion":"gemini-test-001","responseId":"r9"}`),
		okAnswer)
	m := newModel(t, f, nil)
	req := toolRequest()
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentrt.ToolCall{
		{ID: idPrefix + "r9-0", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: idPrefix + "r9-1", Name: "weather", Arguments: json.RawMessage(`{"city":"Lyon","days":2.5,"z":{"a":[true,null],"b":1}}`)},
	}
	g, _ := json.Marshal(resp.Message.ToolCalls)
	w, _ := json.Marshal(want)
	if string(g) != string(w) || resp.Message.Content != "Checking both." {
		t.Errorf("message = %s %q", g, resp.Message.Content)
	}
	if want := (agentrt.Usage{Input: 100, Output: 50, Cached: 64}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	// Both results go back in one user turn, in the calls' order.
	req.Messages = append(req.Messages, resp.Message,
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: want[0].ID, Name: "weather", Content: "sunny"},
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: want[1].ID, Name: "weather", Content: "rain"})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, "contents", f.raw(1)["contents"], `[
		{"role": "user", "parts": [{"text": "Capital of France?"}]},
		{"role": "model", "parts": [{"text": "Checking both."},
			{"functionCall": {"name": "weather", "args": {"city": "Paris"}},"thoughtSignature":"skip_thought_signature_validator"},
			{"functionCall": {"name": "weather", "args": {"city": "Lyon", "days": 2.5, "z": {"a": [true, null], "b": 1}}},"thoughtSignature":"skip_thought_signature_validator"}]},
		{"role": "user", "parts": [
			{"functionResponse": {"name": "weather", "response": {"content": "sunny"}}},
			{"functionResponse": {"name": "weather", "response": {"content": "rain"}}}]}]`)
}

// Prose in a turn that could call tools is the answer's text; thoughts
// are not.
func TestProseAnswer(t *testing.T) {
	f := newFake(t, candidate(`[{"text": "Let me think.", "thought": true}, {"text": "It is "}, {"text": "Paris."}]`, "STOP", okUsage))
	resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "It is Paris." || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("message = %+v", resp.Message)
	}
}

// With no usageMetadata the usage is zero, which the runtime reads as
// none reported and counts itself.
func TestUsageMissing(t *testing.T) {
	f := newFake(t, candidate(`[{"text": "Paris."}]`, "STOP", ""))
	resp, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (agentrt.Usage{}) || resp.Message.Content != "Paris." {
		t.Errorf("usage %+v, content %q", resp.Usage, resp.Message.Content)
	}
}

func TestBlocked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply http.HandlerFunc
		want  string
	}{
		{"finishReason SAFETY", reply(`{"candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]}],
			"usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}, "modelVersion": "gemini-test-001"}`),
			"google: the model refused to answer (finishReason SAFETY)"},
		{"finishReason RECITATION", candidate(`[{"text": "It was the best of"}]`, "RECITATION", okUsage), "google: the model refused to answer (finishReason RECITATION)"},
		// The SDK drops finishMessage from Gemini API responses.
		{"finishReason PROHIBITED_CONTENT", reply(`{"candidates": [{"content": {"role": "model"}, "finishReason": "PROHIBITED_CONTENT", "finishMessage": "Blocked."}]}`),
			"google: the model refused to answer (finishReason PROHIBITED_CONTENT)"},
		{"promptFeedback", reply(`{"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}]},
			"usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}, "modelVersion": "gemini-test-001", "responseId": "x"}`),
			"google: the model refused to answer: the prompt was blocked (blockReason SAFETY)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.reply, okAnswer)
			_, err := newModel(t, f, nil).Complete(t.Context(), request())
			if !errors.Is(err, ErrRefused) || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if f.requests() != 1 {
				t.Errorf("%d requests, want 1", f.requests())
			}
		})
	}
}

func TestMaxTokens(t *testing.T) {
	f := newFake(t, candidate(`[{"text": "Paris is the cap"}]`, "MAX_TOKENS", okUsage))
	_, err := newModel(t, f, nil).Complete(t.Context(), request())
	if !errors.Is(err, ErrTruncated) || err.Error() != "google: the output was cut at the token limit (finishReason MAX_TOKENS)" {
		t.Errorf("err = %v", err)
	}
	// A call of a cut turn may be cut short ("Par" of "Paris") and still
	// fit its schema: none is made.
	f = newFake(t, candidate(`[{"functionCall": {"name": "answer", "args": {"text": "Par"}}}]`, "MAX_TOKENS", okUsage))
	resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
	if !errors.Is(err, ErrTruncated) || resp != nil {
		t.Errorf("a call with MAX_TOKENS: %v, %+v", err, resp)
	}
}

func TestNamelessCall(t *testing.T) {
	f := newFake(t, candidate(`[{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}, {"functionCall": {"args": {"city": "Rome"}}}]`, "STOP", okUsage))
	resp, err := newModel(t, f, nil).Complete(t.Context(), toolRequest())
	if err == nil || err.Error() != "google: function call 1 has no name" || resp != nil {
		t.Errorf("err = %v, resp = %+v", err, resp)
	}
}

func TestNoCandidates(t *testing.T) {
	f := newFake(t, reply(`{"usageMetadata": {"promptTokenCount": 3}, "modelVersion": "gemini-test-001"}`))
	_, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err == nil || err.Error() != "google: the response has no candidates" {
		t.Errorf("err = %v", err)
	}
}

func TestRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    http.HandlerFunc
		minWait  time.Duration
		inErrMsg string
	}{
		{"429 Retry-After", apiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", "Retry-After", "0.05"), 50 * time.Millisecond,
			"google: 429 Too Many Requests (RESOURCE_EXHAUSTED): Resource has been exhausted (e.g. check quota)."},
		{"429 RetryInfo", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED", "details": [
				{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}]},
				{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.04s"}]}}`)
		}, 40 * time.Millisecond, "google: 429 Too Many Requests (RESOURCE_EXHAUSTED): Quota exceeded."},
		{"500", apiError(500, "INTERNAL", "An internal error has occurred."), 0, "google: 500 Internal Server Error (INTERNAL): An internal error has occurred."},
		{"500 not JSON", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "upstream broke", 500) }, 0, "google: 500 Internal Server Error"},
		{"503", apiError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."), 0, "google: 503 Service Unavailable (UNAVAILABLE): The model is overloaded."},
		{"dropped before response", hangUp(""), 0, "google: "},
		{"dropped mid-response", hangUp("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"candidates\": [{\"cont"), 0, "google: "},
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
		{"400 bad key", apiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
			"google: 400 Bad Request (INVALID_ARGUMENT): API key not valid. Please pass a valid API key."},
		// A server that echoes the key must not get it into our errors.
		{"400 echoing the key", apiError(400, "INVALID_ARGUMENT", "API key "+testKey+" not valid."),
			"google: 400 Bad Request (INVALID_ARGUMENT): API key [redacted] not valid."},
		{"400 schema", apiError(400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': Cannot find field."),
			"google: 400 Bad Request (INVALID_ARGUMENT): Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': Cannot find field."},
		{"401", apiError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
			"google: 401 Unauthorized (UNAUTHENTICATED): Request had invalid authentication credentials."},
		{"403", apiError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
			"google: 403 Forbidden (PERMISSION_DENIED): Method doesn't allow unregistered callers."},
		{"404", apiError(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta."),
			"google: 404 Not Found (NOT_FOUND): models/gemini-9 is not found for API version v1beta."},
		{"403 not JSON echoing the key", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "denied for key="+testKey, 403) },
			"google: 403 Forbidden: denied for key=[redacted]"},
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
			noSecret(t, err)
			var se *StatusError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *StatusError", err)
			}
		})
	}
}

// noSecret fails when err shows the key anywhere.
func noSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{testKey, "x-goog-api-key", "Bearer"} {
		if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), s) {
			t.Errorf("error mentions %q: %v", s, err)
		}
	}
}

func TestRetriesUsedUp(t *testing.T) {
	fail := apiError(503, "UNAVAILABLE", "Unavailable.")
	f := newFake(t, fail, fail, fail, fail, okAnswer)
	_, err := newModel(t, f, &attempts{}).Complete(t.Context(), request())
	if err == nil || err.Error() != "after 4 attempts: google: 503 Service Unavailable (UNAVAILABLE): Unavailable." {
		t.Fatalf("err = %v", err)
	}
	if f.requests() != 4 {
		t.Errorf("%d requests, want 4", f.requests())
	}
}

// A body that is not JSON, or JSON of another shape, fails once with a
// short message that holds neither the body nor the key.
func TestMalformedBody(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not JSON", "<html>" + testKey + "</html>", "google: the response is not JSON of a GenerateContentResponse: "},
		{"wrong shape", `{"candidates": {"0": "x"}}`, "google: the response is not a GenerateContentResponse: "},
		{"wrong type", `{"candidates": [{"content": {"parts": [{"text": 7}]}}]}`, "google: the response is not JSON of a GenerateContentResponse: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply(tc.body), okAnswer)
			_, err := newModel(t, f, nil).Complete(t.Context(), request())
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to start %q", err, tc.want)
			}
			if f.requests() != 1 || len(err.Error()) > 300 {
				t.Errorf("%d requests; error of %d bytes", f.requests(), len(err.Error()))
			}
			noSecret(t, err)
		})
	}
}

// A body cut mid-way, as a dropped connection leaves it, is retried, as
// the other providers retry it.
func TestCutBodyRetried(t *testing.T) {
	f := newFake(t, reply(`{"candidates": [{"content": {"parts": [{"text": "`+testKey), okAnswer)
	resp, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err != nil || resp == nil || f.requests() != 2 {
		t.Fatalf("err = %v after %d requests, want an answer after 2", err, f.requests())
	}
}

// A redirect to another origin is refused: the key is not sent there.
func TestRedirectElsewhere(t *testing.T) {
	var other atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		okAnswer(w, r)
	}))
	defer elsewhere.Close()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	_, err := newModel(t, f, &attempts{}).Complete(t.Context(), request())
	if err == nil || !strings.Contains(err.Error(), "only to the scheme, host and port") {
		t.Fatalf("err = %v", err)
	}
	if other.Load() != 0 || f.requests() != 1 {
		t.Errorf("the other origin got %d requests; the first %d", other.Load(), f.requests())
	}
	noSecret(t, err)
}

func TestResponseTooLarge(t *testing.T) {
	huge := strings.Repeat("x", replylimit.MaxResponse)
	f := newFake(t, candidate(`[{"text": "`+huge+`"}]`, "STOP", ""))
	_, err := newModel(t, f, nil).Complete(t.Context(), request())
	if err == nil || !strings.Contains(err.Error(), "google: the response is larger than the 32 MiB agentc accepts from a provider") {
		t.Fatalf("err = %v", err)
	}
	if f.requests() != 1 {
		t.Errorf("%d requests, want 1", f.requests())
	}
}

// An attempt whose server sends nothing for Config.Stall is given up and
// made again.
func TestStalled(t *testing.T) {
	stall := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	a := &attempts{}
	f := newFake(t, stall, okAnswer)
	m, err := New(Config{APIKey: testKey, BaseURL: f.srv.URL, Retry: a.policy(), Stall: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Paris." || f.requests() != 2 || len(a.errs) != 1 || !strings.Contains(a.errs[0].Error(), "the server sent nothing for 200ms") {
		t.Errorf("content %q, %d requests, attempts %v", resp.Message.Content, f.requests(), a.errs)
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
	_, err := newModel(t, f, nil).Complete(ctx, request())
	if !errors.Is(err, context.DeadlineExceeded) || f.requests() != 1 {
		t.Fatalf("err = %v after %d requests, want a deadline error", err, f.requests())
	}
}

// staticToken is a Vertex AI credential for tests.
type staticToken struct{ calls atomic.Int32 }

func (s *staticToken) Token(context.Context) (*auth.Token, error) {
	s.calls.Add(1)
	return &auth.Token{Value: "ya29.test-token", Type: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestVertex(t *testing.T) {
	f := newFakeAt(t, "/v1beta1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-test:generateContent",
		candidate(`[{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}]`, "STOP", okUsage))
	tok := &staticToken{}
	m, err := New(Config{Backend: BackendVertex, Project: "my-project", Location: "europe-west4", BaseURL: f.srv.URL,
		Credentials: auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: tok}), Retry: (&attempts{}).policy()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), toolRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "weather" {
		t.Errorf("message = %+v", resp.Message)
	}
	h := f.headers[0]
	if h.Get("Authorization") != "Bearer ya29.test-token" || h.Get("x-goog-api-key") != "" {
		t.Errorf("Authorization %q, x-goog-api-key %q", h.Get("Authorization"), h.Get("x-goog-api-key"))
	}
	if f.request(0).Tools[0].FunctionDeclarations[0].ParametersJsonSchema == nil {
		t.Error("no parametersJsonSchema on Vertex AI")
	}
}

func TestNewRefuses(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no key":                 {},
		"project on gemini":      {APIKey: testKey, Project: "p"},
		"vertex without project": {Backend: BackendVertex, Credentials: auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: &staticToken{}})},
		"vertex key and project": {Backend: BackendVertex, APIKey: testKey, Project: "p"},
		"unknown backend":        {Backend: "palm", APIKey: testKey},
	} {
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "google: ") {
			t.Errorf("%s: err = %v", name, err)
		} else {
			noSecret(t, err)
		}
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
		"arguments": func(r *agentrt.Request) {
			r.Messages = append(r.Messages, agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "c", Name: "weather", Arguments: json.RawMessage(`[1]`)}}})
		},
	} {
		req := toolRequest()
		mut(req)
		if _, err := m.Complete(t.Context(), req); err == nil || !strings.HasPrefix(err.Error(), "google: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
