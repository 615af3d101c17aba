//go:build unix

package fs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agentc.dev/agentc/plan"
)

// TestFIFO checks that a named pipe under the root is refused, not opened
// and waited on.
func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tool := newTool(t, dir, plan.Tool{})
	if _, err := call(tool, "read", "pipe"); err == nil || !strings.Contains(err.Error(), `read "pipe": is not a regular file`) {
		t.Errorf("read: %v", err)
	}
	if _, err := call(tool, "list", "pipe"); err == nil || !strings.Contains(err.Error(), `list "pipe": is not a directory`) {
		t.Errorf("list: %v", err)
	}
	if got, err := call(tool, "list", "."); err != nil || got != "pipe (not a regular file)\n" {
		t.Errorf("list .: %q, %v", got, err)
	}
}

func TestUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
	tool := newTool(t, dir, plan.Tool{})
	for _, c := range [][2]string{{"read", "secret.txt"}, {"list", "locked"}, {"read", "locked/x"}} {
		_, err := call(tool, c[0], c[1])
		if want := c[0] + ` "` + c[1] + `": permission denied`; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
