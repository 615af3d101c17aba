package serve

import (
	"context"
	"fmt"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

// TestDecisionAsWaitEnds: a decision that comes over the API just as the
// run stops waiting for it (its deadline, its end) is either heard by
// the run, and answered as taken, or told no call waits: never answered
// as taken while the run went on without it.
func TestDecisionAsWaitEnds(t *testing.T) {
	rs, err := NewRuns("", 0, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Stop(); rs.Wait() })
	asked := make(chan *Pending, 1)
	rs.OnPending(func(p *Pending) { asked <- p })
	approve := true
	for i := range 300 {
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), runInfoKey{}, &runInfo{id: fmt.Sprint("run-", i), agent: "actor"}))
		heard := make(chan error, 1)
		go func() {
			_, err := rs.Ask(ctx, &agentrt.ApprovalRequest{Key: "0.1", Tool: "shell", Why: "it runs commands"})
			heard <- err
		}()
		p := <-asked
		cancel()
		_, taken := rs.Decide(p.Run, p.Key, Decision{Approve: &approve})
		err := <-heard
		if taken != (err == nil) {
			t.Fatalf("round %d: the decision was answered taken %v, and the run heard it: %v", i, taken, err == nil)
		}
		if left := rs.Pending(); len(left) != 0 {
			t.Fatalf("round %d: %d calls left pending", i, len(left))
		}
	}
}
