//go:build unix

package proc

import (
	"bytes"
	"os/exec"
	"testing"
	"time"
)

// TestKill: killing the group stops what the program started too.
func TestKill(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	cmd.Env = []string{}
	// The sleep holds the output pipe, so Wait returns only once it too
	// has died, not when sh alone is killed.
	cmd.Stdout = new(bytes.Buffer)
	g := New(cmd)
	if err := g.Start(); err != nil {
		t.Skipf("no sh here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	g.Kill()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the program exited cleanly; it should have been killed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the process group outlived Kill")
	}
	g.Sweep()
}
