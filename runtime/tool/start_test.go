package tool_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool"
)

// TestServerStartWithinDeadline: an mcp server that never answers its
// initialize holds the run's start no longer than the run's deadline,
// where that is shorter than the start's own bound (30 s): its start
// fails saying the server did not answer in time, long before the
// context the test gives it ends; and the request it was not answered is
// ended with the start, not left open holding a connection.
func TestServerStartWithinDeadline(t *testing.T) {
	ended := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()        // never answers
		once.Do(func() { close(ended) })
	}))
	t.Cleanup(ts.Close)
	p := &plan.Plan{Agent: plan.Agent{Budgets: plan.Budgets{Deadline: "300ms"}, Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"srv": {Kind: "mcp", Description: "A server that never answers.", URL: ts.URL, Allow: []string{"x"}},
	}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, err := tool.Build(ctx, p, tool.Env{BaseDir: t.TempDir(), MCPHTTPClient: ts.Client()})
	if err == nil || !strings.Contains(err.Error(), "the server did not answer in time") {
		t.Errorf("Build: %v; want the start given up at the run's deadline", err)
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Error("the request the server did not answer was left open after the start failed")
	}
}

// mcpServer returns an MCP server over streamable HTTP offering the tool
// named tool, each request going first to before, which has read the
// request's body (a server sees a client that gives up only once the body
// is read) and says whether the server answers it.
func mcpServer(t *testing.T, tool string, before func(w http.ResponseWriter, r *http.Request, body []byte) bool) *httptest.Server {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	type in struct {
		Q string `json:"q"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: tool, Description: "Answer."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if before(w, r, body) {
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// mcpTool declares an mcp tool reached at ts, allowing tool.
func mcpTool(ts *httptest.Server, tool string) plan.Tool {
	return plan.Tool{Kind: "mcp", Description: "A server.", URL: ts.URL, Allow: []string{tool}}
}

// TestServersStartTogether: a plan's mcp servers start at once, so a run
// with several waits for the slowest start, not the sum of them. Two
// servers that each answer only once the other has been asked both start;
// started one after the other, the first would wait out its start bound.
func TestServersStartTogether(t *testing.T) {
	asked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	paired := func(i int) *httptest.Server {
		return mcpServer(t, fmt.Sprintf("x%d", i), func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
			once[i].Do(func() { close(asked[i]) })
			select {
			case <-asked[1-i]:
				return true
			case <-r.Context().Done():
				return false
			}
		})
	}
	p := &plan.Plan{Agent: plan.Agent{Budgets: plan.Budgets{Deadline: "20s"}, Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"a": mcpTool(paired(0), "x0"),
		"b": mcpTool(paired(1), "x1"),
	}}}}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	defer closeTools()
	if tools["x0"] == nil || tools["x1"] == nil || len(tools) != 2 {
		t.Errorf("tools: %v; want x0 and x1", tools)
	}
}

// TestServerStartFailureEndsTheOthers: the first mcp server that fails to
// start ends the others' starts, and its failure is the one told, not the
// end of a start it cut short (a, never answering, comes first by name).
func TestServerStartFailureEndsTheOthers(t *testing.T) {
	asked, ended := make(chan struct{}), make(chan struct{})
	var askedOnce, endedOnce sync.Once
	silent := mcpServer(t, "x0", func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		askedOnce.Do(func() { close(asked) })
		<-r.Context().Done()
		endedOnce.Do(func() { close(ended) })
		return false
	})
	// b fails once a has been asked: a's start is under way.
	failing := mcpServer(t, "x1", func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		select {
		case <-asked:
		case <-r.Context().Done():
			return false
		}
		http.Error(w, "no sessions today", http.StatusServiceUnavailable)
		return false
	})
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"a": mcpTool(silent, "x0"),
		"b": mcpTool(failing, "x1"),
	}}}}
	_, _, err := tool.Build(context.Background(), p, tool.Env{BaseDir: t.TempDir()})
	if err == nil || !strings.HasPrefix(err.Error(), `tool "b": `) || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("Build: %v; want b's failure", err)
	}
	waitFor(t, ended, "a's start ended, not waited out")
}

// TestServersClosedWhenAnotherToolFails: a tool that cannot be built ends
// the run's start, and the mcp servers that did start are closed (their
// sessions deleted), never left running.
func TestServersClosedWhenAnotherToolFails(t *testing.T) {
	listed, deleted := make(chan struct{}), make(chan struct{})
	var listOnce, deleteOnce sync.Once
	started := mcpServer(t, "x0", func(_ http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Method == http.MethodDelete {
			deleteOnce.Do(func() { close(deleted) })
		}
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			defer listOnce.Do(func() { close(listed) })
		}
		return true
	})
	// b fails only once a has been answered its listing: a has started, or
	// all but, when b's failure ends the start.
	failing := mcpServer(t, "x1", func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		select {
		case <-listed:
		case <-r.Context().Done():
			return false
		}
		http.Error(w, "no sessions today", http.StatusServiceUnavailable)
		return false
	})
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"a": mcpTool(started, "x0"),
		"b": mcpTool(failing, "x1"),
	}}}}
	_, _, err := tool.Build(context.Background(), p, tool.Env{BaseDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("Build: %v; want b's failure", err)
	}
	waitFor(t, deleted, "a's session closed")
}

// waitFor waits for ch to close, failing the test, as what did not
// happen, once a minute has passed: a bound, not a measure.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Errorf("a minute passed before %s", what)
	}
}
