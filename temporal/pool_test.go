package temporal

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"agentc.dev/agentc/internal/devserver"
	agentrt "agentc.dev/agentc/runtime"
)

// TestPoolWorkflow: the pool workflow keeps runtime.Pool's rule across
// callers: a reservation that does not fit waits while calls in flight
// hold what it needs, one that could never fit is refused, a call asking
// again with its key holds what it held, and settling frees the rest.
func TestPoolWorkflow(t *testing.T) {
	s := devserver.Start(t)
	c, err := Dial(context.Background(), s.HostPort, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) {
		return nil, errors.New("no model")
	},
		AllowAnyPlan: true}) // it runs pools, no plan
	if err != nil {
		t.Fatal(err)
	}
	tw := worker.New(c, "pool", Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	defer tw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "b/pool", TaskQueue: "pool"}, PoolWorkflow, PoolInput{Tokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// A request whose input counts 600 tokens (a model with no public
	// tokeniser: a token a byte), plus 0 or 100 out.
	req := func(out int) *agentrt.Request {
		return &agentrt.Request{MaxOutputTokens: out, Messages: []agentrt.Message{{Role: agentrt.User, Content: string(make([]byte, 600-8-8-4))}}}
	}
	if n := agentrt.InputTokens("openai", req(0)); n != 600 {
		t.Fatalf("input count %d, want 600", n)
	}
	settleA, err := w.reserveCall(ctx, "b/pool", "a", "openai", req(100)) // 700 of 1000
	if err != nil {
		t.Fatal(err)
	}
	if again, err := w.reserveCall(ctx, "b/pool", "a", "openai", req(100)); err != nil || again == nil {
		t.Fatalf("asking again with the same key: %v", err)
	}
	got := make(chan error, 1)
	var settleB func(int64)
	go func() {
		var err error
		settleB, err = w.reserveCall(ctx, "b/pool", "b", "openai", req(100)) // waits: 300 free
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("b was decided while a held the pool: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	settleA(200) // 200 spent, 800 free
	if err := <-got; err != nil {
		t.Fatalf("b after a settled: %v", err)
	}
	settleB(100)                                                    // 300 spent
	_, err = w.reserveCall(ctx, "b/pool", "c", "openai", req(1000)) // 1600 > 700 left
	var pe *agentrt.PoolError
	if !errors.As(err, &pe) || pe.Need != 1600 || pe.Left != 700 {
		t.Fatalf("c: %v; want a pool error, need 1600, left 700", err)
	}
	if err := c.SignalWorkflow(ctx, "b/pool", "", poolClose, nil); err != nil {
		t.Fatal(err)
	}
	var st PoolState
	if err := pool.Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if st != (PoolState{Tokens: 1000, Spent: 300}) {
		t.Errorf("the pool at its end: %+v; want 1000 tokens, 300 spent, none held", st)
	}
}
