package temporal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
)

// NewBatchID returns a batch ID for a plan's agent: its runs' workflow
// IDs start with it.
func NewBatchID(agent string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "agentc-" + agent + "-batch-" + hex.EncodeToString(b)
}

// ItemID is the workflow ID of a batch's item: the batch's ID, the item's
// index and a digest of its input, so that the same batch submitted again
// names the same runs, and an input that changed names another.
func ItemID(batchID string, index int, input []byte) string {
	sum := blake3.Sum256(input)
	return fmt.Sprintf("%s/%06d-%s", batchID, index, hex.EncodeToString(sum[:8]))
}

// maxItem bounds an item's input, in bytes: a run's input is a
// workflow's, which Temporal bounds to 2 MB with the rest of the run's.
const maxItem = 1536 << 10

// chunk bounds the items handed to a batch in one update, in bytes
// (itemBytes), but for an item larger alone.
const chunk = 256 << 10

// itemBytes is what an item adds to an update, its input and ID and
// their encoding: counted so that many small items make no large update.
func itemBytes(it BatchItem) int {
	return len(it.Input) + len(it.ID) + itemOverhead
}

// itemOverhead is what an item's encoding adds to its input and ID, at
// most (its index and member names).
const itemOverhead = 64

// maxAdd bounds the items one add update hands a batch (itemBytes): a
// chunk and an item of maxItem, with room, below the 2 MiB the server
// allows the update's acceptance, which carries them all. Past it the
// server terminated the batch.
const maxAdd = chunk + maxItem + 64<<10

// BatchSpec is a batch as its client submits it.
type BatchSpec struct {
	// ID is the batch's workflow ID; its runs' IDs start with it.
	ID string
	// Run is every item's run input but for the item's own input.
	Run RunInput
	// Parallel is how many runs go at once; PoolTokens, above zero, the
	// size of the batch's token pool.
	Parallel   int
	PoolTokens int64
	// Items opens the batch's input (JSON lines) to hand its items over;
	// MaxLine bounds a line, as batch.Scan does.
	Items   func() (io.ReadCloser, error)
	MaxLine int
	// Handed, when set, is told once every item was handed over: the
	// batch then goes on without its client.
	Handed func(items int)
	// Prepare, when set, makes an item's input of its line (puts the
	// files it names in the store the workers read); a line it fails is
	// not handed over, and the batch's runner, preparing it alike,
	// reports it.
	Prepare func(line []byte) ([]byte, error)
	// Note, when set, is told what the client should know and that is
	// no error: a batch joined that runs with another Parallel.
	Note func(msg string)
}

// BatchClient is a batch submitted to Temporal, from its client's side:
// it hands the batch its items, and waits for each item's run.
type BatchClient struct {
	c     client.Client
	spec  BatchSpec
	queue string
	since time.Time // runs started before are served, not paid for
	// provider is the provider that answers the items' runs: the plan's,
	// or the one the batch names (RunInput.Provider).
	provider string

	mu       sync.Mutex
	fed      error // why handing over the items stopped, once it has
	ended    bool  // the batch workflow has ended
	cancel   context.CancelFunc
	feedDone chan struct{}
}

// SubmitBatch submits a batch of the plan file data, or joins the batch
// of that ID if it is still going (it must run the same plan), and starts
// handing it the items. A batch of that ID that has ended is started
// again: the items whose runs exist are not run again, and their reports
// are read from their histories.
func SubmitBatch(ctx context.Context, c client.Client, data []byte, spec BatchSpec, opts SubmitOptions) (*BatchClient, error) {
	p, err := plan.Read("plan", data)
	if err != nil {
		return nil, err
	}
	spec.Run.Plan, spec.Run.Digest, spec.Run.Input = data, string(p.Digests.Plan), nil
	if spec.Parallel <= 0 {
		spec.Parallel = batch.DefaultParallel
	}
	b := &BatchClient{c: c, spec: spec, queue: opts.TaskQueue, since: time.Now(), provider: spec.Run.Provider, feedDone: make(chan struct{})}
	if b.provider == "" {
		b.provider = p.Agent.Model.Provider
	}
	if b.queue == "" {
		b.queue = DefaultTaskQueue
	}
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(ctx)
	b.cancel = cancel
	go func() {
		defer close(b.feedDone)
		err := b.feed(fctx)
		b.mu.Lock()
		if err == nil {
			err = errFed
		}
		b.fed = err
		b.mu.Unlock()
	}()
	return b, nil
}

// errFed says every item was handed over.
var errFed = errors.New("every item was handed over")

// start starts the batch workflow, or joins the run of it that is going,
// which must be this batch: its plan, provider, seed, budgets and pool
// (joinable).
func (b *BatchClient) start(ctx context.Context) error {
	in := BatchInput{Run: b.spec.Run, Parallel: b.spec.Parallel, PoolTokens: b.spec.PoolTokens}
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: b.spec.ID, TaskQueue: b.queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, BatchWorkflow, in)
	if err != nil {
		return fmt.Errorf("temporal: starting batch %s: %w", b.spec.ID, err)
	}
	got, err := ReadBatchInput(ctx, b.c, b.spec.ID, run.GetRunID())
	if err != nil {
		return fmt.Errorf("temporal: batch %s: %w", b.spec.ID, err)
	}
	if err := joinable(b.spec.ID, *got, in); err != nil {
		return err
	}
	if got.Parallel != in.Parallel && b.spec.Note != nil {
		b.spec.Note(fmt.Sprintf("batch %s is going with %d runs at once, not %d: it goes on so", b.spec.ID, got.Parallel, in.Parallel))
	}
	b.mu.Lock()
	b.ended = false
	b.mu.Unlock()
	go func() {
		// The batch ends once every item it was handed has ended; Get
		// follows it when it continues as new.
		if run.Get(ctx, nil) != nil && ctx.Err() != nil {
			return
		}
		b.mu.Lock()
		b.ended = true
		b.mu.Unlock()
	}()
	return nil
}

// joinable refuses to join batch id, going with input got, for a batch
// of input want unless it is the same batch: the same plan, and the
// same provider, seed, budgets and token pool for its runs. Whoever
// started the batch going chose them, and the items handed over are run
// with them: a batch started by another client, with the test model in
// place of the plan's or no pool, would answer for this one. (Its State
// is what it holds; its Parallel, how fast it goes, is noted by start.)
func joinable(id string, got, want BatchInput) error {
	differs := func(what, a, b string) error {
		return fmt.Errorf("temporal: batch %s is going with %s %s, and this batch's is %s: it is another batch; give this batch another --workflow-id, or let that one end first", id, what, a, b)
	}
	if what, a, b := runDiffers(got.Run, want.Run); what != "" {
		return differs(what, a, b)
	}
	switch {
	case got.Run.Pool != want.Run.Pool:
		return differs("run pool", fmt.Sprintf("%q", got.Run.Pool), fmt.Sprintf("%q", want.Run.Pool))
	case got.PoolTokens != want.PoolTokens:
		return differs("pool tokens", fmt.Sprint(got.PoolTokens), fmt.Sprint(want.PoolTokens))
	}
	return nil
}

// runDiffers names what of a run's plan, provider, seed and budgets
// differs between got and want, and the two values as they are written
// in an error; "" when they are the same.
func runDiffers(got, want RunInput) (what, g, w string) {
	budgets := func(b Budgets) string {
		j, _ := json.Marshal(b)
		return string(j)
	}
	provider := func(p string) string {
		if p == "" {
			return "the plan's own"
		}
		return fmt.Sprintf("%q", p)
	}
	switch {
	case got.Digest != want.Digest:
		return "plan", got.Digest, want.Digest
	case got.Provider != want.Provider:
		return "provider", provider(got.Provider), provider(want.Provider)
	case got.Seed != want.Seed:
		return "seed", fmt.Sprint(got.Seed), fmt.Sprint(want.Seed)
	case budgets(got.Budgets) != budgets(want.Budgets):
		return "budgets", budgets(got.Budgets), budgets(want.Budgets)
	}
	return "", "", ""
}

// sameItem refuses the run of workflow id unless it is this batch's run
// of input: started as an item of batch b.spec.ID, with the batch's plan,
// provider, seed and budgets, for input. An item's ID is named from its
// line (ItemID), so whoever may start workflows can start one under it
// before the batch does, with another input: that run's report would
// otherwise be printed as the item's. The run's input is read from the
// first event of its history, which the worker ran.
func (b *BatchClient) sameItem(ctx context.Context, id string, input []byte) error {
	ev, err := firstEvent(ctx, b.c, id, "")
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	got, err := runInputOf(id, ev)
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	foreign := func(what string) error {
		return fmt.Errorf("temporal: run %s is not this batch's run of item %s: %s; its report is not the item's (another client started a workflow under the item's ID)", id, id[strings.LastIndexByte(id, '/')+1:], what)
	}
	if got.Batch == nil || got.Batch.Workflow != b.spec.ID {
		return foreign("it was not started by batch " + b.spec.ID)
	}
	if what, g, w := runDiffers(*got, b.spec.Run); what != "" {
		return foreign(fmt.Sprintf("it runs with %s %s, and the batch's is %s", what, g, w))
	}
	ours, err := digest.CanonicalExact(input)
	if err != nil {
		return fmt.Errorf("temporal: item %s: %w", id, err)
	}
	theirs, err := digest.CanonicalExact(got.Input)
	if err != nil || !bytes.Equal(theirs, ours) {
		return foreign("it runs with another input")
	}
	return nil
}

// feed hands the batch its items, a chunk at a time, as it has room, and
// then says there are no more. Lines that are not inputs stay here: the
// batch's runner reports them.
func (b *BatchClient) feed(ctx context.Context) error {
	in, err := b.spec.Items()
	if err != nil {
		return err
	}
	defer in.Close()
	var items []BatchItem
	size, handed := 0, 0
	send := func() error {
		if len(items) == 0 {
			return nil
		}
		err := b.update(ctx, batchAdd, fmt.Sprintf("add %d-%d", items[0].Index, items[len(items)-1].Index), items)
		items, size = nil, 0
		return err
	}
	err = batch.Scan(in, b.spec.MaxLine, func(it batch.Item) error {
		if it.Err != "" {
			return nil
		}
		if b.spec.Prepare != nil {
			in, err := b.spec.Prepare(it.Input)
			if err != nil {
				return nil
			}
			it.Input = in
		}
		if len(it.Input) > maxItem {
			return nil
		}
		item := BatchItem{Index: it.Index, ID: ItemID(b.spec.ID, it.Index, it.Input), Input: it.Input}
		// An item that would take the update past chunk goes in the next:
		// an update is a chunk, or one item alone (checkAdd).
		if n := itemBytes(item); size+n > chunk && len(items) > 0 {
			if err := send(); err != nil {
				return err
			}
		}
		items = append(items, item)
		handed++
		if size += itemBytes(item); size >= chunk {
			return send()
		}
		return nil
	})
	if err == nil {
		err = send()
	}
	if err == nil {
		err = b.update(ctx, batchEnd, "end", nil)
	}
	if err == nil && b.spec.Handed != nil {
		b.spec.Handed(handed)
	}
	return err
}

// update sends an update to the batch and waits for it to complete;
// args nil for none. A batch that ended meanwhile (every item it had was
// done) is started again, and a failure tried again a few times.
func (b *BatchClient) update(ctx context.Context, name, id string, args any) error {
	var err error
	for try := range 5 {
		if try > 0 {
			select {
			case <-time.After(time.Duration(try) * time.Second):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		uo := client.UpdateWorkflowOptions{WorkflowID: b.spec.ID, UpdateName: name, UpdateID: id, WaitForStage: client.WorkflowUpdateStageCompleted}
		if args != nil {
			uo.Args = []any{args}
		}
		var h client.WorkflowUpdateHandle
		if h, err = b.c.UpdateWorkflow(ctx, uo); err == nil {
			if err = h.Get(ctx, nil); err == nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ferr := b.failed(ctx); ferr != nil {
			return ferr
		}
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			if err = b.start(ctx); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("temporal: handing batch %s its items: %w", b.spec.ID, err)
}

// failed returns the failure the batch's latest run ended with if it is
// one starting it again cannot mend (its plan refused by the workers, or
// one they cannot run), else nil.
func (b *BatchClient) failed(ctx context.Context) error {
	d, err := b.c.DescribeWorkflowExecution(ctx, b.spec.ID, "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		return nil
	}
	err = b.c.GetWorkflow(ctx, b.spec.ID, "").Get(ctx, nil)
	var app *sdktemporal.ApplicationError
	if errors.As(err, &app) && (app.Type() == ErrRefused || app.Type() == ErrPlan) {
		return fmt.Errorf("temporal: batch %s: %w", b.spec.ID, err)
	}
	return nil
}

// RunFunc returns the function that waits for an item's run, as the
// batch's runner calls it: the run the batch started for it, or that an
// earlier submission of the batch did (its report read from its
// history, its tokens served rather than paid if an earlier submission
// started it). When ctx ends, the run goes on; the item's report then
// says it was not waited for.
func (b *BatchClient) RunFunc() batch.RunFunc {
	return func(ctx context.Context, index, line int, input json.RawMessage) (*agentrt.Report, error) {
		if len(input) > maxItem {
			return nil, fmt.Errorf("the input is %d bytes, more than the %d a run's input may hold on Temporal", len(input), maxItem)
		}
		id := ItemID(b.spec.ID, index, input)
		before, err := b.await(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return notWaited(id), nil
		case err != nil:
			return nil, err
		}
		// The run of that ID may be another client's, started before this
		// batch named it.
		if err := b.sameItem(ctx, id, input); err != nil {
			if ctx.Err() != nil {
				return notWaited(id), nil
			}
			return nil, err
		}
		var rep agentrt.Report
		err = b.c.GetWorkflow(ctx, id, "").Get(ctx, &rep)
		if r := EndedReport(err); r != nil {
			// A run that failed, or was cancelled: its report is the
			// failure's details.
			rep, err = *r, nil
		} else if err == nil {
			asWritten(&rep)
		}
		if err == nil {
			// Its worker's report says what answered it.
			if err := checkReport(id, &rep, b.spec.Run.Digest, b.provider); err != nil {
				return nil, err
			}
		}
		var app *sdktemporal.ApplicationError
		switch {
		case err == nil && before:
			// Paid for when it ran, not by this submission.
			rep.UsagePaid, rep.UsageReplayed = agentrt.Usage{}, rep.Usage
			return &rep, nil
		case err == nil:
			return &rep, nil
		case ctx.Err() != nil:
			return notWaited(id), nil
		case errors.As(err, &app) && app.Type() == ErrInput:
			return nil, &agentrt.InputError{Msg: strings.TrimPrefix(app.Message(), "input: ")}
		}
		return nil, fmt.Errorf("temporal: run %s: %w", id, err)
	}
}

// await waits until the run of ID exists, and reports whether an earlier
// submission of the batch started it: that submission paid for it, even
// when the run ends only after this one began (its client interrupted,
// say), so that whether its tokens count as paid here does not depend on
// how long the run took to close.
func (b *BatchClient) await(ctx context.Context, id string) (before bool, err error) {
	wait := 100 * time.Millisecond
	for {
		d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case err == nil:
			started := d.GetWorkflowExecutionInfo().GetStartTime()
			return started != nil && started.AsTime().Before(b.since), nil
		case !errors.As(err, &nf):
			return false, fmt.Errorf("temporal: run %s: %w", id, err)
		}
		b.mu.Lock()
		fed, ended := b.fed, b.ended
		b.mu.Unlock()
		switch {
		case fed != nil && fed != errFed:
			return false, fed
		case ended && fed == errFed:
			// Look once more: the batch may have ended after the look.
			if _, err := b.c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
				continue
			}
			return false, fmt.Errorf("temporal: batch %s ended without starting run %s", b.spec.ID, id)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return false, ctx.Err()
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// Close stops handing items over and, unless ctx has ended, waits a while
// for the batch to end and for its pool's final count (nil without a
// pool).
func (b *BatchClient) Close(ctx context.Context) (*PoolState, error) {
	defer b.cancel()
	// Every item may have had its report before the batch had them all
	// (their runs existed): the batch ends once it has.
	select {
	case <-b.feedDone:
	case <-ctx.Done():
	case <-time.After(cancelWait):
	}
	b.cancel()
	<-b.feedDone
	if ctx.Err() != nil {
		return nil, nil
	}
	b.mu.Lock()
	fed := b.fed
	b.mu.Unlock()
	if fed != errFed {
		return nil, fed
	}
	wctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	var st BatchState
	if err := b.c.GetWorkflow(wctx, b.spec.ID, "").Get(wctx, &st); err != nil {
		return nil, fmt.Errorf("temporal: batch %s: %w", b.spec.ID, err)
	}
	if st.Pool == "" {
		return nil, nil
	}
	var ps PoolState
	if err := b.c.GetWorkflow(wctx, st.Pool, "").Get(wctx, &ps); err != nil {
		return nil, fmt.Errorf("temporal: the batch's token pool: %w", err)
	}
	return &ps, nil
}

// notWaited is the report of an item whose run the batch stopped waiting
// for: it goes on on the workers.
func notWaited(id string) *agentrt.Report {
	return &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone, Interrupted: true,
		Error: fmt.Sprintf("interrupted: run %s goes on on the workers; submit the batch again to collect it", id)}
}
