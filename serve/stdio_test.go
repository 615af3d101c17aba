package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/serve"
)

// TestServeSessionStop: a stop while calls run over stdio interrupts their
// runs, and each call is answered, saying the server stopped before its
// run ended and naming the run (a later server on the journal directory
// resumes it; over stdio there is no GET /v1/runs), before the session
// ends: the client gets no closed connection for a call it made.
func TestServeSessionStop(t *testing.T) {
	for _, dir := range []string{t.TempDir(), ""} {
		runs := newRuns(t, dir, false)
		ag, gate := waiter(t)
		s, err := serve.MCP("test", []serve.Agent{ag}, runs)
		if err != nil {
			t.Fatal(err)
		}
		bound, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a measure
		defer cancel()
		stop, stopNow := context.WithCancel(context.Background())
		ct, st := mcp.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() { served <- serve.ServeSession(stop, s, st, runs) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(bound, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		type called struct {
			res *mcp.CallToolResult
			err error
		}
		calls := make(chan called, 2)
		for range 2 {
			go func() {
				res, err := cs.CallTool(bound, &mcp.CallToolParams{Name: "waiter", Arguments: map[string]any{"task": "wait"}})
				calls <- called{res, err}
			}()
		}
		<-gate.entered
		<-gate.entered
		stopNow()
		for range 2 {
			c := <-calls
			if c.err != nil {
				t.Fatalf("journal directory %q: a call in flight at the stop got no result: %v", dir, c.err)
			}
			text := c.res.Content[0].(*mcp.TextContent).Text
			want := "it was served without a journal directory (--journal-dir), so it cannot be resumed"
			if dir != "" {
				want = "a server started again on the same journal directory resumes it (run " + c.res.Meta[serve.MetaRun].(string) + ")"
			}
			if !c.res.IsError || !strings.HasPrefix(text, "the server stopped before the run ended") || !strings.Contains(text, want) || strings.Contains(text, "GET /v1/runs") {
				t.Errorf("journal directory %q: the call's result: %s", dir, text)
			}
		}
		select {
		case <-served:
		case <-bound.Done():
			t.Fatal("the session outlived the stop")
		}
		cs.Close()
	}
}
