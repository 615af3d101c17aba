package compile_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the packages behind vet, digest and compile link no provider
// SDK and nothing of the runtime, so what they cost is CUE's and the
// schema compiler's alone. (The agentc program links both halves; see
// BENCHMARKS.md for what that costs vet.)
func TestDeps(t *testing.T) {
	pkgs := []string{"agentc.dev/agentc/compile", "agentc.dev/agentc/manifest", "agentc.dev/agentc/digest", "agentc.dev/agentc/plan", "agentc.dev/agentc/inclusion"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list found too little: %q", deps)
	}
	bad := []string{
		"github.com/openai/openai-go",
		"github.com/anthropics/anthropic-sdk-go",
		"github.com/modelcontextprotocol/go-sdk",
		"agentc.dev/agentc/runtime",
		"github.com/spf13/cobra",
	}
	for _, d := range deps {
		for _, b := range bad {
			if d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("the compiler's packages depend on %s", d)
			}
		}
	}
}
