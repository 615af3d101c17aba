package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	promptFile  = "../testdata/bench.prompt"
	inputFile   = "../testdata/input.json"
	answerFile  = "../testdata/answer.json"
	requestFile = "../testdata/floor.json" // what the floor sends: the same messages
)

// request is the part of a chat completion request the tests look at.
type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, or an array of text parts
	} `json:"messages"`
}

// text is a message's content as one string.
func text(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if part, ok := p.(map[string]any); ok {
				if s, ok := part["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// fake answers every chat completion with content as the message's text,
// as bench/server does for a request that asks for neither a tool call nor
// a response format, and keeps the requests it saw.
func fake(t *testing.T, content string) (string, func() []request) {
	t.Helper()
	var mu sync.Mutex
	var seen []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req request
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
			http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": "bench-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []request {
		mu.Lock()
		defer mu.Unlock()
		return append([]request(nil), seen...)
	}
}

// TestSameMessages checks that the peer sends what the floor and agentc
// send: the same model, system message (to which Genkit adds its request
// for JSON matching the output schema) and user message.
func TestSameMessages(t *testing.T) {
	answer, err := os.ReadFile(answerFile)
	if err != nil {
		t.Fatal(err)
	}
	var floor struct{ Model, System, User string }
	data, err := os.ReadFile(requestFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &floor); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	url, seen := fake(t, string(answer))
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-base-url", url, "-prompt", promptFile, "-input", inputFile}, &stdout, &stderr); err != nil {
		t.Fatalf("%v (stderr %q)", err, stderr.String())
	}
	reqs := seen()
	if len(reqs) != 1 {
		t.Fatalf("the peer sent %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Model != floor.Model {
		t.Errorf("model %q, want %q", req.Model, floor.Model)
	}
	if len(req.Messages) != 2 {
		t.Fatalf("%d messages, want a system and a user message: %+v", len(req.Messages), req.Messages)
	}
	if m := req.Messages[0]; m.Role != "system" || !strings.HasPrefix(strings.TrimSpace(text(m.Content)), floor.System+"\n") {
		t.Errorf("first message %s %q, want system %q", m.Role, text(m.Content), floor.System)
	}
	if m := req.Messages[1]; m.Role != "user" || strings.TrimSpace(text(m.Content)) != floor.User {
		t.Errorf("second message %s %q, want user %q", m.Role, text(m.Content), floor.User)
	}
}

func TestRun(t *testing.T) {
	answer, err := os.ReadFile(answerFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	badInput := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badInput, []byte(`{"id": 0, "customer": "", "title": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	for _, tc := range []struct {
		name, content, input, prompt, want, err string
	}{
		{name: "valid", content: string(answer), want: strings.TrimSpace(string(answer)) + "\n"},
		{name: "spaced", content: `{"urgency": 1,  "summary": "ok", "area": "ui"}`, want: `{"area":"ui","summary":"ok","urgency":1}` + "\n"},
		{name: "invalid", content: `{"area": "ui", "urgency": 9, "summary": "ok"}`, err: "schema"},
		{name: "two lines", content: `{"area": "ui", "urgency": 1, "summary": "two\nlines"}`, err: "schema"},
		{name: "not JSON", content: `the ticket is about logging in`, err: "not valid JSON"},
		{name: "bad input", content: string(answer), input: badInput, err: "schema"},
		{name: "no prompt file", content: string(answer), prompt: filepath.Join(dir, "none.prompt"), err: "no such file"},
	} {
		input, prompt := inputFile, promptFile
		if tc.input != "" {
			input = tc.input
		}
		if tc.prompt != "" {
			prompt = tc.prompt
		}
		url, _ := fake(t, tc.content)
		var stdout, stderr bytes.Buffer
		err := run([]string{"-base-url", url, "-prompt", prompt, "-input", input}, &stdout, &stderr)
		switch {
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && err == nil:
			t.Errorf("%s: no error; printed %q", tc.name, stdout.String())
		case tc.want == "" && !strings.Contains(err.Error(), tc.err):
			t.Errorf("%s: error %q, want it to say %q", tc.name, err, tc.err)
		}
		if stdout.String() != tc.want {
			t.Errorf("%s: printed %q, want %q", tc.name, stdout.String(), tc.want)
		}
	}
}
