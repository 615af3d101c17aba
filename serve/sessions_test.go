package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/serve"
)

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
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
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
