package temporal

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
)

// stalled is a model whose calls wait until their context ends; called
// is closed at the first.
type stalled struct {
	once   *sync.Once
	called chan struct{}
}

func newStalled() stalled { return stalled{once: &sync.Once{}, called: make(chan struct{})} }

func (m stalled) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	m.once.Do(func() { close(m.called) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCancelledRunUnreported: a client that stops waiting for a run that
// a worker began, and that no worker serves any longer, gets the run's
// report as interrupted once cancelWait has passed, where it got an
// error ("context deadline exceeded", agentc run's exit 1 in place of
// 130).
func TestCancelledRunUnreported(t *testing.T) {
	defer func(d time.Duration) { cancelWait = d }(cancelWait)
	cancelWait = 2 * time.Second

	c := devClient(t)
	p, data := labelPlan(t)
	m := newStalled()
	tw := startWorker(t, c, "unreported", p, m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := Start(ctx, c, data, RunInput{Input: []byte(`{"n":1}`)}, SubmitOptions{TaskQueue: "unreported", WorkflowID: "unreported-1"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.called:
	case <-ctx.Done():
		t.Fatal("the model was never called")
	}
	// The run's only worker stops with its call in flight.
	tw.Stop()
	wctx, stop := context.WithCancel(ctx)
	stop()
	rep, err := Wait(wctx, c, run)
	if err != nil {
		t.Fatalf("waiting for the cancelled run: %v; want its report, interrupted", err)
	}
	if !rep.Interrupted || rep.Outcome != agentrt.OutcomeError || rep.Agent != "label" || rep.Digests.Plan != p.Digests.Plan ||
		!strings.Contains(rep.Error, "its report did not come within 2s") {
		t.Errorf("the report: %+v; want it interrupted, saying its report did not come", rep)
	}
}
