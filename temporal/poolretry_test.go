package temporal

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestPoolChargesRetriedCall: a batch's model call whose attempt is cut
// off by its worker stopping is made again on another worker, and the
// pool is charged what the call made there used. The attempt cut off
// settled its reservation; the next asked again under the same update
// IDs, which the pool's workflow answered with the first attempt's
// outcomes without running them: no hold, and the call's 25 tokens never
// charged (the pool ended 0 spent).
func TestPoolChargesRetriedCall(t *testing.T) {
	c := devClient(t)
	p, data := labelPlan(t)
	cut := newStalled()
	first := startWorker(t, c, "retried", p, cut)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := pooledItem(ctx, t, c, data, "retried")
	select {
	case <-cut.called:
	case <-ctx.Done():
		t.Fatal("the model was never called")
	}
	// The worker stops with the call in flight; another makes it.
	first.Stop()
	m := &answering{calls: map[string]int{}}
	defer startWorker(t, c, "retried", p, m).Stop()
	rep, err := b.RunFunc()(ctx, 0, 1, []byte(`{"n": 1}`))
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the item: %+v, %v", rep, err)
	}
	pool, err := b.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PoolState{Tokens: 100_000, Spent: 25}); pool == nil || *pool != want {
		t.Errorf("the pool at its end: %+v; want %+v: the call made again charged", pool, want)
	}
	if n := m.calls["issue 1"]; n != 1 {
		t.Errorf("the second worker made the call %d times, want 1", n)
	}
}

// noUsage answers as answering does, its reply reporting no usage.
type noUsage struct{}

func (noUsage) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}}}, nil
}

// TestPoolChargesUnreportedUsage: a batch's call whose reply reports no
// usage is charged to the pool as the run charges it, by the estimate:
// it was settled to the usage reported, none, and a provider that reports
// no usage spent nothing of the pool, however many calls it served.
func TestPoolChargesUnreportedUsage(t *testing.T) {
	c := devClient(t)
	p, data := labelPlan(t)
	defer startWorker(t, c, "no-usage", p, noUsage{}).Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := pooledItem(ctx, t, c, data, "no-usage")
	rep, err := b.RunFunc()(ctx, 0, 1, []byte(`{"n": 1}`))
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the item: %+v, %v", rep, err)
	}
	pool, err := b.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pool == nil || pool.Spent <= 0 || !rep.UsageEstimated {
		t.Errorf("the pool at its end: %+v, the run's usage %+v (estimated %v); want the estimate charged", pool, rep.Usage, rep.UsageEstimated)
	}
}

// startWorker starts a worker on the task queue queue, allowed p, whose
// model is m; its agentc side is closed when the test ends.
func startWorker(t *testing.T, c client.Client, queue string, p *plan.Plan, m agentrt.Model) worker.Worker {
	t.Helper()
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) { return m, nil },
		Allowed: []digest.Digest{p.Digests.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	tw := worker.New(c, queue, Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	return tw
}

// pooledItem submits a batch named id, on the task queue of that name, of
// one item under a pool of 100,000 tokens.
func pooledItem(ctx context.Context, t *testing.T, c client.Client, data []byte, id string) *BatchClient {
	t.Helper()
	b, err := SubmitBatch(ctx, c, data, BatchSpec{ID: id, Parallel: 1, PoolTokens: 100_000,
		Items: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(`{"n": 1}` + "\n")), nil }},
		SubmitOptions{TaskQueue: id})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
