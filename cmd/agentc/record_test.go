package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/internal/cli"
)

// fakeScript is examples/testdata/fake-provider.json: what a scripted
// provider answers each test case of the examples, turn by turn, and the
// pages the http tools fetch.
type fakeScript struct {
	Cases []struct {
		Match string `json:"match"`
		Turns []struct {
			ToolCalls []struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool_calls"`
			Answer json.RawMessage `json:"answer"`
		} `json:"turns"`
	} `json:"cases"`
	HTTP map[string]json.RawMessage `json:"http"`
}

// TestRecordExamples records the journals of the examples' test cases
// (examples/testdata/<agent>/<case>.jsonl) with agentc test --record,
// against a provider scripted by examples/testdata/fake-provider.json
// that speaks the OpenAI and Anthropic wire formats. It writes into the
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
			out := turn{answer: tr.Answer}
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
		if tr.answer == nil {
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
	anthropic := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
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
		if !ok {
			problem("anthropic: no scripted turn %d for %s", n, body)
			nethttp.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted"}}`, 400)
			return
		}
		var content []any
		for i, c := range tr.calls {
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n+1, i+1), "name": c["name"], "input": c["arguments"]})
		}
		if tr.answer != nil {
			// The answer goes through the output tool: the one tool of the
			// request the agent does not declare.
			name := ""
			for _, tool := range req.Tools {
				if tool.Name != "docs" && tool.Name != "get_issue" {
					name = tool.Name
				}
			}
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_answer", n+1), "name": name, "input": tr.answer})
		}
		reply(w, map[string]any{"id": fmt.Sprintf("msg_%d", n+1), "type": "message", "role": "assistant", "model": req.Model, "content": content,
			"stop_reason": "tool_use", "stop_sequence": nil, "usage": map[string]any{"input_tokens": len(body) / 4, "output_tokens": 80}})
	}))
	defer anthropic.Close()
	t.Setenv("OPENAI_BASE_URL", openai.URL+"/v1/")
	t.Setenv("OPENAI_API_KEY", "sk-fake-recording")
	t.Setenv("ANTHROPIC_BASE_URL", anthropic.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-fake-recording")
	github := roundTripper(func(r *nethttp.Request) (*nethttp.Response, error) {
		page, ok := script.HTTP[r.URL.String()]
		status := 200
		if !ok {
			problem("http: no scripted page for %s", r.URL)
			page, status = json.RawMessage(`{"message":"Not Found"}`), 404
		}
		return &nethttp.Response{StatusCode: status, Status: nethttp.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: nethttp.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(page)),
			ContentLength: int64(len(page)), Request: r}, nil
	})
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"test", "--record", "../../examples/"}, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir, HTTPTransport: github})
	t.Logf("agentc test --record:\n%s%s", stdout.String(), stderr.String())
	if code != 0 {
		t.Errorf("exit code %d, want 0: every case passes as recorded", code)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

type roundTripper func(*nethttp.Request) (*nethttp.Response, error)

func (f roundTripper) RoundTrip(r *nethttp.Request) (*nethttp.Response, error) { return f(r) }
