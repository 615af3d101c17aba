package confine

import (
	"strconv"
	"syscall"
	"testing"
)

// TestStageFailure: the stage's report reads back as the step that failed
// and its error; nothing reported is a program that started; a report
// that is not one is still a failure.
func TestStageFailure(t *testing.T) {
	l := limits{CPU: 2, Memory: 64 << 20}
	for _, tt := range []struct {
		b    string
		want string
	}{
		{"", ""},
		{"x" + strconv.Itoa(int(syscall.ENOENT)), "no such file or directory"},
		{"x" + strconv.Itoa(int(syscall.ENOMEM)), "cannot allocate memory (confine.limits.memory is 64 MiB)"},
		{"c" + strconv.Itoa(int(syscall.EPERM)), "confine.limits.cpu: operation not permitted"},
		{"m" + strconv.Itoa(int(syscall.EINVAL)), "confine.limits.memory: invalid argument"},
		{"f" + strconv.Itoa(int(syscall.EPERM)), "confine.limits.file_size: operation not permitted"},
		{"x", "confine.limits: the program could not be started under them"},
		{"xyz", "confine.limits: the program could not be started under them"},
	} {
		if got := stageFailure([]byte(tt.b), l); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.b, got, tt.want)
		}
	}
	if got := stageFailure([]byte("x"+strconv.Itoa(int(syscall.ENOMEM))), limits{CPU: 1}); got != "cannot allocate memory" {
		t.Errorf("ENOMEM without a memory limit: got %q", got)
	}
}

// TestExplain: a program killed by SIGXCPU or SIGXFSZ is said to have
// passed the limit, when the policy has it; another signal, or a policy
// without that limit, says nothing more.
func TestExplain(t *testing.T) {
	p := Policy{}
	p.Limits.CPU, p.Limits.FileSize = "1500ms", 3<<20
	for _, tt := range []struct {
		sig  syscall.Signal
		p    Policy
		want string
	}{
		{syscall.SIGXCPU, p, "its CPU time passed confine.limits.cpu (2 s)"},
		{syscall.SIGXFSZ, p, "a file it wrote reached confine.limits.file_size (3 MiB)"},
		{syscall.SIGKILL, p, ""},
		{syscall.SIGXCPU, Policy{}, ""},
		{syscall.SIGXFSZ, Policy{}, ""},
	} {
		st := describe(int(tt.sig))
		if got := tt.p.Explain(st); got != tt.want {
			t.Errorf("%v: got %q, want %q", tt.sig, got, tt.want)
		}
	}
}

// TestStatusCPU: the trampoline's " cpu" after a status is a program that
// passed its CPU time limit, whatever signal killed it.
func TestStatusCPU(t *testing.T) {
	for msg, want := range map[string]string{"status 9 cpu": "cpu", "status 9": "", "status 24": "cpu", "status 25": "file_size", "status 25 cpu": "cpu"} {
		st, err := parseStatus(msg)
		if err != nil || st.Passed != want {
			t.Errorf("%q: got %+v, %v; want passed %q", msg, st, err, want)
		}
	}
}
