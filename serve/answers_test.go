package serve_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// TestAnswerNotIJSON: an answer to an approval that names a member twice
// ({"approve":false,"approve":true}) decides nothing, over stdio (asked in
// the middle of the call, and by the call's result) and over HTTP: the
// tool never runs, and the client is told why. (The HTTP API's decisions:
// TestApprovalOverAPI.)
func TestAnswerNotIJSON(t *testing.T) {
	const token = "s3cret-token-of-the-server"
	bound, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
	defer cancel()
	no := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
	}}
	for _, c := range []struct{ name, version string }{{"stdio, asked in the call", "2025-11-25"}, {"stdio, asked by the result", ""}, {"HTTP", ""}} {
		runs := newRuns(t, "", c.name == "HTTP")
		ag, sh := actor(t, runs.Ask)
		var ct mcp.Transport
		if c.name == "HTTP" {
			h, err := serve.MCPHandler("test", []serve.Agent{ag}, runs, serve.AllAgents(token), serve.SessionBounds{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			t.Cleanup(runs.Stop)
			ct = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
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
