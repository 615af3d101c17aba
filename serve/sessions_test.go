package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
)

// gateTool is a tool that runs until its call's context ends, saying on
// entered when a call has begun.
type gateTool struct{ entered chan struct{} }

func (*gateTool) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "wait", Description: "Waits.", Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (g *gateTool) Call(ctx context.Context, _ json.RawMessage) (agentrt.ToolResult, error) {
	g.entered <- struct{}{}
	<-ctx.Done()
	return agentrt.ToolResult{}, ctx.Err()
}

// waiter is an agent whose one tool runs until its run is stopped.
func waiter(t *testing.T) (serve.Agent, *gateTool) {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "waiter", Description: "Waits.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Wait with the wait tool, then say so.",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"wait": {Kind: "exec", Description: "Waits.", Approve: plan.ApproveNever}}},
		Output:       &plan.Output{Name: "answer", Description: "What was done.", Mode: "tool", Enforce: "local", Retries: 2, KeepsTools: true, Schema: json.RawMessage(`{"type":"object","properties":{"done":{"type":"string"}},"required":["done"]}`)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
		Budgets:      plan.Budgets{Deadline: "600s"},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	gate := &gateTool{entered: make(chan struct{}, 16)}
	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"wait": gate}})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r}, gate
}

// connectHTTP opens a session of the SDK's client on the server at url
// with token.
func connectHTTP(ctx context.Context, url, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	client := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	return mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
}

// initialize posts an initialize without a session, and returns the
// answer's status, its session id and its body.
func initialize(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	return initializeAs(t, url, token, "raw")
}

const initializeMessage = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`

// initializeAs is initialize from a client of the name given.
func initializeAs(t *testing.T, url, token, name string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(initializeMessage, name)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(body)
}

// TestMCPSessionBounds: the clients of one token hold at most PerToken
// sessions at once; one more is refused 429, saying why, and opens
// nothing, while another token's clients, on the same agents, open
// theirs; a session its client closes makes room for another.
func TestMCPSessionBounds(t *testing.T) {
	const first, second = "first-token-of-the-server", "second-token-of-the-server"
	tokens, err := serve.NewTokens([]serve.Token{{Token: first}, {Token: second}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t)}, nil, tokens, serve.SessionBounds{PerToken: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the sessions' own
	ctx := context.Background()
	open := func(token string) *mcp.ClientSession {
		t.Helper()
		cs, err := connectHTTP(ctx, srv.URL, token, nil)
		if err != nil {
			t.Fatalf("a session of %s: %v", token, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	one := open(first)
	open(first)
	if cs, err := connectHTTP(ctx, srv.URL, first, nil); err == nil {
		cs.Close()
		t.Fatal("a third session of one token was opened, past its bound of 2")
	} else if !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("a third session: %v, want 429", err)
	}
	code, id, body := initialize(t, srv.URL, first)
	if code != http.StatusTooManyRequests || id != "" || !strings.Contains(body, "too many MCP sessions: this token's clients hold 2 open") {
		t.Errorf("a third session, asked raw: %d %q %s", code, id, body)
	}
	// The sessions held still serve.
	if _, err := one.ListTools(ctx, nil); err != nil {
		t.Errorf("a session held, past the bound: %v", err)
	}
	// Another token's clients are not held to the first's sessions.
	open(second)
	// A session closed (DELETE) makes room.
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := open(first).CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash on start"}})
	if err != nil || res.IsError {
		t.Errorf("a session opened after one closed: %v %+v", err, res)
	}
}

// TestMCPOpeningBounded: the message that opens a session is read to
// MaxOpeningBytes at most: one larger is refused 413, saying why, opens
// nothing and leaves the token's room for sessions as it was; one of
// that size opens a session. The SDK read it whole up to the token's
// bound on bodies (8 MiB, more for agents that take files), 256 sessions
// of a token at once.
func TestMCPOpeningBounded(t *testing.T) {
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t)}, nil, serve.AllAgents(apiToken), serve.SessionBounds{PerToken: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	name := func(size int) string { return strings.Repeat("n", size-len(fmt.Sprintf(initializeMessage, ""))) }
	code, id, body := initializeAs(t, srv.URL, apiToken, name(serve.MaxOpeningBytes+1))
	if code != http.StatusRequestEntityTooLarge || id != "" || !strings.Contains(body, "the message opening an MCP session is larger than the 1048576 bytes") {
		t.Errorf("an initialize of a byte past the bound: %d %q %.200s", code, id, body)
	}
	code, id, body = initializeAs(t, srv.URL, apiToken, name(serve.MaxOpeningBytes))
	if code != http.StatusOK || id == "" {
		t.Errorf("an initialize of the bound's size, the token's one session free: %d %q %.200s", code, id, body)
	}
}

// TestMCPSessionIdle: a session no request uses is closed once Idle has
// passed: its event stream (GET) ends without its client ending it, and a
// request in it is 404, on which MCP's clients open a new session. The
// idle time is shortened for the test; the test waits on the stream's end,
// whenever it comes.
func TestMCPSessionIdle(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t)}, nil, serve.AllAgents(token), serve.SessionBounds{Idle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, id, body := initialize(t, srv.URL, token)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", code, id, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The stream ends (or the session was gone before it opened: 404).
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound) {
		t.Fatalf("the idle session's event stream: %d %v", resp.StatusCode, err)
	}
	// The SDK drops a closed session from its table just after its
	// stream ends: a request in it is 404 once it has, and is answered
	// nothing before (an empty answer). It is asked again until then.
	for {
		list, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		list.Header.Set("Content-Type", "application/json")
		list.Header.Set("Accept", "application/json, text/event-stream")
		list.Header.Set("Authorization", "Bearer "+token)
		list.Header.Set("Mcp-Session-Id", id)
		resp, err = http.DefaultClient.Do(list)
		if err != nil {
			t.Fatalf("a request in the closed session: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if strings.Contains(string(body), `"tools"`) {
			t.Fatalf("a request in the closed session was served: %d %s", resp.StatusCode, body)
		}
	}
	// A new session opens.
	if code, id, _ := initialize(t, srv.URL, token); code != http.StatusOK || id == "" {
		t.Errorf("a new session: %d %q", code, id)
	}
}

// TestMCPHTTPClose: a server that stops closes its MCP sessions, which
// ends its clients' event streams, once the calls in flight are answered:
// a call whose run the stop interrupted gets its result, saying so, and
// only then does its session close.
func TestMCPHTTPClose(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	runs := newRuns(t, "", true)
	ag, gate := waiter(t)
	h, err := serve.MCPHandler("test", []serve.Agent{ag}, runs, serve.AllAgents(token), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	// The SDK's client keeps an event stream open for its session.
	cs, err := connectHTTP(ctx, srv.URL, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	idle, err := connectHTTP(ctx, srv.URL, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	type called struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "waiter", Arguments: map[string]any{"task": "wait"}})
		done <- called{res, err}
	}()
	<-gate.entered
	runs.Stop()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	c := <-done
	if c.err != nil || !c.res.IsError || !strings.Contains(c.res.Content[0].(*mcp.TextContent).Text, "the server stopped before the run ended") {
		t.Fatalf("the call in flight: %v %+v", c.err, c.res)
	}
	// The sessions are closed: their clients' connections end.
	for _, s := range []*mcp.ClientSession{cs, idle} {
		ended := make(chan error, 1)
		go func() { ended <- s.Wait() }()
		select {
		case <-ended:
		case <-ctx.Done():
			t.Fatal("a session outlived Close")
		}
	}
	// No new session is opened.
	if code, _, _ := initialize(t, srv.URL, token); code != http.StatusServiceUnavailable {
		t.Errorf("a session opened after Close: %d", code)
	}
}

// TestElicitationWaitHTTP: over HTTP (the SDK speaks 2025-11-25 there,
// asking in the middle of the call), a client asked to approve a call that
// never answers has the call refused once the answer wait has passed, not
// the run held to its deadline; the tool does not run. The wait is
// shortened for the test.
func TestElicitationWaitHTTP(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	serve.SetAnswerWait(t, 50*time.Millisecond)
	runs := newRuns(t, "", true)
	ag, sh := actor(t, runs.Ask)
	p := *ag.Plan
	p.Agent.Budgets.Deadline = "3600s" // the wait, not the deadline, ends it
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": sh}, Approver: runs.Ask})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.MCPHandler("test", []serve.Agent{{Plan: &p, Runner: r}}, runs, serve.AllAgents(token), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	// First: a run still waiting holds its request, which srv.Close waits for.
	t.Cleanup(runs.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	var once sync.Once
	asked, gone := make(chan struct{}), make(chan struct{})
	cs, err := connectHTTP(ctx, srv.URL, token, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		once.Do(func() { close(asked) })
		// The person never answers, until the test is over.
		select {
		case <-ctx.Done():
		case <-gone:
		}
		return nil, errors.New("no answer")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(gone)
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("over HTTP the SDK speaks %s", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "actor", Arguments: map[string]any{"task": "list"}})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the run still waits for the client's answer")
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	default:
		t.Error("the client was never asked")
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "the client was asked, and did not answer within 50ms") || sh.calls.Load() != 0 {
		t.Errorf("a client that never answers: %v %s, the tool ran %d times", res.IsError, text, sh.calls.Load())
	}
}
