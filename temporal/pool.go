package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	agentrt "agentc.dev/agentc/runtime"
)

// A batch's token pool on Temporal is a workflow of its own (type
// agentc.pool), which every model call of the batch's runs, on whichever
// worker makes it, asks for its worst case before it is sent and settles
// with what it used after: runtime.Pool's rule, kept by Temporal, so that
// calls in flight on many workers never overspend it.
const (
	// PoolWorkflow is the workflow type of a batch's pool.
	PoolWorkflow = "agentc.pool"
	// ErrPool is the failure of a reservation the pool can never grant.
	ErrPool = "agentc.pool"

	poolReserve = "reserve"
	poolSettle  = "settle"
	poolClose   = "close"
	poolState   = "state"
)

// poolID is the workflow ID of the token pool of batch batchID: the one
// pool its runs may name (checkPool).
func poolID(batchID string) string {
	return batchID + "/pool"
}

// checkPool refuses, never retried, a run that names a token pool
// (RunInput.Pool) other than its own batch's: each of its model calls
// would send an update to that workflow, whatever it is, and hold a
// worker's activity slot waiting for an answer that never comes.
func checkPool(in *RunInput) error {
	switch {
	case in.Pool == "":
		return nil
	case in.Batch == nil:
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run names token pool %q and is no batch's: a run reserves its calls only in its own batch's pool", in.Pool), ErrRefused, nil)
	case in.Pool != poolID(in.Batch.Workflow):
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run names token pool %q, not its batch's (%s): a run reserves its calls only in its own batch's pool", in.Pool, poolID(in.Batch.Workflow)), ErrRefused, nil)
	}
	return nil
}

// PoolInput is a pool workflow's input.
type PoolInput struct {
	Tokens int64 `json:"tokens"`
	// Carry is what a pool that continued as new carries over: its counts
	// and the reservations of the calls in flight.
	Carry *PoolCarry `json:"carry,omitempty"`
}

// PoolCarry is a pool's books as it continues as new.
type PoolCarry struct {
	State PoolState        `json:"state"`
	Holds map[string]int64 `json:"holds,omitempty"`
}

// poolMoving is the error type of a reservation refused for a moment
// while the pool continues as new: the call asks again.
const poolMoving = "agentc.pool.moving"

// PoolState is what a pool holds.
type PoolState struct {
	Tokens   int64 `json:"tokens"`
	Spent    int64 `json:"spent"`    // by calls that settled
	Held     int64 `json:"held"`     // by calls in flight
	InFlight int   `json:"inflight"` // calls in flight
}

// poolAsk is a call's reservation: its key (unique in the batch, the
// same for every attempt of the call) and its worst case, or, with Rest,
// the least it may be, for a call that holds all that is left.
type poolAsk struct {
	Key  string `json:"key"`
	N    int64  `json:"n"`
	Rest bool   `json:"rest,omitempty"`
}

type poolSettlement struct {
	Key  string `json:"key"`
	Used int64  `json:"used"`
}

// ledger is a pool's books: runtime.Pool's rule (agentrt.PoolRule), first
// come first served, without its locks and channels, which workflow code
// may not block on.
type ledger struct {
	PoolState
	holds map[string]int64 // by key
	queue []*poolWaiter
}

type poolWaiter struct {
	ask     poolAsk
	decided bool
	granted int64
	err     *agentrt.PoolError
}

// grant serves the queue from its head as far as what is free allows.
func (l *ledger) grant() {
	for len(l.queue) > 0 {
		w := l.queue[0]
		n, err, wait := agentrt.PoolRule(l.Tokens, l.Spent, l.Held, l.InFlight, w.ask.N, w.ask.Rest)
		if wait {
			return // it waits for calls in flight to settle
		}
		if w.err = err; err == nil {
			w.granted = n
			l.holds[w.ask.Key] = n
			l.Held += n
			l.InFlight++
		}
		w.decided = true
		l.queue = l.queue[1:]
	}
}

// pool is the pool workflow: it grants and settles reservations until
// its batch closes it, and returns what it holds then.
func (w *Worker) pool(ctx workflow.Context, in PoolInput) (PoolState, error) {
	l := &ledger{PoolState: PoolState{Tokens: in.Tokens}, holds: map[string]int64{}}
	if c := in.Carry; c != nil {
		l.PoolState = c.State
		maps.Copy(l.holds, c.Holds)
	}
	// Pools started before version 1 (poolBoundsVersion) charged a
	// settled call min(used, what it held) even when what it held was
	// below zero: their histories replay as they were made.
	clamp := workflow.GetVersion(ctx, poolBoundsChange, workflow.DefaultVersion, poolBoundsVersion) >= poolBoundsVersion
	batchID := strings.TrimSuffix(workflow.GetInfo(ctx).WorkflowExecution.ID, "/pool")
	moving := false
	err := workflow.SetUpdateHandlerWithOptions(ctx, poolReserve, func(ctx workflow.Context, a poolAsk) (int64, error) {
		if n, ok := l.holds[a.Key]; ok {
			return n, nil // a call attempted again: it holds what it held
		}
		pw := &poolWaiter{ask: a}
		l.queue = append(l.queue, pw)
		l.grant()
		if err := workflow.Await(ctx, func() bool { return pw.decided }); err != nil {
			return 0, err
		}
		if pw.err != nil {
			details, _ := json.Marshal(pw.err)
			return 0, sdktemporal.NewNonRetryableApplicationError(pw.err.Error(), ErrPool, nil, string(details))
		}
		return pw.granted, nil
	}, workflow.UpdateHandlerOptions{Validator: func(a poolAsk) error {
		if err := checkAsk(batchID, a); err != nil {
			return err
		}
		if _, ok := l.holds[a.Key]; !ok && moving {
			return sdktemporal.NewApplicationError("the pool is continuing as new", poolMoving)
		}
		return nil
	}})
	if err != nil {
		return l.PoolState, err
	}
	err = workflow.SetUpdateHandler(ctx, poolSettle, func(ctx workflow.Context, s poolSettlement) (PoolState, error) {
		if n, ok := l.holds[s.Key]; ok {
			delete(l.holds, s.Key)
			l.Held -= n
			l.InFlight--
			if clamp {
				// No more than it held, whatever its provider reported,
				// and never below zero (a hold below zero is refused by
				// checkAsk; one may come from a run before it).
				l.Spent += min(max(s.Used, 0), max(n, 0))
			} else {
				l.Spent += min(max(s.Used, 0), n)
			}
			l.grant()
		}
		return l.PoolState, nil
	})
	if err != nil {
		return l.PoolState, err
	}
	if err := workflow.SetQueryHandler(ctx, poolState, func() (PoolState, error) { return l.PoolState, nil }); err != nil {
		return l.PoolState, err
	}
	closing := workflow.GetSignalChannel(ctx, poolClose)
	moveOn := func() bool {
		info := workflow.GetInfo(ctx)
		return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxHistory
	}
	if err := workflow.Await(ctx, func() bool { return closing.Len() > 0 || moveOn() }); err != nil {
		return l.PoolState, err
	}
	closed := closing.ReceiveAsync(nil)
	// New reservations wait (they are refused, and asked again) until the
	// pool's next run; those in the queue are granted as calls settle.
	moving = !closed
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return l.PoolState, err
	}
	if moving && !closed {
		return l.PoolState, workflow.NewContinueAsNewError(ctx, PoolWorkflow,
			PoolInput{Tokens: in.Tokens, Carry: &PoolCarry{State: l.PoolState, Holds: l.holds}})
	}
	return l.PoolState, nil
}

// poolBoundsChange and poolBoundsVersion name the change that charged a
// settled call nothing below zero whatever it held.
const (
	poolBoundsChange  = "agentc.pool-bounds"
	poolBoundsVersion = workflow.Version(1)
)

// checkAsk refuses a reservation no call of batch batchID's runs makes,
// before the pool takes it: one below zero, which a settlement then
// charged as tokens given back (a client asking -10^12 and settling it
// lifted the pool by as much), or one whose key is not a call of the
// batch's runs (reserveCall's keys are the run's workflow ID, which is
// the batch's ID and a slash, then the effect's key).
func checkAsk(batchID string, a poolAsk) error {
	switch {
	case a.N < 0:
		return fmt.Errorf("reservation %q asks for %d tokens: a call reserves what it may use, never less than none", a.Key, a.N)
	case !strings.HasPrefix(a.Key, batchID+"/"):
		return fmt.Errorf("reservation %q is not a call of batch %s's runs, whose keys begin %s/: a pool takes only its own batch's calls", a.Key, batchID, batchID)
	}
	return nil
}

// reserveCall reserves a model call's worst case, its input's count for
// the provider and its output allowance, in the run's pool, from an
// effect activity's attempt; settle gives back what the call did not
// use. A *agentrt.PoolError is a reservation the pool can never grant.
//
// The updates are named by the call's key and the attempt: the server
// answers an update whose ID it has seen with the outcome it gave, the
// handler not run again. Named by the key alone, the attempt after one
// cut off (its worker stopping), which settled its reservation, was
// handed the first attempt's grant with no hold behind it, and its
// settlement the first's, its tokens never charged. An attempt lost
// with its worker settles nothing: the next finds the call's hold, and
// holds it.
func (w *Worker) reserveCall(ctx context.Context, poolID, key string, attempt int32, provider string, req *agentrt.Request) (settle func(used int64), err error) {
	ids := fmt.Sprintf("%s #%d", key, attempt)
	ask := poolAsk{Key: key, N: int64(agentrt.InputTokens(provider, req))}
	if out := req.MaxOutputTokens; out > 0 {
		ask.N += int64(out)
	} else {
		ask.Rest = true
	}
	var app *sdktemporal.ApplicationError
	for {
		var h client.WorkflowUpdateHandle
		h, err = w.client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: poolID, UpdateName: poolReserve,
			UpdateID: "reserve " + ids, Args: []any{ask}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			var granted int64
			err = h.Get(ctx, &granted)
		}
		if !errors.As(err, &app) || app.Type() != poolMoving {
			break
		}
		select { // the pool is continuing as new: ask its next run
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if errors.As(err, &app) && app.Type() == ErrPool {
		pe := &agentrt.PoolError{}
		var details string
		if app.Details(&details) == nil {
			_ = json.Unmarshal([]byte(details), pe)
		}
		return nil, pe
	}
	if err != nil {
		return nil, fmt.Errorf("the batch's token pool %s: %w", poolID, err)
	}
	return func(used int64) {
		// Settled even when the activity's context has ended.
		sctx := context.WithoutCancel(ctx)
		h, err := w.client.UpdateWorkflow(sctx, client.UpdateWorkflowOptions{WorkflowID: poolID, UpdateName: poolSettle,
			UpdateID: "settle " + ids, Args: []any{poolSettlement{Key: key, Used: used}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(sctx, nil)
		}
		if err != nil && w.opts.Events != nil {
			w.opts.Events(agentrt.Event{Type: agentrt.EventModelError, Message: fmt.Sprintf("settling call %s with the batch's token pool: %v", key, err)})
		}
	}, nil
}
