//go:build unix

package exec

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/internal/await"
	"agentc.dev/agentc/plan"
)

// TestProcessGroup checks that what a program starts does not outlive
// the call: on a timeout, on cancellation, and when the program exits
// leaving a background job.
func TestProcessGroup(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name    string
		script  string
		timeout string
		want    string
	}{
		{"timeout kills the group", "sleep 30 & echo $!; wait", "200ms", "failed: timed out after 200ms"},
		{"background job holding stdout", "sleep 30 & echo $!", "", ""},
		{"background job with its own output", "sleep 30 >/dev/null 2>&1 & echo $!", "", ""},
		{"nested shells", "sh -c 'sleep 30 & echo $!; wait' & wait", "200ms", "failed: timed out after 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newTool(t, base, plan.Tool{Argv: []string{"sh", "-c", tt.script}, Timeout: tt.timeout})
			start := time.Now()
			got := call(t, tool, `{}`)
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("took %v", d)
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			out := got
			if i := strings.Index(out, "stdout:\n"); i >= 0 {
				out = out[i+len("stdout:\n"):]
			}
			pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
			if err != nil {
				t.Fatalf("no pid in %q", got)
			}
			if err := await.ProcessEnd(pid, 2*time.Second); err != nil {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the background process outlived the call: %v", err)
			}
		})
	}
}
