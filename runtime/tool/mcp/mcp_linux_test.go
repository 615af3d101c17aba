package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/internal/await"
)

// ended reports whether a process has ended: it no longer exists, or is a
// zombie (this test process adopts nothing, so PID 1 reaps it, or not).
func ended(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}

// TestCloseKillsEscaped: what a stdio server started in a session of its
// own lives while the server does, and is killed when it closes.
func TestCloseKillsEscaped(t *testing.T) {
	if _, err := osexec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	s := connect(t, stdio(t, "", "spawn", "echo"))
	res, err := s.Tools()[1].Call(context.Background(), json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("spawn: %v %+v", err, res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Content))
	if err != nil {
		t.Fatalf("spawn returned %q", res.Content)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if _, err := s.Tools()[0].Call(context.Background(), json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if ended(pid) {
		t.Fatal("the server's process ended while the server runs")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := await.ProcessEnd(pid, 5*time.Second); err != nil {
		t.Fatalf("the process started by the server in a session of its own outlived it: %v", err)
	}
}
