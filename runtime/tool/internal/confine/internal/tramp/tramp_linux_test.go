package tramp

import (
	"strconv"
	"syscall"
	"testing"
)

// TestStageFailure: the stage's report reads back as the step that failed
// and its error; nothing reported is a program that started; a report
// that is not one is still a failure.
func TestStageFailure(t *testing.T) {
	l := Limits{CPU: 2, Memory: 64 << 20}
	for _, tt := range []struct {
		b    string
		want string
	}{
		{"", ""},
		{"x" + strconv.Itoa(int(syscall.ENOENT)), "no such file or directory"},
		{"x" + strconv.Itoa(int(syscall.ENOMEM)), "cannot allocate memory (under confine.limits.memory)"},
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
	if got := stageFailure([]byte("x"+strconv.Itoa(int(syscall.ENOMEM))), Limits{CPU: 1}); got != "cannot allocate memory" {
		t.Errorf("ENOMEM without a memory limit: got %q", got)
	}
}
