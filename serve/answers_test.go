package serve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// twice is a client's transport that names "approve" twice in each
// answer it sends, a no and then a yes, as a client whose user said no
// could send where the server reads the last and the client's own log
// the first.
type twice struct{ mcp.Transport }

func (t twice) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return twiceConn{c}, err
}

type twiceConn struct{ mcp.Connection }

func (c twiceConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	no, both := []byte(`"approve":false`), []byte(`"approve":false,"approve":true`)
	switch m := msg.(type) {
	case *jsonrpc.Response:
		m.Result = bytes.ReplaceAll(m.Result, no, both)
	case *jsonrpc.Request:
		m.Params = bytes.ReplaceAll(m.Params, no, both)
	}
	return c.Connection.Write(ctx, msg)
}

// methodMember is an HTTP client's transport that adds a member "Method"
// to each answer (a JSON-RPC response) it posts: a reader that matches
// names ignoring case takes the answer for a request; the SDK does not.
type methodMember struct{ next http.RoundTripper }

func (m methodMember) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		return m.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(body, []byte(`"method":`)) {
		body = bytes.Replace(body, []byte(`{"jsonrpc":"2.0",`), []byte(`{"jsonrpc":"2.0","Method":null,`), 1)
	}
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return m.next.RoundTrip(r)
}

// TestAnswerNotIJSON: an answer to an approval that names a member twice
// ({"approve":false,"approve":true}) decides nothing, over stdio (asked in
// the middle of the call, and by the call's result) and over HTTP, there
// with a member "Method" beside (which had passed it as a request,
// unchecked): the tool never runs, and the client is told why. (The HTTP
// API's decisions: TestApprovalOverAPI.)
func TestAnswerNotIJSON(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	bound, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	no := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
	}}
	for _, c := range []struct{ name, version string }{{"stdio, asked in the call", "2025-11-25"}, {"stdio, asked by the result", ""}, {"HTTP", ""}, {"HTTP, a member Method", ""}} {
		overHTTP := strings.HasPrefix(c.name, "HTTP")
		runs := newRuns(t, "", overHTTP)
		ag, sh := actor(t, runs.Ask)
		var ct mcp.Transport
		if overHTTP {
			h, err := serve.MCPHandler("test", []serve.Agent{ag}, runs, serve.AllAgents(token), serve.SessionBounds{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			t.Cleanup(runs.Stop)
			var rt http.RoundTripper = bearer{token, http.DefaultTransport}
			if c.name == "HTTP, a member Method" {
				rt = methodMember{rt}
			}
			ct = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rt}}
		} else {
			s, err := serve.MCP("test", []serve.Agent{ag}, runs)
			if err != nil {
				t.Fatal(err)
			}
			var st *mcp.InMemoryTransport
			ct, st = mcp.NewInMemoryTransports()
			served := make(chan error, 1)
			go func() { served <- serve.ServeSession(bound, s, st, runs) }()
			defer func() { <-served }()
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, no).Connect(bound, twice{ct}, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(bound, &mcp.CallToolParams{Name: "actor", Arguments: map[string]any{"task": "list"}})
		text := ""
		switch {
		case err != nil:
			text = err.Error()
		case res.IsError:
			text = res.Content[0].(*mcp.TextContent).Text
		}
		if !strings.Contains(text, "not I-JSON") || !strings.Contains(text, `duplicate member name "approve"`) || sh.calls.Load() != 0 {
			t.Errorf("%s: an answer naming approve twice: %v %+v, the tool ran %d times", c.name, err, res, sh.calls.Load())
		}
		cs.Close()
	}
}

// TestSessionMessageNotIJSON: over HTTP, a request in a session that is
// not I-JSON (a tools/call naming its arguments twice, which the SDK
// reads by the last and another reader by the first) is refused 400
// before the SDK reads it: nothing runs.
func TestSessionMessageNotIJSON(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	runs := newRuns(t, "", true)
	ag, sh := actor(t, func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{Approved: true}, nil
	})
	h, err := serve.MCPHandler("test", []serve.Agent{ag}, runs, serve.AllAgents(token), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(runs.Stop)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"actor","arguments":{"task":"x"},"arguments":{"task":"list"}}}`,
		`[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"actor","arguments":{"task":"list","task":"x"}}}]`,
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), "not I-JSON") || !strings.Contains(string(out), "duplicate member name") {
			t.Errorf("%s: %d %s", body, resp.StatusCode, out)
		}
	}
	if n := sh.calls.Load(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
}
