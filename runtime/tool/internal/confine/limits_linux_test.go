package confine

import (
	"syscall"
	"testing"
)

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

// TestStatusCPU: the trampoline's " cpu MS" after a status is a program
// killed past its CPU time's hard limit, having used MS milliseconds;
// SIGXCPU is the limit whatever follows; Explain says the figure.
func TestStatusCPU(t *testing.T) {
	for msg, want := range map[string]string{"status 9 cpu 2310": "cpu", "status 9": "", "status 24": "cpu", "status 25": "file_size", "status 25 cpu 1000": "cpu"} {
		st, err := parseStatus(msg)
		if err != nil || st.Passed != want {
			t.Errorf("%q: got %+v, %v; want passed %q", msg, st, err, want)
		}
	}
	st, _ := parseStatus("status 9 cpu 2310")
	p := Policy{}
	p.Limits.CPU = "1s"
	if got, want := p.Explain(st), "its CPU time, 2.3 s with the processes it waited for, passed confine.limits.cpu (1 s)"; got != want {
		t.Errorf("Explain: got %q, want %q", got, want)
	}
}
