package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/origin"
)

const (
	claude = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	nova   = "us.amazon.nova-pro-v1:0"
)

func textReply(text, stop string) string {
	return `{"output":{"message":{"role":"assistant","content":[{"text":` + quote(text) + `}]}},"stopReason":"` + stop + `",` +
		`"usage":{"inputTokens":12,"outputTokens":5,"totalTokens":17},"metrics":{"latencyMs":120}}`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func weatherTool() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "weather", Description: "The weather in a city.",
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`)}
}

// A text answer: system text blocks, a user message, inferenceConfig; the
// model ID escaped in the path as the SDK escapes it; usage read.
func TestText(t *testing.T) {
	for _, model := range []string{claude, nova} {
		t.Run(model, func(t *testing.T) {
			f := newFake(t, ok(textReply("Paris.", "end_turn")))
			m := newModel(t, f, 1, nil)
			temp := 0.25
			resp, err := m.Complete(t.Context(), &agentrt.Request{Model: model, Temperature: &temp, MaxOutputTokens: 300, Messages: []agentrt.Message{
				{Role: agentrt.System, Content: "Be brief."},
				{Role: agentrt.User, Content: "Capital of France?"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "Paris." || resp.Message.Role != agentrt.Assistant || len(resp.Message.ToolCalls) != 0 || resp.Message.State != nil {
				t.Errorf("message %+v", resp.Message)
			}
			if resp.Usage != (agentrt.Usage{Input: 12, Output: 5}) {
				t.Errorf("usage %+v", resp.Usage)
			}
			got := f.requests()
			if len(got) != 1 {
				t.Fatalf("%d requests", len(got))
			}
			wantPath := "/model/" + strings.ReplaceAll(model, ":", "%3A") + "/converse"
			if got[0].rawPath != wantPath {
				t.Errorf("path %s, want %s", got[0].rawPath, wantPath)
			}
			b := got[0].body
			if len(b.System) != 1 || b.System[0].Text != "Be brief." {
				t.Errorf("system %+v", b.System)
			}
			if len(b.Messages) != 1 || b.Messages[0].Role != "user" || *b.Messages[0].Content[0].Text != "Capital of France?" {
				t.Errorf("messages %+v", b.Messages)
			}
			if ic := b.InferenceConfig; ic == nil || *ic.MaxTokens != 300 || *ic.Temperature != 0.25 {
				t.Errorf("inferenceConfig %+v", ic)
			}
			if b.ToolConfig != nil || b.OutputConfig != nil || b.AdditionalModelRequestFields != nil {
				t.Errorf("sent more than asked: %+v", b)
			}
		})
	}
}

// An ARN names the model whole, its slashes escaped in the path.
func TestARN(t *testing.T) {
	arn := "arn:aws:bedrock:eu-central-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-20250514-v1:0"
	f := newFake(t, ok(textReply("ok", "end_turn")))
	if _, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: arn, Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	want := "/model/arn%3Aaws%3Abedrock%3Aeu-central-1%3A123456789012%3Ainference-profile%2Feu.anthropic.claude-sonnet-4-20250514-v1%3A0/converse"
	if p := f.requests()[0].rawPath; p != want {
		t.Errorf("path %s\nwant %s", p, want)
	}
}

// A tool call round trip: the model's toolUse comes back as a call with
// canonical arguments; the next turn sends the call and its result back,
// its text in the result.
func TestToolRoundTrip(t *testing.T) {
	f := newFake(t,
		ok(`{"output":{"message":{"role":"assistant","content":[{"text":"Checking."},{"toolUse":{"toolUseId":"tooluse_1","name":"weather","input":{"days":3,"city":"Köln"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":40,"outputTokens":9,"totalTokens":49}}`),
		ok(textReply("Rain.", "end_turn")),
	)
	m := newModel(t, f, 1, nil)
	req := &agentrt.Request{Model: claude, Tools: []agentrt.ToolSpec{weatherTool()}, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "Weather in Köln?"}}}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if resp.Message.Content != "Checking." || len(calls) != 1 || calls[0].ID != "tooluse_1" || calls[0].Name != "weather" || string(calls[0].Arguments) != `{"city":"Köln","days":3}` {
		t.Fatalf("message %+v", resp.Message)
	}
	b := f.requests()[0].body
	tc := b.ToolConfig
	if tc == nil || len(tc.Tools) != 1 || tc.Tools[0].ToolSpec.Name != "weather" || tc.Tools[0].ToolSpec.Description != "The weather in a city." || tc.ToolChoice == nil || tc.ToolChoice.Auto == nil {
		t.Fatalf("toolConfig %+v", tc)
	}
	var schema map[string]any
	if err := json.Unmarshal(tc.Tools[0].ToolSpec.InputSchema.JSON, &schema); err != nil || schema["required"].([]any)[0] != "city" {
		t.Errorf("inputSchema %s", tc.Tools[0].ToolSpec.InputSchema.JSON)
	}

	req.Messages = append(req.Messages, resp.Message, agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "tooluse_1", Name: "weather", Content: `{"forecast":"rain"}`})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.requests()[1].body.Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[2].Role != "user" {
		t.Fatalf("messages %+v", msgs)
	}
	use := msgs[1].Content[1].ToolUse
	if *msgs[1].Content[0].Text != "Checking." || use == nil || use.ToolUseID != "tooluse_1" || use.Name != "weather" || string(use.Input) != `{"city":"Köln","days":3}` {
		t.Errorf("assistant %+v", msgs[1].Content)
	}
	res := msgs[2].Content[0].ToolResult
	if res == nil || res.ToolUseID != "tooluse_1" || res.Status != "" || len(res.Content) != 1 || *res.Content[0].Text != `{"forecast":"rain"}` {
		t.Errorf("tool result %+v", msgs[2].Content)
	}
}

// A forced tool, any tool, and a tool result with the error status;
// parallel tool uses are all returned, in order, and their results go
// back as one user message.
func TestToolChoiceParallelAndErrors(t *testing.T) {
	two := `{"output":{"message":{"role":"assistant","content":[` +
		`{"toolUse":{"toolUseId":"a","name":"weather","input":{"city":"Oslo"}}},` +
		`{"toolUse":{"toolUseId":"b","name":"weather","input":{"city":"Rome"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
	f := newFake(t, ok(two))
	m := newModel(t, f, 1, nil)
	req := &agentrt.Request{Model: nova, Tools: []agentrt.ToolSpec{weatherTool()}, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseTool, Name: "weather"},
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "Oslo and Rome?"}}}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Message.ToolCalls; len(c) != 2 || c[0].ID != "a" || c[1].ID != "b" || string(c[1].Arguments) != `{"city":"Rome"}` {
		t.Fatalf("calls %+v", c)
	}
	if tc := f.requests()[0].body.ToolConfig.ToolChoice; tc == nil || tc.Tool == nil || tc.Tool.Name != "weather" || tc.Auto != nil || tc.Any != nil {
		t.Errorf("toolChoice %+v", tc)
	}
	req.ToolChoice = agentrt.ToolChoice{Mode: agentrt.ChooseRequired}
	req.Messages = append(req.Messages, resp.Message,
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "a", Content: "sunny"},
		agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "b", Content: "the service is down", IsError: true})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	b := f.requests()[1].body
	if tc := b.ToolConfig.ToolChoice; tc == nil || tc.Any == nil {
		t.Errorf("toolChoice %+v", tc)
	}
	last := b.Messages[len(b.Messages)-1]
	if len(b.Messages) != 3 || last.Role != "user" || len(last.Content) != 2 {
		t.Fatalf("messages %+v", b.Messages)
	}
	if r := last.Content[0].ToolResult; r.ToolUseID != "a" || r.Status != "" {
		t.Errorf("first result %+v", r)
	}
	if r := last.Content[1].ToolResult; r.ToolUseID != "b" || r.Status != "error" || *r.Content[0].Text != "the service is down" {
		t.Errorf("second result %+v", r)
	}
}

// A prose answer with tools offered is the text; no call.
func TestProse(t *testing.T) {
	f := newFake(t, ok(textReply("No tool needed.", "end_turn")))
	resp, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: claude, Tools: []agentrt.ToolSpec{weatherTool()},
		ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto}, Messages: []agentrt.Message{{Role: agentrt.User, Content: "Hello"}}})
	if err != nil || resp.Message.Content != "No tool needed." || len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
}

// Native structured output is outputConfig.textFormat, its schema a
// JSON string; prompted sends nothing.
func TestAnswer(t *testing.T) {
	f := newFake(t, ok(textReply(`{"city":"Paris"}`, "end_turn")))
	m := newModel(t, f, 1, nil)
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`
	for _, mode := range []string{plan.ModeNative, plan.ModePrompted} {
		resp, err := m.Complete(t.Context(), &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "Where?"}},
			Answer: &agentrt.AnswerFormat{Mode: mode, Name: "answer", Description: "The city.", Schema: json.RawMessage(schema)}})
		if err != nil || resp.Message.Content != `{"city":"Paris"}` {
			t.Fatalf("%s: %+v %v", mode, resp, err)
		}
	}
	got := f.requests()
	oc := got[0].body.OutputConfig
	if oc == nil || oc.TextFormat == nil || oc.TextFormat.Type != "json_schema" {
		t.Fatalf("outputConfig %+v", oc)
	}
	js := oc.TextFormat.Structure.JSONSchema
	if js.Schema != schema || js.Name != "answer" || js.Description != "The city." {
		t.Errorf("jsonSchema %+v", js)
	}
	if got[1].body.OutputConfig != nil {
		t.Errorf("prompted sent %+v", got[1].body.OutputConfig)
	}
}

// Stop reasons: max_tokens is ErrTruncated; guardrail_intervened and
// content_filtered are ErrRefused; usage may be missing.
func TestStopReasons(t *testing.T) {
	for _, c := range []struct {
		stop string
		want error
	}{
		{"max_tokens", ErrTruncated}, {"model_context_window_exceeded", ErrTruncated},
		{"guardrail_intervened", ErrRefused}, {"content_filtered", ErrRefused},
	} {
		f := newFake(t, ok(textReply("partial", c.stop)))
		_, err := newModel(t, f, 3, nil).Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.stop) {
			t.Errorf("%s: %v", c.stop, err)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("%s: %d requests", c.stop, n)
		}
	}
	// A toolUse block of a cut turn may be cut short, its input a
	// document that still fits the schema: no call of it is made.
	f := newFake(t, ok(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"answer","input":{"summary":"The results were strong, but"}}}]}},"stopReason":"max_tokens"}`))
	if resp, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}); !errors.Is(err, ErrTruncated) || resp != nil {
		t.Errorf("a toolUse cut at max_tokens: %+v %v", resp, err)
	}
	f = newFake(t, ok(`{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn"}`))
	resp, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
	if err != nil || resp.Usage != (agentrt.Usage{}) || resp.Message.Content != "hi" {
		t.Errorf("no usage: %+v %v", resp, err)
	}
	// Input read from and written to the cache is part of the input.
	f = newFake(t, ok(`{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":2,"totalTokens":312,"cacheReadInputTokens":200,"cacheWriteInputTokens":100}}`))
	resp, err = newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
	if err != nil || resp.Usage != (agentrt.Usage{Input: 310, Output: 2, Cached: 200, CacheWrite: 100}) {
		t.Errorf("cached usage: %+v %v", resp, err)
	}
}

// Reasoning: Anthropic models get a thinking budget, and their reasoning
// blocks come back as the message's state and are sent back before its
// tool use; Nova 2 gets reasoningConfig; others are refused before any
// request.
func TestReasoning(t *testing.T) {
	sonnet := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	f := newFake(t,
		ok(`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Think.","signature":"sig-1"}}},{"reasoningContent":{"redactedContent":"AAEC"}},{"toolUse":{"toolUseId":"t1","name":"weather","input":{"city":"Oslo"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`),
		ok(textReply("Cold.", "end_turn")),
	)
	m := newModel(t, f, 1, nil)
	req := &agentrt.Request{Model: sonnet, Reasoning: "medium", Tools: []agentrt.ToolSpec{weatherTool()}, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseAuto},
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "Oslo?"}}}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	st := resp.Message.State
	if st == nil || st.Provider != "bedrock" || string(st.Data) != `[{"text":"Think.","signature":"sig-1"},{"redacted":"AAEC"}]` {
		t.Fatalf("state %+v", st)
	}
	b := f.requests()[0].body
	if string(b.AdditionalModelRequestFields) != `{"thinking":{"budget_tokens":8192,"type":"enabled"}}` || *b.InferenceConfig.MaxTokens != 8192+DefaultMaxTokens {
		t.Errorf("additionalModelRequestFields %s, maxTokens %d", b.AdditionalModelRequestFields, *b.InferenceConfig.MaxTokens)
	}
	req.Messages = append(req.Messages, resp.Message, agentrt.Message{Role: agentrt.ToolRole, ToolCallID: "t1", Content: "-5"})
	if _, err := m.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	a := f.requests()[1].body.Messages[1].Content
	if len(a) != 3 || a[0].ReasoningContent == nil || a[0].ReasoningContent.ReasoningText.Text != "Think." || a[0].ReasoningContent.ReasoningText.Signature != "sig-1" ||
		!bytes.Equal(a[1].ReasoningContent.RedactedContent, []byte{0, 1, 2}) || a[2].ToolUse == nil {
		t.Errorf("assistant sent back %+v", a)
	}

	f = newFake(t, ok(textReply("ok", "end_turn")))
	if _, err := newModel(t, f, 1, nil).Complete(t.Context(), &agentrt.Request{Model: "global.amazon.nova-2-lite-v1:0", Reasoning: "high", Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := string(f.requests()[0].body.AdditionalModelRequestFields); got != `{"reasoningConfig":{"maxReasoningEffort":"high","type":"enabled"}}` {
		t.Errorf("nova 2: %s", got)
	}

	temp := 0.5
	for name, r := range map[string]*agentrt.Request{
		"nova 1":            {Model: nova, Reasoning: "low"},
		"unknown level":     {Model: sonnet, Reasoning: "max"},
		"forced tool":       {Model: sonnet, Reasoning: "low", Tools: []agentrt.ToolSpec{weatherTool()}, ToolChoice: agentrt.ToolChoice{Mode: agentrt.ChooseRequired}},
		"temperature":       {Model: sonnet, Reasoning: "low", Temperature: &temp},
		"budget past limit": {Model: sonnet, Reasoning: "high", MaxOutputTokens: 2000},
		"bad state":         {Model: sonnet, Messages: []agentrt.Message{{Role: agentrt.Assistant, State: &agentrt.ProviderState{Provider: "bedrock", Data: json.RawMessage(`{"x":1}`)}}}},
	} {
		f := newFake(t, ok(textReply("ok", "end_turn")))
		r.Messages = append(r.Messages, agentrt.Message{Role: agentrt.User, Content: "x"})
		if _, err := newModel(t, f, 1, nil).Complete(t.Context(), r); err == nil || len(f.requests()) != 0 {
			t.Errorf("%s: %v, %d requests", name, err, len(f.requests()))
		}
	}
}

// Retries: 429 ThrottlingException and 500/503 are retried with the
// policy's waits (Retry-After honoured); 400, 403 and 404 are not; an
// error body echoing the credentials never shows them.
func TestErrors(t *testing.T) {
	req := &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
	for _, c := range []struct {
		name     string
		first    reply
		attempts int
	}{
		{"throttled", awsError(429, "ThrottlingException", "Too many requests, please wait before trying again."), 2},
		{"internal", awsError(500, "InternalServerException", "internal"), 2},
		{"unavailable", awsError(503, "ServiceUnavailableException", "busy"), 2},
		{"not ready", awsError(429, "ModelNotReadyException", "warming up"), 2},
	} {
		w := &waits{}
		f := newFake(t, c.first, ok(textReply("fine", "end_turn")))
		resp, err := newModel(t, f, 3, w).Complete(t.Context(), req)
		if err != nil || resp.Message.Content != "fine" || len(f.requests()) != c.attempts {
			t.Errorf("%s: %v, %d requests", c.name, err, len(f.requests()))
		}
		if len(w.d) != 1 || w.d[0] <= 0 || w.d[0] > 4e6 {
			t.Errorf("%s: waits %v", c.name, w.d)
		}
	}
	// Retry-After is a floor under the policy's wait.
	w := &waits{}
	throttled := awsError(429, "ThrottlingException", "slow down")
	throttled.header["Retry-After"] = "0.05"
	f := newFake(t, throttled, ok(textReply("fine", "end_turn")))
	if _, err := newModel(t, f, 3, w).Complete(t.Context(), req); err != nil || len(w.d) != 1 || w.d[0] < 50e6 {
		t.Errorf("Retry-After: %v, waits %v", err, w.d)
	}

	echo := "The security token included in the request is invalid: " + testAKID + " / " + testSecret
	for _, c := range []struct {
		reply
		code string
	}{
		{awsError(400, "ValidationException", "The model returned the following errors: "+echo), "ValidationException"},
		{awsError(403, "AccessDeniedException", echo), "AccessDeniedException"},
		{awsError(404, "ResourceNotFoundException", "Model not found: "+testAKID), "ResourceNotFoundException"},
		{reply{status: 403, body: `{"__type":"UnrecognizedClientException","message":"` + testSecret + `"}`}, "UnrecognizedClientException"},
	} {
		f := newFake(t, c.reply)
		_, err := newModel(t, f, 3, nil).Complete(t.Context(), req)
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != c.status || se.Code != c.code || len(f.requests()) != 1 {
			t.Errorf("%s: %v (%d requests)", c.code, err, len(f.requests()))
			continue
		}
		if !strings.Contains(err.Error(), "[redacted]") && c.code != "ResourceNotFoundException" {
			t.Errorf("%s: %v", c.code, err)
		}
		noSecret(t, err.Error())
	}
	// Every attempt throttled: the last error, after the attempts.
	f = newFake(t, awsError(429, "ThrottlingException", "slow down"))
	_, err := newModel(t, f, 3, nil).Complete(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "ThrottlingException") || len(f.requests()) != 3 {
		t.Errorf("throttled throughout: %v", err)
	}
}

// A body that is not a Converse response fails clearly and is not
// retried; one cut short, whatever its Content-Length says, is retried.
func TestBadBodies(t *testing.T) {
	req := &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
	cut := newFake(t, ok(`{"output":`), ok(textReply("fine", "end_turn")))
	if resp, err := newModel(t, cut, 3, nil).Complete(t.Context(), req); err != nil || resp.Message.Content != "fine" || len(cut.requests()) != 2 {
		t.Errorf("a body cut short: %v, %d requests", err, len(cut.requests()))
	}
	for _, body := range []string{`not json ` + testSecret, `{"output":{"message":{"role":"assistant","content":"x"}}}`, `[]`} {
		f := newFake(t, ok(body))
		_, err := newModel(t, f, 3, nil).Complete(t.Context(), req)
		if err == nil || len(f.requests()) != 1 {
			t.Errorf("%q: %v, %d requests", body, err, len(f.requests()))
			continue
		}
		noSecret(t, err.Error())
	}
	// A response whose Content-Length promises more than comes.
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls++
		body := textReply("fine", "end_turn")
		if calls == 1 {
			w.Header().Set("Content-Length", "500")
			w.WriteHeader(200)
			io.WriteString(w, body[:20])
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: srv.URL, Retry: fastPolicy(3)})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), req)
	if err != nil || resp.Message.Content != "fine" || calls != 2 {
		t.Errorf("cut body: %v, %d calls", err, calls)
	}
}

// A request changed after it was signed is refused by the fake's check:
// the signature covers the body.
func TestSignatureCoversBody(t *testing.T) {
	f := newFake(t, ok(textReply("fine", "end_turn")))
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL, Retry: fastPolicy(1),
		HTTPClient: &http.Client{Transport: tamper{}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "pay 10"}}})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != "InvalidSignatureException" || f.badSig != 1 {
		t.Errorf("a tampered request: %v (bad signatures %d)", err, f.badSig)
	}
}

// tamper changes "10" to "99" in a request's body on the way.
type tamper struct{}

func (tamper) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	b = bytes.ReplaceAll(b, []byte("pay 10"), []byte("pay 99"))
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	return http.DefaultTransport.RoundTrip(r)
}

// A redirect to another origin is refused, whatever its code (the HTTP
// client answers a 307 or 308 of a body it cannot send again with the
// redirect itself, an error); the other origin sees nothing, and no
// attempt is made again.
func TestRedirect(t *testing.T) {
	var leaked int
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked++ }))
	defer sink.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		var calls int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			http.Redirect(w, r, sink.URL+r.URL.Path, code)
		}))
		m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: srv.URL, Retry: fastPolicy(3)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Complete(t.Context(), &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
		srv.Close()
		if err == nil || leaked != 0 || calls != 1 {
			t.Errorf("%d: %v, %d leaked, %d calls", code, err, leaked, calls)
			continue
		}
		if code < 307 && !errors.Is(err, origin.ErrRedirect) {
			t.Errorf("%d: %v", code, err)
		}
		noSecret(t, err.Error())
	}
}

// New takes a region and credentials and nothing from the environment.
func TestNew(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT12345")
	for _, c := range []Config{{Credentials: staticCreds}, {Region: testRegion}, {Region: testRegion, Credentials: staticCreds, BaseURL: "ftp://x"}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestLongToolNameCut: a tool use whose input is no object fails the
// reply naming the tool, whose name the model wrote at any length: its
// start is shown, not a megabyte of it.
func TestLongToolNameCut(t *testing.T) {
	req := &agentrt.Request{Model: nova, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}
	name := strings.Repeat("n", 1<<20)
	f := newFake(t, ok(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"`+name+`","input":[1]}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`))
	_, err := newModel(t, f, 3, nil).Complete(t.Context(), req)
	if err == nil || len(err.Error()) > 1<<10 || !strings.Contains(err.Error(), "the input is not a JSON object") {
		t.Errorf("want an error under 1 KiB naming the tool: %.200v", err)
	}
}
