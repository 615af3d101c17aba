package temporal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/runtime/batch"
)

// A batch on Temporal is a workflow of its own (type agentc.batch, its ID
// the batch's): its client hands it the batch's items, and it starts each
// as a child run (agentc.run, ID ItemID), Parallel at once, and starts and
// closes the batch's token pool. Once every item is handed over, the batch
// goes on without its client.
//
// Temporal bounds a workflow's input (2 MB) and its history (50,000
// events), so the batch holds few items at a time and continues as new
// when its history grows: the client hands items over as the batch has
// room (maxPending bytes waiting), the children read the plan from the
// batch's input rather than carrying it in their own (which the batch's
// history would record for each), and each child tells the batch, by a
// signal, when it ends, so that a run of the batch that continued as new
// looks at the runs an earlier one started (watchCarried): a signal only
// says when to look, since any client may send it.
const (
	// BatchWorkflow is the workflow type of a batch.
	BatchWorkflow = "agentc.batch"

	batchAdd   = "add"   // update: items to start
	batchEnd   = "end"   // update: no more items
	batchDone  = "done"  // signal: a child run ended (so it says)
	batchState = "state" // query

)

// Bounds of a batch's and a pool's workflow (variables for tests).
var (
	// maxPending bounds the inputs a batch holds, not yet started, in
	// bytes: they are carried into its next run when it continues as new.
	maxPending = 1 << 20
	// maxHistory is the history length at which a batch or pool
	// continues as new if the server has not suggested it before.
	maxHistory = 20000
)

// BatchInput is a batch workflow's input.
type BatchInput struct {
	// Run is every item's run input but for the item's own input: the
	// plan, its digest, the budgets and provider.
	Run RunInput `json:"run"`
	// Parallel is how many of the batch's runs go at once.
	Parallel int `json:"parallel"`
	// PoolTokens, above zero, is the size of the batch's token pool.
	PoolTokens int64 `json:"pool_tokens,omitempty"`
	// State is what a batch that continued as new carries over.
	State *BatchState `json:"state,omitempty"`
}

// BatchItem is one input of a batch, as its client hands it over.
type BatchItem struct {
	Index int             `json:"index"`
	ID    string          `json:"id"` // its run's workflow ID: ItemID
	Input json.RawMessage `json:"input"`
}

// BatchState is what a batch holds.
type BatchState struct {
	// Digest is the plan digest of the batch's runs.
	Digest string `json:"digest"`
	// Pending are the items handed over and not started yet; Running the
	// IDs of the runs started and not ended.
	Pending []BatchItem `json:"pending,omitempty"`
	Running []string    `json:"running,omitempty"`
	// Ended says the client has handed over every item.
	Ended bool `json:"ended,omitempty"`
	// Started counts the runs the batch started; Existing the items whose
	// run existed already (an earlier submission of the batch started it).
	Started  int `json:"started"`
	Existing int `json:"existing"`
	// Pool is the token pool's workflow ID, once started.
	Pool string `json:"pool,omitempty"`
}

// BatchRef names the batch a run belongs to: the batch run whose input
// holds the plan, and the batch to tell when the run ends.
type BatchRef struct {
	Workflow string `json:"workflow"`
	Run      string `json:"run"`
}

// batch is the batch workflow.
func (w *Worker) batch(ctx workflow.Context, in BatchInput) (*BatchState, error) {
	data, err := planJSON(in.Run.Plan)
	if err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrPlan, nil)
	}
	p, err := readPlan(ctx, "the batch's plan", data)
	if err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrPlan, nil)
	}
	if string(p.Digests.Plan) != in.Run.Digest {
		return nil, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the plan's digest is %s, but the batch was submitted for %s", p.Digests.Plan, in.Run.Digest), ErrPlan, nil)
	}
	// Refused before any of its runs starts; each run checks again.
	if err := w.checkPlan(p); err != nil {
		return nil, err
	}
	if in.Parallel <= 0 {
		return nil, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("parallel is %d, not a number of runs", in.Parallel), ErrPlan, nil)
	}
	// Batches started before version 1 (batchBoundsVersion) took any
	// parallel and a state on their first run: their histories replay as
	// they were made.
	if workflow.GetVersion(ctx, batchBoundsChange, workflow.DefaultVersion, batchBoundsVersion) >= batchBoundsVersion {
		if err := checkBatchInput(ctx, in); err != nil {
			return nil, err
		}
	}
	// Batches started before version 1 (batchDoneVersion) counted a run
	// ended on any done signal naming it: their histories replay as they
	// were made.
	closedOnly := workflow.GetVersion(ctx, batchDoneChange, workflow.DefaultVersion, batchDoneVersion) >= batchDoneVersion
	self := workflow.GetInfo(ctx).WorkflowExecution
	st := in.State
	if st == nil {
		st = &BatchState{Digest: in.Run.Digest}
	}
	running := map[string]bool{}
	// carried are the runs an earlier run of the batch started, still
	// going when it continued as new: this run has no future of theirs.
	carried := map[string]bool{}
	for _, id := range st.Running {
		running[id] = true
		carried[id] = true
	}
	pendingBytes := 0
	known := map[string]bool{}
	for _, it := range st.Pending {
		pendingBytes += len(it.Input)
		known[it.ID] = true
	}
	if in.PoolTokens > 0 && st.Pool == "" {
		st.Pool = poolID(self.ID)
		co := workflow.ChildWorkflowOptions{WorkflowID: st.Pool, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}
		f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, co), PoolWorkflow, PoolInput{Tokens: in.PoolTokens})
		// A pool of this batch still open (its batch was submitted again)
		// is shared.
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !sdktemporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return nil, fmt.Errorf("starting the batch's token pool: %w", err)
		}
	}
	draining := false
	if err := workflow.SetUpdateHandlerWithOptions(ctx, batchAdd, func(ctx workflow.Context, items []BatchItem) (int, error) {
		// Room first: the items wait in the client until the batch can
		// hold them. A batch about to continue as new takes them anyway.
		if err := workflow.Await(ctx, func() bool { return pendingBytes < maxPending || draining }); err != nil {
			return 0, err
		}
		n := 0
		for _, it := range items {
			if known[it.ID] || running[it.ID] {
				continue // handed over twice: a client's retry
			}
			known[it.ID] = true
			st.Pending = append(st.Pending, it)
			pendingBytes += len(it.Input)
			n++
		}
		return n, nil
	}, workflow.UpdateHandlerOptions{Validator: func(items []BatchItem) error {
		return checkAdd(self.ID, items)
	}}); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandler(ctx, batchEnd, func(ctx workflow.Context) error {
		st.Ended = true
		return nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, batchState, func() (BatchState, error) {
		now := *st
		now.Running = keys(running)
		return now, nil
	}); err != nil {
		return nil, err
	}
	// The runs that ended are read from the main loop only: a value a
	// goroutine blocked in Receive was handed is lost if the run continues
	// as new before that goroutine runs.
	done := workflow.GetSignalChannel(ctx, batchDone)
	// poked are the carried runs a done signal named since they were last
	// looked at (closedOnly).
	poked := map[string]bool{}
	ended := func() {
		var id string
		for done.ReceiveAsync(&id) {
			switch {
			case !closedOnly:
				delete(running, id)
			case carried[id] && running[id]:
				// Anyone may send the signal: the run is looked at.
				poked[id] = true
			}
			// A run this run of the batch started is counted ended by
			// its future, which only its closing resolves.
		}
	}
	if closedOnly && len(carried) > 0 {
		workflow.Go(ctx, func(c workflow.Context) { w.watchCarried(c, self.ID, carried, running, poked) })
	}

	ref := &BatchRef{Workflow: self.ID, Run: self.RunID}
	starting := 0 // children whose start is not known yet
	start := func(it BatchItem) {
		run := in.Run
		run.Plan, run.Input, run.Batch, run.Pool = nil, it.Input, ref, st.Pool
		co := workflow.ChildWorkflowOptions{WorkflowID: it.ID,
			// The run outlives this run of the batch when it continues as
			// new; it tells the batch when it ends.
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}
		running[it.ID] = true
		starting++
		f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, co), Workflow, run)
		workflow.Go(ctx, func(c workflow.Context) {
			err := f.GetChildWorkflowExecution().Get(c, nil)
			starting--
			switch {
			case err == nil:
				st.Started++
			case sdktemporal.IsWorkflowExecutionAlreadyStartedError(err):
				// Its run exists: an earlier submission of the batch started
				// it, and its client reads its report from its history.
				st.Existing++
				delete(running, it.ID)
			default:
				// Not started: it stays pending.
				delete(running, it.ID)
				st.Pending = append(st.Pending, it)
				pendingBytes += len(it.Input)
			}
			if err == nil && closedOnly {
				// Its slot is free once it has closed, whatever signals
				// say (the batch may have continued as new by then: its
				// next run looks at it, watchCarried).
				_ = f.Get(c, nil)
				delete(running, it.ID)
			}
		})
	}
	for {
		moveOn := func() bool {
			info := workflow.GetInfo(ctx)
			return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxHistory
		}
		ended()
		if err := workflow.Await(ctx, func() bool {
			return done.Len() > 0 ||
				len(st.Pending) > 0 && len(running) < in.Parallel ||
				st.Ended && len(st.Pending) == 0 && len(running) == 0 && starting == 0 ||
				moveOn()
		}); err != nil {
			return st, err
		}
		ended()
		switch {
		case moveOn():
			draining = true
			if err := workflow.Await(ctx, func() bool { return starting == 0 && workflow.AllHandlersFinished(ctx) }); err != nil {
				return st, err
			}
			ended()
			st.Running = keys(running)
			next := in
			next.State = st
			return nil, workflow.NewContinueAsNewError(ctx, BatchWorkflow, next)
		case len(st.Pending) > 0 && len(running) < in.Parallel:
			it := st.Pending[0]
			st.Pending = st.Pending[1:]
			pendingBytes -= len(it.Input)
			delete(known, it.ID)
			start(it)
		default:
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return st, err
			}
			ended()
			if st.Ended && len(st.Pending) == 0 && len(running) == 0 && starting == 0 {
				if st.Pool != "" {
					dctx, cancel := workflow.NewDisconnectedContext(ctx)
					err := workflow.SignalExternalWorkflow(dctx, st.Pool, "", poolClose, nil).Get(dctx, nil)
					cancel()
					if err != nil {
						workflow.GetLogger(ctx).Warn("closing the batch's token pool", "pool", st.Pool, "error", err)
					}
				}
				st.Running = nil
				return st, nil
			}
		}
	}
}

// checkAdd refuses an add update of batch batchID before the batch takes
// it: an item whose run's ID is not in the batch, an item past maxItem
// (which cannot be a run's input on Temporal), or items past maxAdd
// together, which the server, past its bound on the update's acceptance,
// answered by terminating the batch. The validator runs on no replay, so
// it changes with no version.
func checkAdd(batchID string, items []BatchItem) error {
	total := 0
	for _, it := range items {
		// The client names the runs (ItemID, from the input's line as
		// read, which the payload's JSON need not keep byte for byte).
		if !strings.HasPrefix(it.ID, batchID+"/") {
			return fmt.Errorf("item %d: its run's ID %q is not in batch %s", it.Index, it.ID, batchID)
		}
		if len(it.Input) > maxItem {
			return fmt.Errorf("item %d: its input is %d bytes, more than the %d a run's input may hold on Temporal", it.Index, len(it.Input), maxItem)
		}
		total += itemBytes(it)
	}
	if total > maxAdd {
		return fmt.Errorf("%d items of %d bytes in one update, more than the %d a batch takes at once: hand them over in several", len(items), total, maxAdd)
	}
	return nil
}

// batchDoneChange and batchDoneVersion name the change that counted a
// batch's run ended only once the batch knows it closed (the child's
// future; for a run an earlier run of the batch started, the server's
// description of it), not on a done signal, which any client may send: a
// forged one per run going had the batch start runs past its parallel,
// until the server's bound on a workflow's children going failed its
// task for ever.
const (
	batchDoneChange  = "agentc.batch-done"
	batchDoneVersion = workflow.Version(1)
)

// closedActivity is the local activity that tells which of a batch's
// runs have closed (Worker.closedLocal).
const closedActivity = "agentc.closed"

// watchCarried counts ended the runs in carried (those an earlier run of
// batch batchID started) as they close: it looks at those a done signal
// named (poked) at once, at most one look a second, and at all of them
// at intervals growing to a minute, should a run's signal have been lost.
func (w *Worker) watchCarried(ctx workflow.Context, batchID string, carried, running, poked map[string]bool) {
	lao := workflow.LocalActivityOptions{StartToCloseTimeout: planTimeout,
		RetryPolicy: &sdktemporal.RetryPolicy{MaximumInterval: 10 * time.Second, NonRetryableErrorTypes: []string{ErrRefused}}}
	wait := time.Second
	for {
		for id := range carried {
			if !running[id] {
				delete(carried, id)
			}
		}
		if len(carried) == 0 {
			return
		}
		ids := keys(poked)
		if len(ids) == 0 {
			ids = keys(carried)
		}
		clear(poked)
		var closed []string
		if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, lao), closedActivity, batchID, ids).Get(ctx, &closed); err != nil {
			workflow.GetLogger(ctx).Warn("looking at the batch's runs", "error", err)
		}
		for _, id := range closed {
			delete(running, id)
			delete(carried, id)
		}
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return
		}
		if ok, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return len(poked) > 0 }); err != nil {
			return
		} else if ok {
			wait = time.Second
		} else {
			wait = min(2*wait, time.Minute)
		}
	}
}

// batchBoundsChange and batchBoundsVersion name the change that bounded
// a batch's parallel and refused a state its first run was started with
// (checkBatchInput).
const (
	batchBoundsChange  = "agentc.batch-bounds"
	batchBoundsVersion = workflow.Version(1)
)

// checkBatchInput refuses, never retried, a batch whose client asks more
// runs at once than batch.MaxParallel (the server refuses a workflow more
// than 2,000 children going: the batch's task would fail, and be tried
// again, for ever), or starts it with a state, which only a batch that
// continued as new carries: its items were never handed over through the
// add update, which checks them.
func checkBatchInput(ctx workflow.Context, in BatchInput) error {
	switch {
	case in.Parallel > batch.MaxParallel:
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"parallel is %d, more than the %d runs a batch runs at once", in.Parallel, batch.MaxParallel), ErrRefused, nil)
	case in.State != nil && workflow.GetInfo(ctx).ContinuedExecutionRunID == "":
		return sdktemporal.NewNonRetryableApplicationError(
			"the batch was started with a state: only a batch that continued as new carries one; its client hands it its items (the add update)", ErrRefused, nil)
	}
	return nil
}

// tellBatch tells a run's batch that the run ended, so that the batch
// starts another.
func tellBatch(ctx workflow.Context, b *BatchRef) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	// A batch gone (terminated) has no one to tell.
	_ = workflow.SignalExternalWorkflow(dctx, b.Workflow, "", batchDone, id).Get(dctx, nil)
}

// keys returns a set's members, sorted (workflow code must not depend on
// a map's order).
func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// planActivity is the local activity that reads the plan of a batch's
// run (Worker.batchPlan).
const planActivity = "agentc.plan"

// planTimeout bounds reading a batch's plan.
const planTimeout = time.Minute
