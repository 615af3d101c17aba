package exec

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
)

// spinHelper spins until it is killed.
func spinHelper() int {
	for {
	}
}

// TestConfinedLimits: a program declared with limits runs under them as
// resource limits it cannot raise, set before it starts (by the stage,
// which becomes the program): /proc/self/limits shows them, a file stops
// at file_size and the program dies of SIGXFSZ, a CPU loop dies of SIGXCPU
// at cpu, an allocation past memory fails, and the result says which
// limit the program passed.
func TestConfinedLimits(t *testing.T) {
	base := t.TempDir()
	limits := &plan.Limits{CPU: "1500ms", Memory: 256 << 20, FileSize: 1 << 20}
	show := newTool(t, base, plan.Tool{Argv: []string{"cat", "/proc/self/limits"},
		Confine: &plan.Confine{Read: []string{"/proc"}, Limits: limits}})
	got := call(t, show, `{}`)
	for _, want := range []string{
		`Max cpu time\s+2\s+3\s+seconds`, // rounded up to whole seconds; the hard limit a second later
		`Max file size\s+1048576\s+1048576\s+bytes`,
		`Max data size\s+268435456\s+268435456\s+bytes`,
		`Max stack size\s+\d+\s+268435456\s+bytes`, // the memory bound holds the stack too
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("/proc/self/limits does not match %q:\n%s", want, got)
		}
	}

	// The program cannot raise a limit, soft or hard.
	raise := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "ulimit -f unlimited && echo raised"},
		Confine: &plan.Confine{Limits: limits}})
	if got := call(t, raise, `{}`); strings.Contains(got, "raised") || !strings.HasPrefix(got, "failed: ") {
		t.Errorf("raising the file size limit: got %q", got)
	}

	// file_size: dd stops at the bound, killed by SIGXFSZ.
	if err := os.Mkdir(filepath.Join(base, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	dd := newTool(t, base, plan.Tool{Argv: []string{"dd", "if=/dev/zero", "of=out/big", "bs=65536", "count=64"},
		Confine: &plan.Confine{Write: []string{"out"}, Limits: &plan.Limits{FileSize: 1 << 20}}})
	got = call(t, dd, `{}`)
	if !strings.HasPrefix(got, "failed: the program failed: signal: file size limit exceeded: a file it wrote reached confine.limits.file_size (1 MiB)") {
		t.Errorf("writing past file_size: got %q", got)
	}
	if fi, err := os.Stat(filepath.Join(base, "out", "big")); err != nil || fi.Size() != 1<<20 {
		t.Errorf("the file written past file_size: %v, %v; want 1 MiB", fi, err)
	}

	// cpu: a loop dies of SIGXCPU long before its timeout.
	loop := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", "while :; do :; done"}, Timeout: "10m",
		Confine: &plan.Confine{Limits: &plan.Limits{CPU: "1s"}}})
	got = call(t, loop, `{}`)
	if !strings.HasPrefix(got, "failed: the program failed: signal: CPU time limit exceeded: its CPU time passed confine.limits.cpu (1 s)") {
		t.Errorf("a CPU loop: got %q", got)
	}

	// A Go program ignores SIGXCPU; it dies of the SIGKILL a second
	// later, and that is told apart from other kills by its CPU time.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXEC_TEST_SPIN", "1")
	spin := newTool(t, base, plan.Tool{Argv: []string{self}, Env: []string{"EXEC_TEST_SPIN"}, Timeout: "10m",
		Confine: &plan.Confine{Limits: &plan.Limits{CPU: "1s"}}})
	got = call(t, spin, `{}`)
	if !regexp.MustCompile(`^failed: the program failed: signal: killed: its CPU time, [0-9.]+ s with the processes it waited for, passed confine.limits.cpu \(1 s\)`).MatchString(got) {
		t.Errorf("a Go program's CPU loop: got %q", got)
	}

	// memory: dd's buffer of 384 MiB cannot be allocated under 128 MiB;
	// without the limit, the same is.
	dd = newTool(t, base, plan.Tool{Argv: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=384M", "count=1"},
		Confine: &plan.Confine{Limits: &plan.Limits{Memory: 128 << 20}}})
	if got := call(t, dd, `{}`); !strings.HasPrefix(got, "failed: the program failed: exit status 1") || !strings.Contains(got, "memory exhausted") {
		t.Errorf("allocating 384 MiB under 128 MiB: got %q", got)
	}
	dd = newTool(t, base, plan.Tool{Argv: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=384M", "count=1"}, Confine: &plan.Confine{}})
	if got := call(t, dd, `{}`); !strings.Contains(got, "1+0 records in") {
		t.Errorf("allocating 384 MiB unbounded: got %q", got)
	}
}

// TestConfinedLimitsStart: a program the stage cannot become did not
// start, and the error says why as it does without limits; limits no
// program can be bounded to, or an unconfined program's, are refused when
// the tool is made.
func TestConfinedLimitsStart(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "text"), []byte("not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*plan.Limits{nil, {FileSize: 1 << 20}} {
		text := newTool(t, base, plan.Tool{Argv: []string{filepath.Join(base, "text")}, Confine: &plan.Confine{Read: []string{"text"}, Limits: l}})
		if got := call(t, text, `{}`); got != `error: starting "`+filepath.Join(base, "text")+`": exec format error` {
			t.Errorf("a file that is no program, limits %v: got %q", l, got)
		}
	}
	for _, tt := range []struct {
		c    plan.Confine
		want string
	}{
		{plan.Confine{Enforce: "off", Limits: &plan.Limits{CPU: "1s"}}, `confine.limits: confine.enforce is "off"`},
		{plan.Confine{Limits: &plan.Limits{CPU: "soon"}}, `confine.limits.cpu: "soon" is not a positive duration`},
		{plan.Confine{Limits: &plan.Limits{CPU: "-1s"}}, `confine.limits.cpu: "-1s" is not a positive duration`},
		{plan.Confine{Limits: &plan.Limits{Memory: 4096}}, `confine.limits.memory is 4096 bytes; it must be at least 1048576`},
		{plan.Confine{Limits: &plan.Limits{FileSize: -1}}, `confine.limits.file_size is -1`},
	} {
		_, err := New("run", plan.Tool{Kind: "exec", Description: "Run.", Input: &plan.Input{Schema: []byte(schema)}, Argv: []string{"true"}, Confine: &tt.c}, base)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", *tt.c.Limits, err, tt.want)
		}
	}
}

// inheritHelper shows, from a tool it makes in dir, the limits a
// confined program with the given CPU time and file size bounds gets
// under this process's own, which the test lowered.
func inheritHelper(dir, cpu string) int {
	tool, err := New("run", plan.Tool{Kind: "exec", Description: "Show.", Input: &plan.Input{Schema: []byte(schema)},
		Argv: []string{"cat", "/proc/self/limits"}, Confine: &plan.Confine{Read: []string{"/proc"}, Limits: &plan.Limits{CPU: cpu, FileSize: 1 << 30}}}, dir)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	res, err := tool.Call(context.Background(), nil)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString(res.Content)
	return 0
}

// TestConfinedLimitsInherited: a soft limit lower than the declared one,
// which agentc was started with, is kept (under the declared hard limit);
// so is a lower hard limit, with a second kept between the CPU time's
// soft and hard limits. (The limits are lowered for a helper, not for
// this test's process, whose own files they would bound.)
func TestConfinedLimitsInherited(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ulimit, cpu string
		want        []string
	}{
		// dash and bash count ulimit -f in blocks of 512 bytes.
		{"ulimit -S -t 100000 && ulimit -H -t 200000 && ulimit -S -f 4096", "1000000s", []string{`Max cpu time\s+100000\s+200000\s+seconds`, `Max file size\s+2097152\s+1073741824\s+bytes`}},
		{"ulimit -t 200000", "300000s", []string{`Max cpu time\s+199999\s+200000\s+seconds`}},
	} {
		cmd := osexec.Command("sh", "-c", tt.ulimit+` && exec "$0"`, self)
		cmd.Env = append(os.Environ(), "EXEC_TEST_INHERIT="+t.TempDir(), "EXEC_TEST_INHERIT_CPU="+tt.cpu)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.ulimit, err, out)
		}
		for _, want := range tt.want {
			if !regexp.MustCompile(want).Match(out) {
				t.Errorf("%s: /proc/self/limits does not match %q:\n%s", tt.ulimit, want, out)
			}
		}
	}
}

// TestConfinedLongArgument: a confined program takes an argument as long
// as an unconfined one does (the kernel's bound on one argument is 128
// KiB), with limits or without, whatever bytes it holds: the trampoline
// and the stage pass the program's arguments on as they are, not inside
// their own.
func TestConfinedLongArgument(t *testing.T) {
	base := t.TempDir()
	long := strings.Repeat("<&\x01", 40000) // 120,000 bytes; six times that escaped in JSON
	args, err := json.Marshal(map[string]string{"p": long})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*plan.Confine{{Enforce: "off"}, {}, {Limits: &plan.Limits{FileSize: 1 << 20}}} {
		tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", `printf %s "$1" | wc -c`, "sh", "{{.p}}"}, Confine: c})
		if got := strings.TrimSpace(call(t, tool, string(args))); got != "120000" {
			t.Errorf("%+v: got %.200q", *c, got)
		}
	}
}
