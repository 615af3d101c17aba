package tool_test

import (
	"context"
	"errors"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool"
)

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
		"docs": {Kind: "fs", Description: "Docs.", Root: "."},
	}}}}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	if tools["docs"] == nil || tools["docs"].Spec().Name != "docs" {
		t.Fatalf("no fs tool built: %v", tools)
	}
	p.Agent.Capabilities.Tools["fetch"] = plan.Tool{Kind: "nosuch", Description: "Fetch."}
	_, _, err = tool.Build(context.Background(), p, tool.Env{BaseDir: dir})
	if err == nil || !strings.Contains(err.Error(), `tool "fetch"`) || !strings.Contains(err.Error(), `kind "nosuch"`) {
		t.Errorf("an unprovided kind: got %v", err)
	}
	p.Agent.Capabilities.Tools = map[string]plan.Tool{"docs": {Kind: "fs", Description: "Docs.", Root: "missing"}}
	if _, _, err := tool.Build(context.Background(), p, tool.Env{BaseDir: dir}); err == nil || !strings.Contains(err.Error(), `tool "docs"`) {
		t.Errorf("a missing fs root: got %v", err)
	}
}

// TestBuildOffline: offline, an exec tool is built but never runs its
// program; online, the same tool runs.
func TestBuildOffline(t *testing.T) {
	dir := t.TempDir()
	touch := plan.Tool{Kind: "exec", Description: "Touch.", Input: &plan.Input{Schema: []byte(`{"type":"object"}`)},
		Argv: []string{"touch", "touched"}, Confine: &plan.Confine{Enforce: "off"}}
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"touch": touch}}}}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: dir, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	_, err = tools["touch"].Call(context.Background(), []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), `exec tool "touch" is offline`) {
		t.Errorf("an offline call: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "touched")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the program ran offline: %v", err)
	}
	online, closeOnline, err := tool.Build(context.Background(), p, tool.Env{BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer closeOnline()
	if res, err := online["touch"].Call(context.Background(), []byte(`{}`)); err != nil || res.IsError {
		t.Fatalf("an online call: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "touched")); err != nil {
		t.Errorf("the program did not run online: %v", err)
	}
}

func TestNotSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"PATH": true, "HOME": true, "LANG": true, "LC_ALL": true, "XDG_CONFIG_HOME": true, "TMPDIR": true,
		"GITHUB_TOKEN": false, "SOME_SECRET": false, "HOMEBREW_GITHUB_API_TOKEN": false, "home": false, "": false, "PATHS": false,
	} {
		if got := tool.NotSecret(name); got != want {
			t.Errorf("NotSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestBuildClosesHTTPConnections: closing the tools (a run's end, a
// server's or worker's) closes the connections an http tool keeps open for
// its next call; they stayed open, each with two goroutines, until the
// transport's idle timeout (90 s) after the tools were closed.
func TestBuildClosesHTTPConnections(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s nethttp.ConnState) {
		if s == nethttp.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	defer srv.Close()
	fetch := plan.Tool{Kind: "http", Description: "Fetch.", Input: &plan.Input{Schema: []byte(`{"type":"object"}`)},
		URL: srv.URL + "/x", Allow: []string{srv.URL + "/"}}
	p := &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"fetch": fetch}}}}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tools["fetch"].Call(context.Background(), []byte(`{}`)); err != nil || res.IsError {
		t.Fatalf("the call: %+v, %v", res, err)
	}
	if err := closeTools(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's connection was still open 10 s after the tools were closed")
	}
}
