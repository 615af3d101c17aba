package launch

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test makes programs by file mode")
	}
	bin, other, empty := t.TempDir(), t.TempDir(), t.TempDir()
	mk := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	agentc := mk(bin, "agentc", 0o755)
	beside := mk(bin, "agentc-compiler", 0o755)
	mk(bin, "agentc-runtime", 0o644) // not executable: not a program
	onPath := mk(other, "agentc-runtime", 0o755)
	arg0 := os.Args[0]
	t.Cleanup(func() { os.Args[0] = arg0 })

	// Invoked by its path: the program beside it.
	os.Args[0] = agentc
	t.Setenv("PATH", empty)
	if got, err := Find("agentc-compiler"); err != nil || got != beside {
		t.Errorf("Find beside %s = %q, %v; want %s", agentc, got, err, beside)
	}
	// Invoked by name: beside it in the PATH entry it was found in.
	os.Args[0] = "agentc"
	t.Setenv("PATH", empty+string(os.PathListSeparator)+bin)
	if got, err := Find("agentc-compiler"); err != nil || got != beside {
		t.Errorf("Find through PATH = %q, %v; want %s", got, err, beside)
	}
	// Not beside it (the file there is not executable): on PATH.
	t.Setenv("PATH", bin+string(os.PathListSeparator)+other)
	if got, err := Find("agentc-runtime"); err != nil || got != onPath {
		t.Errorf("Find on PATH = %q, %v; want %s", got, err, onPath)
	}
	// Nowhere: the error says how to install it.
	os.Args[0] = agentc
	t.Setenv("PATH", empty)
	_, err := Find("agentc-runtime")
	if err == nil || !strings.Contains(err.Error(), "agentc-runtime is not installed in "+bin) || !strings.Contains(err.Error(), "go install agentc.dev/agentc/cmd/...") {
		t.Errorf("Find of a missing program: %v", err)
	}
}
