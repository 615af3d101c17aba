package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the runtime program links neither CUE nor the compiler, nor
// cobra or text/template, so a host that only runs plans does not carry
// them.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "agentc.dev/agentc/cmd/agentc-runtime").CombinedOutput()
	var ee *exec.Error
	if errors.As(err, &ee) {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list found too little for the runtime program: %q", deps)
	}
	for _, d := range deps {
		// text/template can call methods by name, so a program that
		// links it keeps every exported method of every type.
		if d == "text/template" || d == "html/template" {
			t.Errorf("the runtime program depends on %s", d)
		}
		for _, bad := range []string{"cuelang.org/go", "agentc.dev/agentc/manifest", "agentc.dev/agentc/compile", "agentc.dev/agentc/internal/cli", "github.com/spf13/cobra",
			// The Temporal client and worker are agentc's alone: linking them adds
			// tens of megabytes (gRPC, and the methods activity registration keeps).
			"go.temporal.io", "agentc.dev/agentc/temporal", "google.golang.org/grpc"} {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("the runtime program depends on %s", d)
			}
		}
	}
}
