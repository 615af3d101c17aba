package runcmd

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
)

// TestTimeoutCaseMadeAgain: a timeout fault run whose deadline passed
// before the call the fault hangs (never injected, ended on its deadline)
// is made again with twice the deadline, up to the agent's own and to
// maxHang; a run that reached the fault, one that ended otherwise, and
// the other faults are made once.
func TestTimeoutCaseMadeAgain(t *testing.T) {
	for _, tc := range []struct {
		name, fault, own string
		reachedAt        time.Duration // the first deadline the fault is reached at; 0 never
		deadline         bool          // a run short of the fault ended on its deadline
		want             []time.Duration
		ok               bool
	}{
		{"reached at once", fault.Timeout, "60s", time.Second, true, []time.Duration{time.Second}, true},
		{"reached on the third", fault.Timeout, "60s", 4 * time.Second, true, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, true},
		{"never, up to maxHang", fault.Timeout, "60s", 0, true, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, false},
		{"never, up to the agent's own", fault.Timeout, "3s", 0, true, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, false},
		{"an own deadline under a second", fault.Timeout, "500ms", 0, true, []time.Duration{500 * time.Millisecond}, false},
		{"ended otherwise", fault.Timeout, "60s", 0, false, []time.Duration{time.Second}, false},
		{"another fault", fault.RateLimit, "60s", 0, true, []time.Duration{0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hangs []time.Duration
			runCaseOnce = func(_ context.Context, _ Env, _ *plan.Plan, _ string, c Case, hang time.Duration) (*agentrt.Report, error) {
				hangs = append(hangs, hang)
				if tc.reachedAt != 0 && hang >= tc.reachedAt {
					return &agentrt.Report{Bound: agentrt.BoundDeadline}, nil
				}
				return nil, &beforeFault{fault: c.Fault, deadline: tc.deadline}
			}
			t.Cleanup(func() { runCaseOnce = runCase })
			p := &plan.Plan{Agent: plan.Agent{Budgets: plan.Budgets{Deadline: tc.own}}}
			rep, err := RunCase(context.Background(), Env{}, p, ".", Case{Fault: tc.fault})
			if !slices.Equal(hangs, tc.want) {
				t.Errorf("deadlines %v, want %v", hangs, tc.want)
			}
			var early *beforeFault
			if tc.ok && (err != nil || rep == nil) || !tc.ok && !errors.As(err, &early) {
				t.Errorf("report %v, error %v; want reached %v", rep, err, tc.ok)
			}
		})
	}
}
