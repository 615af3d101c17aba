package tool

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
)

// TestStartedServerClosedOnFailure: a server that has started when the
// build fails (another tool could not be built), and that the build had
// not taken yet, is closed, its session deleted, never left running.
func TestStartedServerClosedOnFailure(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	type in struct {
		Q string `json:"q"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "x", Description: "Answer."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	deleted := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			once.Do(func() { close(deleted) })
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"b": {Kind: "mcp", Description: "A server.", URL: ts.URL, Allow: []string{"x"}},
	}}}}
	_, st := Env{}.startServers(context.Background(), p, []string{"b"})
	one := st.byName["b"]
	<-one.done // started, not taken
	if one.err != nil {
		t.Fatal(one.err)
	}
	st.end(errors.New("another tool could not be built"))
	select {
	case <-deleted:
	case <-time.After(time.Minute): // a bound, not a measure
		t.Error("the server the build had not taken was left running: its session was never deleted")
	}
}
