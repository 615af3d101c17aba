package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
