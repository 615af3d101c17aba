//go:build unix

package dispatch

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRouteFIFO: a run of a named pipe goes to the compiler program
// unread; reading it here would leave nothing for the program that runs
// it.
func TestRouteFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// Opening the pipe to read would block until a writer came.
	if got := Route([]string{"run", p}, readRegular); got != compilerProgram {
		t.Errorf("Route of a named pipe = %s", got)
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"format": "agentc.plan/v2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Route([]string{"run", plan}, readRegular); got != runtimeProgram {
		t.Errorf("Route of a plan file = %s", got)
	}
}
