package anthropic

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// cacheFake is a Messages API server with a prompt cache, as Anthropic
// describes it: the prompt is read in order (tools, system, messages) as
// blocks; a breakpoint (cache_control) writes the prefix up to its block
// to the cache, and a later request reads the longest prefix the cache
// holds that ends at one of its breakpoints or up to 20 blocks before one.
// It counts a block's tokens as a quarter of its JSON's bytes, and keeps
// no minimum length. It plays a run: it calls the tool "search" until the
// conversation holds rounds tool results, then calls the other tool
// offered (the answer) with answer.
type cacheFake struct {
	t      testing.TB
	srv    *httptest.Server
	rounds int
	answer string

	mu    sync.Mutex
	cache map[[32]byte]bool
}

func newCacheFake(t testing.TB, rounds int, answer string) *cacheFake {
	f := &cacheFake{t: t, rounds: rounds, answer: answer, cache: map[[32]byte]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// lookback is how many blocks before a breakpoint the API looks for a
// prefix it has cached.
const lookback = 20

func (f *cacheFake) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
		return
	}
	var req struct {
		Model    string            `json:"model"`
		Tools    []json.RawMessage `json:"tools"`
		System   []json.RawMessage `json:"system"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("request body is not a Messages request: %v", err)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, 400)
		return
	}
	// The prompt as blocks in cache order, each without its breakpoint,
	// and where the breakpoints are.
	var blocks [][]byte
	var marks []int
	add := func(prefix string, b json.RawMessage) {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			f.t.Errorf("block is not an object: %s", b)
			return
		}
		if _, ok := m["cache_control"]; ok {
			marks = append(marks, len(blocks))
			delete(m, "cache_control")
		}
		plain, _ := json.Marshal(m)
		blocks = append(blocks, append([]byte(prefix), plain...))
	}
	for _, t := range req.Tools {
		add("tool:", t)
	}
	for _, s := range req.System {
		add("system:", s)
	}
	results, tools := 0, []string{}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			add(m.Role+":", c)
			if strings.Contains(string(c), `"type":"tool_result"`) {
				results++
			}
		}
	}
	if len(marks) > 4 {
		f.t.Errorf("%d breakpoints; the API takes at most 4", len(marks))
	}
	for _, t := range req.Tools {
		var tool struct{ Name string }
		_ = json.Unmarshal(t, &tool)
		tools = append(tools, tool.Name)
	}
	tokens := make([]int, len(blocks)+1) // tokens[i]: the tokens of blocks[:i]
	keys := make([][32]byte, len(blocks)+1)
	h := sha256.New()
	for i, b := range blocks {
		tokens[i+1] = tokens[i] + (len(b)+3)/4
		fmt.Fprintf(h, "%d:%s\n", len(b), b)
		copy(keys[i+1][:], h.Sum(nil))
	}

	f.mu.Lock()
	read := 0
	for _, m := range marks {
		for end := m + 1; end > max(0, m+1-lookback); end-- {
			if f.cache[keys[end]] {
				read = max(read, tokens[end])
				break
			}
		}
	}
	written := 0
	for _, m := range marks {
		if !f.cache[keys[m+1]] {
			f.cache[keys[m+1]] = true
			written = max(written, tokens[m+1]-read)
		}
	}
	f.mu.Unlock()
	in := tokens[len(blocks)] - read - written

	var content string
	switch {
	case results < f.rounds:
		content = fmt.Sprintf(`[{"type": "tool_use", "id": "toolu_%02d", "name": "search", "input": {"q": "page %d"}}]`, results, results)
	default:
		answer := ""
		for _, t := range tools {
			if t != "search" {
				answer = t
			}
		}
		content = fmt.Sprintf(`[{"type": "tool_use", "id": "toolu_answer", "name": %q, "input": %s}]`, answer, f.answer)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id": "msg_01Cache%02d", "type": "message", "role": "assistant", "model": %q, "content": %s,
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": %d, "cache_creation_input_tokens": %d, "cache_read_input_tokens": %d, "output_tokens": 30,
    "cache_creation": {"ephemeral_5m_input_tokens": %d, "ephemeral_1h_input_tokens": 0}, "service_tier": "standard"}}`,
		results, req.Model, content, in, written, read, written)
}

// searchTool returns a page of text for each query, as a search would.
type searchTool struct{}

func (searchTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "search", Description: "Search the tracker for a query; returns the matching issues.",
		Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}
}

func (searchTool) Call(_ context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{Content: strings.Repeat("Issue: the export fails on large files; reported twice this week. ", 40) + string(args)}, nil
}

// triagePlan is a sealed plan of an agent on Anthropic that searches,
// then answers with a label; cache says whether it caches (model.cache).
func triagePlan(t testing.TB, cache bool) *plan.Plan {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "triage",
		Model:        plan.Model{Provider: "anthropic", Name: "claude-sonnet-4-5-20250929"},
		Instructions: strings.Repeat("You triage issues of a large project. Search the tracker for duplicates and related reports before you label an issue. ", 60),
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"search": {Kind: "exec", Description: "Search the tracker."}}},
		Output: &plan.Output{Name: "answer", Description: "The label.", KeepsTools: true, Mode: "tool", Enforce: "local", Retries: 2,
			Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"],"additionalProperties":false}`)},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if !cache {
		off := false
		p.Agent.Model.Cache = &off
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}
