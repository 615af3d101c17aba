package tool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool"
)

// TestServerStartWithinDeadline: an mcp server that never answers its
// initialize holds the run's start no longer than the run's deadline,
// where that is shorter than the start's own bound (30 s): its start
// fails saying the server did not answer in time, long before the
// context the test gives it ends.
func TestServerStartWithinDeadline(t *testing.T) {
	stop := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(stop) }) // first
	p := &plan.Plan{Agent: plan.Agent{Budgets: plan.Budgets{Deadline: "300ms"}, Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"srv": {Kind: "mcp", Description: "A server that never answers.", URL: ts.URL, Allow: []string{"x"}},
	}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, err := tool.Build(ctx, p, tool.Env{BaseDir: t.TempDir(), MCPHTTPClient: ts.Client()})
	if err == nil || !strings.Contains(err.Error(), "the server did not answer in time") {
		t.Errorf("Build: %v; want the start given up at the run's deadline", err)
	}
}
