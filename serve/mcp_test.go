package serve_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/internal/servetest"
)

const labelSchema = `{"type":"object","properties":{"label":{"enum":["bug","feature"]},"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["label","confidence"],"additionalProperties":false}`

// labeler is an agent with an object input and an object contract.
func labeler(t testing.TB) serve.Agent {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "labeler", Description: "Labels an issue.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Label the issue.",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"]}`)},
		Prompt:       "{{.title}}",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       &plan.Output{Name: "answer", Description: "The label.", Mode: "tool", Enforce: "local", Retries: 2, Schema: json.RawMessage(labelSchema)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r}
}

// connect serves agents and returns a session of the SDK's own client,
// over the SDK's in-memory transports.
func connect(t *testing.T, agents ...serve.Agent) *mcp.ClientSession {
	t.Helper()
	s, err := serve.MCP("test", agents, nil)
	if err != nil {
		t.Fatal(err)
	}
	return session(t, s)
}

// TestToolsAreContracts: the client lists each agent as a tool whose
// input schema is its input contract and whose output schema its output
// contract, with the digests in _meta; a call's structured content is
// the answer, valid by the contract, and its text the same JSON.
func TestToolsAreContracts(t *testing.T) {
	ag := labeler(t)
	cs := connect(t, ag)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 {
		t.Fatalf("%d tools", len(list.Tools))
	}
	tool := list.Tools[0]
	in, _ := json.Marshal(tool.InputSchema)
	out, _ := json.Marshal(tool.OutputSchema)
	if tool.Name != "labeler" || tool.Description != "Labels an issue." || !strings.Contains(string(in), `"minLength":1`) || !strings.Contains(string(out), `"maximum":1`) {
		t.Errorf("tool %s: %q, input %s, output %s", tool.Name, tool.Description, in, out)
	}
	if tool.Meta[serve.MetaContract] != string(ag.Plan.Digests.Contract) || tool.Meta[serve.MetaPlan] != string(ag.Plan.Digests.Plan) {
		t.Errorf("meta %v", tool.Meta)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash on start"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("error result: %+v", res.Content)
	}
	answer, _ := json.Marshal(res.StructuredContent)
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(labelSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("label.json", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("label.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(answer)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("structured content %s: %v", answer, err)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || text.Text != string(answer) {
		t.Errorf("content %+v, structured %s", res.Content, answer)
	}
	if res.Meta[serve.MetaOutcome] != agentrt.OutcomeOK || res.Meta[serve.MetaBound] != agentrt.BoundNone {
		t.Errorf("meta %v", res.Meta)
	}
}

// TestBadArguments: arguments the input contract refuses are the call's
// error, saying why; nothing runs.
func TestBadArguments(t *testing.T) {
	cs := connect(t, labeler(t))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": ""}})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if !res.IsError || text == nil || !strings.Contains(text.Text, "input:") {
		t.Errorf("result %+v", res)
	}
}

// TestRefusedAgents: an agent no MCP tool can stand for (its input not
// an object), and two agents
// of one name, are refused before anything is served.
func TestRefusedAgents(t *testing.T) {
	ag := labeler(t)
	if _, err := serve.MCP("test", []serve.Agent{ag, ag}, nil); err == nil || !strings.Contains(err.Error(), "two agents are named labeler") {
		t.Errorf("two of one name: %v", err)
	}
	p := *ag.Plan
	p.Agent.Input = &plan.Input{Schema: json.RawMessage(`{"type":"string"}`)}
	if _, err := serve.MCP("test", []serve.Agent{{Plan: &p, Runner: ag.Runner}}, nil); err == nil || !strings.Contains(err.Error(), "not of type object") {
		t.Errorf("a string input: %v", err)
	}
}

// bearer sends a token with each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestHTTP: over the streamable HTTP transport, the SDK's client with
// the server's token lists and calls the agent; a request without it, or
// with another, is refused 401 and reaches no agent.
func TestHTTP(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t)}, nil, serve.AllAgents(token), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	client := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash on start"}})
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("call: %v %+v", err, res)
	}
	for _, auth := range []string{"", "Bearer wrong-token-of-the-server", "Basic " + token, token, "Bearer", "Bearer ", "Bearer" + token, "Bearer\t" + token, "Bearer:" + token} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "labeler") {
			t.Errorf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	// The scheme's name in any case, and more than one space after it
	// (RFC 9110, 11.1; RFC 6750, 2.1), is the token sent.
	for _, auth := range []string{"bearer " + token, "BEARER " + token, "Bearer   " + token} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Authorization %q: %d, want the token taken", auth, resp.StatusCode)
		}
	}
}

func TestCheckToken(t *testing.T) {
	for token, ok := range map[string]bool{"": false, "short": false, "sixteen-bytes-ok": true, "has a space in it!": false, "line\nbreak-in-the-token": false, "\xff\xfe-not-utf8-at-all": false} {
		if err := serve.CheckToken(token); (err == nil) != ok {
			t.Errorf("%q: %v", token, err)
		}
	}
}

// TestProbes: /healthz and /readyz answer without a token and say nothing
// of the agents; /readyz says 503 once the server is stopping.
func TestProbes(t *testing.T) {
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t)}, nil, serve.AllAgents("s3cret-token-of-the-server"), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	var stopping atomic.Bool
	srv := httptest.NewServer(serve.Mux(h, nil, stopping.Load))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("readyz %d %q", code, body)
	}
	if code, _ := get("/mcp"); code != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d", code)
	}
	stopping.Store(true)
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while stopping: %d", code)
	}
}

// TestConcurrentCalls: two calls run at once: the provider (OpenAI's wire
// format) answers neither until both have reached it.
func TestConcurrentCalls(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		arrived.Done()
		arrived.Wait() // both calls are in flight
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"{\"label\":\"bug\",\"confidence\":0.5}"}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, req.ToolChoice.Function.Name)
	}))
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	ag := labeler(t)
	p := *ag.Plan
	p.Agent.Model = plan.Model{Provider: "openai", Name: "m"}
	p.Output = nil
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, serve.Agent{Plan: &p, Runner: r})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("%+v", res.Content)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

// TestHTTPFileBound: over HTTP, an MCP call may carry an agent's file up
// to the bound its schema sets, past the 8 MiB of a request that carries
// none; a token that admits only to agents without files keeps 8 MiB.
func TestHTTPFileBound(t *testing.T) {
	const fileToken, plainToken = "token-of-the-reader-and-more", "token-of-the-labeler-alone"
	reader := servetest.Reader(t)
	p := *reader.Plan
	in := *p.Agent.Input
	in.Schema = json.RawMessage(strings.Replace(string(in.Schema), `"maxLength":88`, `"maxLength":16777216`, 1))
	p.Agent.Input = &in
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: &testmodel.Model{}, Files: reader.Files})
	if err != nil {
		t.Fatal(err)
	}
	reader = serve.Agent{Plan: &p, Runner: r, Files: reader.Files}
	tokens, err := serve.NewTokens([]serve.Token{{Token: fileToken, Agents: []string{"reader", "labeler"}}, {Token: plainToken, Agents: []string{"labeler"}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.MCPHandler("test", []serve.Agent{reader, labeler(t)}, nil, tokens, serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the sessions' cleanups: they close first
	ctx := context.Background()
	connect := func(token string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	note := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("Lunch is at noon. ", 600_000))) // 10.8 MB of text
	res, err := connect(fileToken).CallTool(ctx, &mcp.CallToolParams{Name: "reader", Arguments: map[string]any{"note": note}})
	if err != nil || res.IsError {
		t.Fatalf("a file of 10.8 MB over HTTP: %v %+v", err, res)
	}
	_, err = connect(plainToken).CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": note}})
	if err == nil {
		t.Error("a body past 8 MiB was taken for a token whose agents take no files")
	}
}
