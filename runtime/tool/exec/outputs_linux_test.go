package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"agentc.dev/agentc/plan"
)

// outDirHelper runs, with TMPDIR dir, one call of a tool whose script
// writes its output file and leaves more beside it, as user nobody when
// it runs as root (which modes do not hold back), and with its
// open-file limit lowered to nofile when that is not 0.
func outDirHelper(dir, script string, nofile uint64) int {
	if os.Getuid() == 0 {
		const nobody = 65534
		if err := syscall.Setgroups(nil); err == nil {
			err = syscall.Setgid(nobody)
		}
		if err := syscall.Setuid(nobody); err != nil {
			fmt.Println("becoming nobody:", err)
			return 1
		}
	}
	if nofile > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: nofile, Max: nofile}); err != nil {
			fmt.Println("the open-file limit:", err)
			return 1
		}
	}
	os.Setenv("TMPDIR", dir)
	tool, err := New("w", plan.Tool{Kind: "exec", Description: "Writes.", Input: &plan.Input{Schema: []byte(schema)},
		Argv:        []string{"sh", "-c", script, "sh", `{{output_file "out"}}`},
		OutputFiles: map[string]plan.OutputFile{"out": {MediaTypes: []string{"text/plain"}}},
		Confine:     &plan.Confine{Enforce: "off"}}, dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	res, err := tool.Call(context.Background(), nil)
	fmt.Printf("%v %q\n", err, res.Content)
	return 0
}

// TestOutputDirRemoved: the call's output directory goes with the call,
// whatever the program left in it: a directory it made unreadable (chmod
// 0) too, run as another user than root, which modes hold back. A
// directory that still stays, a chain deeper than the open-file limit, is
// said on standard error, naming it.
func TestOutputDirRemoved(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, script string
		nofile       int
		left         bool
	}{
		{"unreadable", `echo hi > "$1"; d=$(dirname "$1"); mkdir -p "$d/keep/inner" && echo x > "$d/keep/inner/f" && chmod 0 "$d/keep/inner" "$d/keep" && echo done`, 0, false},
		{"deeper than the open-file limit", `echo hi > "$1"; cd "$(dirname "$1")" || exit 1; i=0; while [ $i -lt 100 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; echo done`, 48, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			// Nobody makes its directory there.
			for _, d := range []string{filepath.Dir(tmp), tmp} {
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			cmd := osexec.Command(self)
			cmd.Env = append(os.Environ(), "EXEC_TEST_OUTDIR="+tmp, "EXEC_TEST_OUTDIR_SCRIPT="+c.script, "EXEC_TEST_OUTDIR_NOFILE="+strconv.Itoa(c.nofile))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), `done\n`) {
				t.Fatalf("the helper: %v: %s %s", err, out, stderr.String())
			}
			left, err := filepath.Glob(filepath.Join(tmp, "agentc-out-*"))
			if err != nil {
				t.Fatal(err)
			}
			if !c.left {
				if len(left) > 0 || stderr.Len() > 0 {
					t.Errorf("left %v; standard error: %q", left, stderr.String())
				}
				return
			}
			if len(left) != 1 || !strings.Contains(stderr.String(), `agentc: warning: tool "w": the output directory of a call, `+left[0]+", could not be removed") {
				t.Errorf("left %v; standard error: %q, want a warning naming it", left, stderr.String())
			}
		})
	}
}
