package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool/internal/confine"
)

// TestConfinedServer: a stdio server declared with the default
// confinement starts through the trampoline and answers; one whose
// declared path does not exist does not start, and the error names the
// path as declared.
func TestConfinedServer(t *testing.T) {
	if abi, _ := confine.Support(); abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	decl := stdio(t, "", "echo")
	decl.Confine = nil
	s := connect(t, decl)
	res, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{"text":"confined"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "confined") {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	decl.Confine = &plan.Confine{Read: []string{"no-such-dir"}}
	base := t.TempDir()
	_, err = Connect(context.Background(), "srv", decl, base)
	if err == nil || !strings.Contains(err.Error(), `confine.read path "no-such-dir"`) || strings.Contains(err.Error(), base) {
		t.Fatalf("got %v", err)
	}
}

func init() {
	// limits tells the server's resource limits, soft and hard.
	platformTools = func(s *sdk.Server) {
		type none struct{}
		sdk.AddTool(s, &sdk.Tool{Name: "limits", Description: "Tell the resource limits."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			var b strings.Builder
			for _, r := range []struct {
				name string
				res  int
			}{{"cpu", syscall.RLIMIT_CPU}, {"fsize", syscall.RLIMIT_FSIZE}, {"data", syscall.RLIMIT_DATA}} {
				var l syscall.Rlimit
				if err := syscall.Getrlimit(r.res, &l); err != nil {
					return nil, nil, err
				}
				fmt.Fprintf(&b, "%s %d %d\n", r.name, l.Cur, l.Max)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil, nil
		})
		// spin burns CPU time until the server is killed.
		sdk.AddTool(s, &sdk.Tool{Name: "spin", Description: "Spin."}, func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			for n := 0; ; n++ {
				spun = n
			}
		})
	}
}

// TestConfinedServerLimits: a stdio server declared with limits runs
// under them, soft and hard.
func TestConfinedServerLimits(t *testing.T) {
	decl := stdio(t, "", "limits")
	decl.Confine = &plan.Confine{Limits: &plan.Limits{CPU: "30s", Memory: 1 << 30, FileSize: 4 << 20}}
	s := connect(t, decl)
	res, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("limits: %v %+v", err, res)
	}
	if want := "cpu 30 31\nfsize 4194304 4194304\ndata 1073741824 1073741824\n"; res.Content != want {
		t.Errorf("the server's limits: got %q, want %q", res.Content, want)
	}
}

// TestConfinedServerEnded: a call whose confined server ended says how it
// ended, as the trampoline reported it, and names the limit it passed.
func TestConfinedServerEnded(t *testing.T) {
	if abi, _ := confine.Support(); abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	decl := stdio(t, "", "exit", "spin")
	decl.Confine = &plan.Confine{Limits: &plan.Limits{CPU: "1s"}}

	s := connect(t, decl)
	_, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), `tool "exit": the connection to the server is closed (the server ended: exit status 2); its stderr ends with:`) {
		t.Errorf("exit: got %v", err)
	}

	s = connect(t, decl)
	_, err = s.Tools()[1].Call(context.Background(), json.RawMessage(`{}`))
	if err == nil || !regexp.MustCompile(`tool "spin": the connection to the server is closed \(the server ended: signal: killed: its CPU time, [0-9.]+ s with the processes it waited for, passed confine.limits.cpu \(1 s\)\)`).MatchString(err.Error()) {
		t.Errorf("spin: got %v", err)
	}

	// One that passes the limit before it answers.
	decl = stdio(t, "spin", "exit")
	decl.Confine = &plan.Confine{Limits: &plan.Limits{CPU: "1s"}}
	_, err = Connect(context.Background(), "srv", decl, t.TempDir())
	if err == nil || !regexp.MustCompile(`^mcp server "srv": starting the session: the server closed the connection \(the server ended: signal: killed: its CPU time, [0-9.]+ s with the processes it waited for, passed confine.limits.cpu \(1 s\)\)$`).MatchString(err.Error()) {
		t.Errorf("spinning at start: got %v", err)
	}
}
