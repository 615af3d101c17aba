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
// against a provider scripted by examples/testdata/fake-provider.json
// that speaks the OpenAI wire format (Chat Completions). It writes into the
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
