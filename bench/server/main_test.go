package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

const answer = `{"area": "auth", "urgency": 3, "summary": "x"}`

// client returns an SDK client talking to a Handler on loopback.
func client(t *testing.T, same bool) openai.Client {
	t.Helper()
	h, err := NewHandler([]byte(answer), same, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithAPIKey("sk-test"), option.WithBaseURL(srv.URL+"/v1"), option.WithMaxRetries(0))
}

func params(tool string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "bench-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("s"), openai.UserMessage("u")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tool, Parameters: map[string]any{"type": "object"},
		})},
		ToolChoice: openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: tool}),
	}
}

func TestAnswers(t *testing.T) {
	const compact = `{"area":"auth","urgency":3,"summary":"x"}`
	c := client(t, false)
	ctx := context.Background()

	// The forced output tool: one call of the named function.
	out, err := c.Chat.Completions.New(ctx, params("answer_0a1b2c3d"))
	if err != nil {
		t.Fatal(err)
	}
	calls := out.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "answer_0a1b2c3d" || calls[0].Function.Arguments != compact {
		t.Errorf("tool mode: got %+v", calls)
	}
	if out.Choices[0].FinishReason != "tool_calls" || out.Usage.TotalTokens == 0 {
		t.Errorf("tool mode: finish %q, usage %+v", out.Choices[0].FinishReason, out.Usage)
	}

	// The native mode: the answer is the content, even with tools offered.
	p := params("answer_0a1b2c3d")
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: map[string]any{"type": "object"}, Strict: openai.Bool(true)},
	}}
	out, err = c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if m := out.Choices[0].Message; m.Content != compact || len(m.ToolCalls) != 0 {
		t.Errorf("native mode: got content %q, tool calls %+v", m.Content, m.ToolCalls)
	}

	// One tool, not forced: it is called, unless tool_choice is "none".
	p = params("answer_0a1b2c3d")
	p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
	if out, err = c.Chat.Completions.New(ctx, p); err != nil {
		t.Fatal(err)
	}
	if calls := out.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "answer_0a1b2c3d" {
		t.Errorf("tool_choice auto: got %+v", calls)
	}
	p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	if out, err = c.Chat.Completions.New(ctx, p); err != nil {
		t.Fatal(err)
	}
	if m := out.Choices[0].Message; m.Content != compact || len(m.ToolCalls) != 0 {
		t.Errorf("tool_choice none: got content %q, tool calls %+v", m.Content, m.ToolCalls)
	}

	// No tools: the content (the prompted mode).
	p = params("x")
	p.Tools, p.ToolChoice = nil, openai.ChatCompletionToolChoiceOptionUnionParam{}
	out, err = c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if m := out.Choices[0].Message; m.Content != compact || len(m.ToolCalls) != 0 {
		t.Errorf("prompted mode: got content %q, tool calls %+v", m.Content, m.ToolCalls)
	}
}

func TestSame(t *testing.T) {
	c := client(t, true)
	ctx := context.Background()
	if _, err := c.Chat.Completions.New(ctx, params("answer_00000000")); err != nil {
		t.Fatal(err)
	}
	// Another tool name is the same request.
	if _, err := c.Chat.Completions.New(ctx, params("answer_ffffffff")); err != nil {
		t.Fatalf("a request differing only in the tool name: %v", err)
	}
	p := params("answer_00000000")
	p.Messages[1] = openai.UserMessage("another")
	_, err := c.Chat.Completions.New(ctx, p)
	var apiErr *openai.Error
	if err == nil || !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "differs") {
		t.Fatalf("a request with another message: got %v, want a 400 saying it differs", err)
	}
}

func TestEndpoints(t *testing.T) {
	h, err := NewHandler([]byte(answer), false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/chat/completions", http.StatusOK},
		{"POST", "/v1/chat/completions", http.StatusOK},
		{"GET", "/v1/chat/completions", http.StatusMethodNotAllowed},
		{"POST", "/v1/responses", http.StatusNotFound},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"model":"m","messages":[]}`)))
		if w.Code != tc.want {
			t.Errorf("%s %s: got %d, want %d", tc.method, tc.path, w.Code, tc.want)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:8080": true, "localhost:0": true,
		"0.0.0.0:0": false, ":8080": false, "192.0.2.1:80": false,
	} {
		if err := loopback(addr); (err == nil) != ok {
			t.Errorf("loopback(%q) = %v", addr, err)
		}
	}
}

func TestBadAnswer(t *testing.T) {
	if _, err := NewHandler([]byte(`{"area":`), false, io.Discard); err == nil {
		t.Error("an answer that is not JSON was accepted")
	}
}

// TestToolRounds: with ToolRounds, lookup is called until the conversation
// holds that many tool results, then the conversation gets prose, and a
// request without lookup (the answering turn) its answer as before.
func TestToolRounds(t *testing.T) {
	h, err := NewHandler([]byte(answer), false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h.ToolRounds = 2
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := openai.NewClient(option.WithAPIKey("sk-test"), option.WithBaseURL(srv.URL+"/v1"), option.WithMaxRetries(0))
	ctx := context.Background()
	p := params(lookupTool)
	p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
	for round := 1; round <= 3; round++ {
		out, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		m := out.Choices[0].Message
		if round == 3 {
			if m.Content == "" || len(m.ToolCalls) != 0 {
				t.Fatalf("round 3: want prose, got content %q, tool calls %+v", m.Content, m.ToolCalls)
			}
			if out.Usage.PromptTokens < 100 {
				t.Errorf("round 3: prompt tokens %d do not grow with the conversation", out.Usage.PromptTokens)
			}
			break
		}
		want := `{"q":"ticket ` + string(rune('0'+round)) + `"}`
		if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != lookupTool || m.ToolCalls[0].Function.Arguments != want {
			t.Fatalf("round %d: want a call of lookup with %s, got %+v", round, want, m.ToolCalls)
		}
		p.Messages = append(p.Messages, m.ToParam(), openai.ToolMessage("no ticket matches", m.ToolCalls[0].ID))
	}
	out, err := c.Chat.Completions.New(ctx, params("answer_0a1b2c3d"))
	if err != nil {
		t.Fatal(err)
	}
	if calls := out.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "answer_0a1b2c3d" {
		t.Errorf("the answering turn: got %+v", calls)
	}
}
