package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/internal/cli"
)

// fakeScript is examples/testdata/fake-provider.json: what a scripted
// provider answers each test case of the examples, turn by turn.
type fakeScript struct {
	Cases []struct {
		Match string `json:"match"`
		Turns []struct {
			ToolCalls []struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool_calls"`
			// Text is a turn in prose: a model done with its tools, before
			// the turn that asks for the answer.
			Text   string          `json:"text"`
			Answer json.RawMessage `json:"answer"`
		} `json:"turns"`
	} `json:"cases"`
}

// TestRecordExamples records the journals of the examples' test cases
// (examples/testdata/<agent>/<case>.jsonl) with agentc test --record,
// against providers scripted by examples/testdata/fake-provider.json
// that speak OpenAI's (Chat Completions), Anthropic's, Gemini's and
// Bedrock's (Converse) wire formats. It writes into the
// repository, so it runs only when asked: AGENTC_RECORD_EXAMPLES=1. Every
// case must pass as recorded.
func TestRecordExamples(t *testing.T) {
	if os.Getenv("AGENTC_RECORD_EXAMPLES") == "" {
		t.Skip("set AGENTC_RECORD_EXAMPLES=1 to record the examples' journals")
	}
	data, err := os.ReadFile("../../examples/testdata/fake-provider.json")
	if err != nil {
		t.Fatal(err)
	}
	var script fakeScript
	if err := json.Unmarshal(data, &script); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	// turn finds a request's case and its turn: the assistant messages
	// the conversation holds so far.
	type turn struct {
		calls  []map[string]any
		text   string
		answer json.RawMessage
	}
	turnOf := func(body []byte, assistant int) (turn, bool) {
		for _, c := range script.Cases {
			if !bytes.Contains(body, []byte(c.Match)) {
				continue
			}
			if assistant >= len(c.Turns) {
				return turn{}, false
			}
			tr := c.Turns[assistant]
			out := turn{text: tr.Text, answer: tr.Answer}
			for _, call := range tr.ToolCalls {
				out.calls = append(out.calls, map[string]any{"name": call.Name, "arguments": call.Arguments})
			}
			return out, true
		}
		return turn{}, false
	}
	reply := func(w nethttp.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	openai := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			ResponseFormat struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
			nethttp.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		tr, ok := turnOf(body, n)
		if !ok || tr.answer != nil && req.ResponseFormat.Type != "json_schema" {
			problem("openai: no scripted turn %d for %s", n, body)
			nethttp.Error(w, `{"error":{"message":"unscripted","type":"invalid_request_error"}}`, 400)
			return
		}
		msg := map[string]any{"role": "assistant", "content": string(tr.answer)}
		finish := "stop"
		switch {
		case tr.text != "":
			msg["content"] = tr.text
		case tr.answer == nil:
			var calls []any
			for i, c := range tr.calls {
				calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", n+1, i+1), "type": "function",
					"function": map[string]any{"name": c["name"], "arguments": string(c["arguments"].(json.RawMessage))}})
			}
			msg, finish = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls"
		}
		reply(w, map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n+1), "object": "chat.completion", "created": 1714600000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": 60, "total_tokens": len(body)/4 + 60}})
	}))
	defer openai.Close()
	t.Setenv("OPENAI_BASE_URL", openai.URL+"/v1/")
	t.Setenv("OPENAI_API_KEY", "sk-fake-recording")
	anthropic := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			ToolChoice struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"tool_choice"`
			OutputConfig struct {
				Format struct {
					Type string `json:"type"`
				} `json:"format"`
			} `json:"output_config"`
		}
		if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req) != nil {
			nethttp.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
			return
		}
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		tr, ok := turnOf(body, n)
		forced := req.ToolChoice.Type == "tool"
		if !ok || tr.answer != nil && !forced && req.OutputConfig.Format.Type != "json_schema" {
			problem("anthropic: no scripted turn %d for %s", n, body)
			nethttp.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted"}}`, 400)
			return
		}
		var content []any
		stop := "end_turn"
		switch {
		case tr.answer != nil && forced:
			content, stop = []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_1", n+1), "name": req.ToolChoice.Name, "input": tr.answer}}, "tool_use"
		case tr.answer != nil:
			content = []any{map[string]any{"type": "text", "text": string(tr.answer)}}
		case tr.text != "":
			content = []any{map[string]any{"type": "text", "text": tr.text}}
		default:
			for i, c := range tr.calls {
				content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n+1, i+1), "name": c["name"], "input": c["arguments"]})
			}
			stop = "tool_use"
		}
		reply(w, map[string]any{"id": fmt.Sprintf("msg_%d", n+1), "type": "message", "role": "assistant", "model": req.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": len(body) / 4, "output_tokens": 60}})
	}))
	defer anthropic.Close()
	t.Setenv("ANTHROPIC_BASE_URL", anthropic.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-fake-recording")
	gemini := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Contents []struct {
				Role string `json:"role"`
			} `json:"contents"`
			GenerationConfig struct {
				ResponseMIMEType string `json:"responseMimeType"`
			} `json:"generationConfig"`
			ToolConfig struct {
				FunctionCallingConfig struct {
					Mode                 string   `json:"mode"`
					AllowedFunctionNames []string `json:"allowedFunctionNames"`
				} `json:"functionCallingConfig"`
			} `json:"toolConfig"`
		}
		if !geminiPath.MatchString(r.URL.Path) || json.Unmarshal(body, &req) != nil {
			nethttp.Error(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`, 400)
			return
		}
		n := 0
		for _, c := range req.Contents {
			if c.Role == "model" {
				n++
			}
		}
		tr, ok := turnOf(body, n)
		fc := req.ToolConfig.FunctionCallingConfig
		forced := fc.Mode == "ANY" && len(fc.AllowedFunctionNames) == 1
		if !ok || tr.answer != nil && !forced && req.GenerationConfig.ResponseMIMEType != "application/json" {
			problem("google: no scripted turn %d for %s", n, body)
			nethttp.Error(w, `{"error":{"code":400,"message":"unscripted","status":"INVALID_ARGUMENT"}}`, 400)
			return
		}
		var parts []any
		switch {
		case tr.answer != nil && forced:
			parts = []any{map[string]any{"functionCall": map[string]any{"name": fc.AllowedFunctionNames[0], "args": tr.answer}}}
		case tr.answer != nil:
			parts = []any{map[string]any{"text": string(tr.answer)}}
		case tr.text != "":
			parts = []any{map[string]any{"text": tr.text}}
		default:
			for _, c := range tr.calls {
				parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c["name"], "args": c["arguments"]}})
			}
		}
		reply(w, map[string]any{
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": len(body) / 4, "candidatesTokenCount": 60, "totalTokenCount": len(body)/4 + 60},
			"modelVersion":  "gemini-2.5-flash", "responseId": fmt.Sprintf("resp-%d", n+1),
		})
	}))
	defer gemini.Close()
	t.Setenv("GOOGLE_GEMINI_BASE_URL", gemini.URL)
	t.Setenv("GEMINI_API_KEY", "gemini-fake-recording")
	bedrock := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			ToolConfig struct {
				ToolChoice struct {
					Tool struct {
						Name string `json:"name"`
					} `json:"tool"`
				} `json:"toolChoice"`
			} `json:"toolConfig"`
		}
		if !converse.MatchString(r.URL.EscapedPath()) || json.Unmarshal(body, &req) != nil {
			w.Header().Set("X-Amzn-Errortype", "ValidationException")
			nethttp.Error(w, `{"message":"bad request"}`, 400)
			return
		}
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		tr, ok := turnOf(body, n)
		forced := req.ToolConfig.ToolChoice.Tool.Name
		if !ok || tr.answer != nil && forced == "" {
			problem("bedrock: no scripted turn %d for %s", n, body)
			w.Header().Set("X-Amzn-Errortype", "ValidationException")
			nethttp.Error(w, `{"message":"unscripted"}`, 400)
			return
		}
		var content []any
		stop := "end_turn"
		switch {
		case tr.answer != nil:
			content, stop = []any{map[string]any{"toolUse": map[string]any{"toolUseId": fmt.Sprintf("tooluse_%d_1", n+1), "name": forced, "input": tr.answer}}}, "tool_use"
		case tr.text != "":
			content = []any{map[string]any{"text": tr.text}}
		default:
			for i, c := range tr.calls {
				content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": fmt.Sprintf("tooluse_%d_%d", n+1, i+1), "name": c["name"], "input": c["arguments"]}})
			}
			stop = "tool_use"
		}
		reply(w, map[string]any{"output": map[string]any{"message": map[string]any{"role": "assistant", "content": content}}, "stopReason": stop,
			"usage": map[string]any{"inputTokens": len(body) / 4, "outputTokens": 60, "totalTokens": len(body)/4 + 60}, "metrics": map[string]any{"latencyMs": 100}})
	}))
	defer bedrock.Close()
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFAKERECORDING")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-recording-secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"test", "--record", "../../examples/"}, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
	t.Logf("agentc test --record:\n%s%s", stdout.String(), stderr.String())
	if code != 0 {
		t.Errorf("exit code %d, want 0: every case passes as recorded", code)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
