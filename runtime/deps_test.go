package runtime_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCompilerInRuntime: a host that executes plans links neither CUE
// nor the compiler. It checks every package under runtime/ with all of its
// transitive dependencies.
func TestNoCompilerInRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "agentc.dev/agentc/runtime/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list found too little: %q", deps)
	}
	for _, d := range deps {
		for _, bad := range []string{"cuelang.org/go", "agentc.dev/agentc/manifest", "agentc.dev/agentc/compile", "github.com/spf13/cobra"} {
			if d == bad || strings.HasPrefix(d, bad+"/") {
				t.Errorf("runtime depends on %s", d)
			}
		}
	}
}
