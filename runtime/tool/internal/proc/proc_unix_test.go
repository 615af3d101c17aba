//go:build unix

package proc

import (
	"os/exec"
	"testing"
	"time"
)

// TestKillGroup: killing the group stops what the process started too.
func TestKillGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	KillGroup(cmd.Process)
	select {
	case err := <-done:
		if err == nil {
			t.Error("the process exited cleanly; it should have been killed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the process group outlived KillGroup")
	}
}
