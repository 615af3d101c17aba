//go:build linux

package launch

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestExecArgv0: the program executed is given its path as its name, so
// that it looks for the programs beside it before any on PATH.
func TestExecArgv0(t *testing.T) {
	if os.Getenv("LAUNCH_TEST_EXEC") == "1" {
		err := Exec("/bin/sh", []string{"-c", `tr '\0' ' ' < /proc/$$/cmdline`})
		t.Fatalf("Exec returned: %v", err)
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExecArgv0$")
	cmd.Env = append(os.Environ(), "LAUNCH_TEST_EXEC=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "/bin/sh -c ") {
		t.Errorf("the executed program's command line is %q; want it to begin with its path", out)
	}
}
