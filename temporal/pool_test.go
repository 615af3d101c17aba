package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	agentrt "agentc.dev/agentc/runtime"
)

// TestPoolWorkflow: the pool workflow keeps runtime.Pool's rule across
// callers: a reservation that does not fit waits while calls in flight
// hold what it needs, one that could never fit is refused, a call asking
// again with its key holds what it held, and settling frees the rest.
func TestPoolWorkflow(t *testing.T) {
	c, w := poolWorker(t)
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
	settleA, err := w.reserveCall(ctx, "b/pool", "b/1/a", 1, "openai", req(100)) // 700 of 1000
	if err != nil {
		t.Fatal(err)
	}
	// Its next attempt (its worker lost) holds what it held.
	if again, err := w.reserveCall(ctx, "b/pool", "b/1/a", 2, "openai", req(100)); err != nil || again == nil {
		t.Fatalf("asking again with the same key: %v", err)
	}
	got := make(chan error, 1)
	var settleB func(int64)
	go func() {
		var err error
		settleB, err = w.reserveCall(ctx, "b/pool", "b/1/b", 1, "openai", req(100)) // waits: 300 free
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
	settleB(100)                                                           // 300 spent
	_, err = w.reserveCall(ctx, "b/pool", "b/1/c", 1, "openai", req(1000)) // 1600 > 700 left
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

// TestPoolRefusesForeignAsks: a Temporal client may send a batch's pool
// updates of its own. A reservation below zero, which its settlement then
// charged as tokens given back (one of -10^12 lifted a 400-token pool by
// as much), and one whose key is no call of the batch's runs are refused
// before the pool takes them, its books unchanged; and a hold below zero
// that a pool carried over from a run before this is charged nothing when
// settled, not a spend below zero.
func TestPoolRefusesForeignAsks(t *testing.T) {
	c, _ := poolWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	state := func(id string) PoolState {
		t.Helper()
		v, err := c.QueryWorkflow(ctx, id, "", poolState)
		if err != nil {
			t.Fatal(err)
		}
		var st PoolState
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	update := func(id, name string, arg any) error {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name,
			Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		return err
	}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "b/pool", TaskQueue: "pool"}, PoolWorkflow, PoolInput{Tokens: 400}); err != nil {
		t.Fatal(err)
	}
	if err := update("b/pool", poolReserve, poolAsk{Key: "b/1/ok", N: 100}); err != nil {
		t.Fatal(err)
	}
	before := state("b/pool")
	for _, c2 := range []struct {
		ask  poolAsk
		want string
	}{
		{poolAsk{Key: "b/1/atk", N: -1_000_000_000_000}, `reservation "b/1/atk" asks for -1000000000000 tokens`},
		{poolAsk{Key: "atk", N: 10}, `reservation "atk" is not a call of batch b's runs`},
		{poolAsk{Key: "bb/1/x", N: 10}, `reservation "bb/1/x" is not a call of batch b's runs`},
	} {
		if err := update("b/pool", poolReserve, c2.ask); err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("reserving %+v: %v; want a refusal that says %q", c2.ask, err, c2.want)
		}
		if err := update("b/pool", poolSettle, poolSettlement{Key: c2.ask.Key}); err != nil {
			t.Fatal(err)
		}
		if st := state("b/pool"); st != before {
			t.Errorf("after reserving and settling %+v the pool holds %+v; want %+v", c2.ask, st, before)
		}
	}

	// A pool carrying a hold below zero, as one attacked before this
	// continued as new with it.
	carry := &PoolCarry{State: PoolState{Tokens: 400, Held: -1000, InFlight: 1}, Holds: map[string]int64{"c/1/atk": -1000}}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "c/pool", TaskQueue: "pool"}, PoolWorkflow, PoolInput{Tokens: 400, Carry: carry}); err != nil {
		t.Fatal(err)
	}
	if err := update("c/pool", poolSettle, poolSettlement{Key: "c/1/atk"}); err != nil {
		t.Fatal(err)
	}
	if st := state("c/pool"); st != (PoolState{Tokens: 400}) {
		t.Errorf("a hold below zero, settled: the pool holds %+v; want 400 tokens, none spent or held", st)
	}
}

// poolWorker starts a dev server and a worker on task queue "pool" that
// runs pools (no plan, no model), and returns a client of the server and
// the worker.
func poolWorker(t *testing.T) (client.Client, *Worker) {
	t.Helper()
	c := devClient(t)
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) {
		return nil, errors.New("no model")
	}, AllowAnyPlan: true}) // it runs pools, no plan
	if err != nil {
		t.Fatal(err)
	}
	tw := worker.New(c, "pool", Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Stop) // before the client closes
	return c, w
}
