package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// answering is a model that answers at once, counting the calls it is
// sent by their user message.
type answering struct {
	mu    sync.Mutex
	calls map[string]int
}

// devClient starts a development server for the test and returns a
// client of it, closed when the test ends.
func devClient(t testing.TB) client.Client {
	t.Helper()
	c, err := Dial(context.Background(), devserver.Start(t).HostPort, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func (m *answering) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	m.mu.Lock()
	m.calls[req.Messages[len(req.Messages)-1].Content]++
	m.mu.Unlock()
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
		Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
}

// labelWorker dials a development server of its own and makes a worker
// allowed labelPlan's plan, whose model answers at once: the client, the
// worker (not yet polling: see poll), the model, and the plan with its
// encoding.
func labelWorker(t *testing.T) (client.Client, *Worker, *answering, *plan.Plan, []byte) {
	t.Helper()
	c := devClient(t)
	m := &answering{calls: map[string]int{}}
	p, data := labelPlan(t)
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) { return m, nil },
		Allowed: []digest.Digest{p.Digests.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	return c, w, m, p, data
}

// poll has w poll queue until the test ends.
func poll(t *testing.T, c client.Client, w *Worker, queue string) {
	t.Helper()
	tw := worker.New(c, queue, Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Stop)
}

// labelPlan is the plan of an agent that labels issue {{.n}} (its input
// takes other members too), and its encoding.
func labelPlan(t *testing.T) (*plan.Plan, []byte) {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "label",
		Model:        plan.Model{Provider: "openai", Name: "m1", MaxOutputTokens: 50},
		Instructions: "Label the issue.",
		Prompt:       "issue {{.n}}",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		Output: &plan.Output{Name: "answer", Description: "The label.", Mode: "auto", Enforce: "local", Retries: 2,
			Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"],"additionalProperties":false}`)},
		Budgets: plan.Budgets{Deadline: "5m"},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return p, data
}

// TestBatchContinuesAsNew: a batch, and its token pool, whose histories
// outgrow their bound continue as new, carrying what they hold: every
// item is run once, the pool's books come out right, and the batch
// submitted again runs nothing.
func TestBatchContinuesAsNew(t *testing.T) {
	defer func(h, p int) { maxHistory, maxPending = h, p }(maxHistory, maxPending)
	maxHistory, maxPending = 60, 200

	c, w, m, _, data := labelWorker(t)
	poll(t, c, w, "batch")
	const n = 25
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, "{\"n\": %d}\n", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	submit := func() *BatchClient {
		b, err := SubmitBatch(ctx, c, data, BatchSpec{ID: "cont", Parallel: 3, PoolTokens: 100_000,
			Items: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(lines.String())), nil }},
			SubmitOptions{TaskQueue: "batch"})
		if err != nil {
			t.Fatal(err)
		}
		run := b.RunFunc()
		for i := range n {
			input := json.RawMessage(fmt.Sprintf(`{"n": %d}`, i))
			rep, err := run(ctx, i, i+1, input)
			if err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
			if rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"bug"}` {
				t.Fatalf("item %d: %s %s %s", i, rep.Outcome, rep.Answer, rep.Error)
			}
		}
		return b
	}
	b := submit()
	pool, err := b.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PoolState{Tokens: 100_000, Spent: n * 25}); pool == nil || *pool != want {
		t.Errorf("the pool at its end: %+v; want %+v", pool, want)
	}
	for i := range n {
		if got := m.calls[fmt.Sprintf("issue %d", i)]; got != 1 {
			t.Errorf("item %d: its model call was made %d times", i, got)
		}
	}
	// The batch and its pool each continued as new, more than once, and
	// every run's history replays as workflow code: deterministic.
	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflow(replayer)
	for _, id := range []string{"cont", "cont/pool"} {
		runs := chain(ctx, t, c, id)
		if len(runs) < 3 {
			t.Errorf("%s had %d runs; want it to continue as new more than once", id, len(runs))
		}
		for _, run := range runs {
			if err := replay(ctx, t, c, replayer, id, run); err != nil {
				t.Errorf("replaying %s run %s: %v", id, run, err)
			}
		}
	}
	var st BatchState
	if err := c.GetWorkflow(ctx, "cont", "").Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if st.Started+st.Existing != n || st.Existing != 0 {
		t.Errorf("the batch's count at its end: %d started, %d existing; want %d started", st.Started, st.Existing, n)
	}

	// Submitted again, the batch finds every item's run and runs none.
	b = submit()
	if _, err := b.Close(ctx); err != nil {
		it := c.GetWorkflowHistory(ctx, "cont", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, _ := it.Next()
			t.Log(ev.GetEventId(), ev.GetEventType())
		}
		q, qerr := c.QueryWorkflow(ctx, "cont", "", batchState)
		var st BatchState
		if qerr == nil {
			qerr = q.Get(&st)
		}
		t.Logf("state %+v %v", st, qerr)
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, "cont", "").Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if st.Existing != n {
		t.Errorf("submitted again, the batch found %d runs existing; want %d", st.Existing, n)
	}
	for i := range n {
		if got := m.calls[fmt.Sprintf("issue %d", i)]; got != 1 {
			t.Errorf("item %d: its model call was made %d times", i, got)
		}
	}
}

// chain returns the run IDs of a workflow, from its latest back through
// the runs it continued.
func chain(ctx context.Context, t *testing.T, c client.Client, id string) []string {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	runs := []string{d.GetWorkflowExecutionInfo().GetExecution().GetRunId()}
	for {
		it := c.GetWorkflowHistory(ctx, id, runs[len(runs)-1], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		prev := ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return runs
		}
		runs = append(runs, prev)
	}
}

// TestBatchBounds: a batch started by a client of its own asking more
// runs at once than a batch runs, or with a state its first run cannot
// carry (items never handed over through the add update), fails at once,
// never retried, naming why, and starts no run: past 2,000 children going
// the server refuses the batch's task, which was tried again for ever.
func TestBatchBounds(t *testing.T) {
	c, w, m, p, data := labelWorker(t)
	poll(t, c, w, "bounds")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := RunInput{Plan: data, Digest: string(p.Digests.Plan)}
	var pending []BatchItem
	for i := range 3 {
		pending = append(pending, BatchItem{Index: i, ID: fmt.Sprintf("elsewhere/%d", i), Input: json.RawMessage(fmt.Sprintf(`{"n": %d}`, i))})
	}
	for _, c2 := range []struct {
		id   string
		in   BatchInput
		want string
	}{
		{"wide", BatchInput{Run: run, Parallel: 5000}, "parallel is 5000, more than the 1024 runs a batch runs at once"},
		{"stated", BatchInput{Run: run, Parallel: 2, State: &BatchState{Digest: run.Digest, Ended: true, Pending: pending}},
			"the batch was started with a state: only a batch that continued as new carries one"},
	} {
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: c2.id, TaskQueue: "bounds"}, BatchWorkflow, c2.in)
		if err != nil {
			t.Fatal(err)
		}
		// A refusal is at once: a batch let go of waits for its items.
		gctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = wr.Get(gctx, nil)
		cancel()
		var app *sdktemporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != ErrRefused || !app.NonRetryable() || !strings.Contains(app.Message(), c2.want) {
			t.Errorf("batch %s: %v; want a refusal, never retried, that says %q", c2.id, err, c2.want)
		}
		it := c.GetWorkflowHistory(ctx, c2.id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil || ev.GetWorkflowTaskFailedEventAttributes() != nil {
				t.Errorf("batch %s: event %d is %s", c2.id, ev.GetEventId(), ev.GetEventType())
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.calls); n != 0 {
		t.Errorf("the model was called for %d inputs", n)
	}
}

// held is a model whose calls wait until released, counting the most
// in flight at once and the calls made by their user message.
type held struct {
	mu          sync.Mutex
	in, most    int
	calls       map[string]int
	started     chan string
	releaseOnce sync.Once
	release     chan struct{}
}

func (m *held) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	msg := req.Messages[len(req.Messages)-1].Content
	m.mu.Lock()
	m.in++
	m.most = max(m.most, m.in)
	m.calls[msg]++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.in--
		m.mu.Unlock()
	}()
	m.started <- msg
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
		Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
}

// TestBatchForgedDone: any client may send a batch the done signal its
// runs send as they end. A forged one for each run going had the batch
// start runs past its parallel (and, sent on, past the server's bound on
// a workflow's children going, which failed its task for ever). A run is
// now counted ended only once the batch knows it closed: its child's
// future, or, for a run an earlier run of the batch started (the batch
// continues as new here while its runs go), the server's description of
// it. Every item still runs once, and every run of the batch replays.
func TestBatchForgedDone(t *testing.T) {
	defer func(h int) { maxHistory = h }(maxHistory)
	maxHistory = 40

	c := devClient(t)
	m := &held{calls: map[string]int{}, started: make(chan string, 16), release: make(chan struct{})}
	defer m.releaseOnce.Do(func() { close(m.release) })
	p, data := labelPlan(t)
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) { return m, nil },
		Allowed: []digest.Digest{p.Digests.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, c, w, "forged")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 6
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, "{\"n\": %d}\n", i)
	}
	b, err := SubmitBatch(ctx, c, data, BatchSpec{ID: "forged", Parallel: 2,
		Items: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(lines.String())), nil }},
		SubmitOptions{TaskQueue: "forged"})
	if err != nil {
		t.Fatal(err)
	}
	// Two runs going, each in its model call.
	for range 2 {
		select {
		case <-m.started:
		case <-ctx.Done():
			t.Fatal("the batch's runs did not call the model")
		}
	}
	state := func() BatchState {
		t.Helper()
		v, err := c.QueryWorkflow(ctx, "forged", "", batchState)
		if err != nil {
			t.Fatal(err)
		}
		var st BatchState
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	// sync returns once the batch has taken every signal sent before it:
	// an update is given to the batch after them.
	sync := func() {
		t.Helper()
		for {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "forged", UpdateName: batchAdd,
				Args: []any{[]BatchItem{}}, WaitForStage: client.WorkflowUpdateStageCompleted})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			if err == nil {
				return
			}
			if ctx.Err() != nil { // the batch continuing as new: ask its next run
				t.Fatal(err)
			}
		}
	}
	sync()
	going := state().Running
	if len(going) != 2 {
		t.Fatalf("the batch has %d runs going; want 2", len(going))
	}
	for round := range 8 {
		for _, id := range going {
			if err := c.SignalWorkflow(ctx, "forged", "", batchDone, id); err != nil {
				t.Fatal(err)
			}
		}
		sync()
		if st := state(); !slices.Equal(st.Running, going) {
			t.Fatalf("round %d: after forged done signals the batch has runs %q going; want %q, which have not ended", round, st.Running, going)
		}
	}
	if runs := chain(ctx, t, c, "forged"); len(runs) < 2 {
		t.Errorf("the batch had %d runs; want it to continue as new while its runs went", len(runs))
	}

	m.releaseOnce.Do(func() { close(m.release) })
	go func() { // the rest of the calls
		for range m.started {
		}
	}()
	run := b.RunFunc()
	for i := range n {
		rep, err := run(ctx, i, i+1, json.RawMessage(fmt.Sprintf(`{"n": %d}`, i)))
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			t.Fatalf("item %d: %v %+v", i, err, rep)
		}
	}
	if _, err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.most > 2 {
		t.Errorf("%d model calls went at once; want at most the batch's parallel, 2", m.most)
	}
	for i := range n {
		if got := m.calls[fmt.Sprintf("issue %d", i)]; got != 1 {
			t.Errorf("item %d: its model call was made %d times", i, got)
		}
	}
	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflow(replayer)
	for _, run := range chain(ctx, t, c, "forged") {
		if err := replay(ctx, t, c, replayer, "forged", run); err != nil {
			t.Errorf("replaying forged run %s: %v", run, err)
		}
	}
}

// replay replays the history of run run of workflow id as workflow code.
// It is replayed as a history, in the replayer's own namespace, where a
// local activity (a batch's agentc.closed) is read from its marker
// without being registered.
func replay(ctx context.Context, t *testing.T, c client.Client, replayer worker.WorkflowReplayer, id, run string) error {
	t.Helper()
	var h historypb.History
	it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return replayer.ReplayWorkflowHistoryWithOptions(nil, &h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: run}})
}

// TestBatchAddBounds: a client's add update holding an item past what a
// run's input may hold, or items past what one update may carry, is
// refused before the batch takes it, and the batch goes on: an item of
// 2 MiB was taken, and the server, its acceptance past its bound,
// terminated the batch. An item of the largest size a run takes is
// taken.
func TestBatchAddBounds(t *testing.T) {
	c, w, _, p, data := labelWorker(t)
	poll(t, c, w, "adds")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "adds", TaskQueue: "adds"}, BatchWorkflow,
		BatchInput{Run: RunInput{Plan: data, Digest: string(p.Digests.Plan)}, Parallel: 1}); err != nil {
		t.Fatal(err)
	}
	item := func(i, n int) BatchItem { // an input of n bytes: a JSON string
		return BatchItem{Index: i, ID: fmt.Sprintf("adds/%06d-x", i), Input: json.RawMessage(`"` + strings.Repeat("a", n-2) + `"`)}
	}
	add := func(items []BatchItem) error {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "adds", UpdateName: batchAdd,
			Args: []any{items}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		return err
	}
	for _, c2 := range []struct {
		what  string
		items []BatchItem
		want  string
	}{
		{"an item past a run's input", []BatchItem{item(1, maxItem+1)}, fmt.Sprintf("item 1: its input is %d bytes, more than the %d", maxItem+1, maxItem)},
		{"two items of 950 KiB", []BatchItem{item(2, 950<<10), item(3, 950<<10)}, fmt.Sprintf("2 items of %d bytes in one update, more than the %d", 2*(950<<10+len("adds/000002-x")+itemOverhead), maxAdd)},
	} {
		if err := add(c2.items); err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s: %v; want a refusal that says %q", c2.what, err, c2.want)
		}
	}
	// An update so near the server's bound that its refusal, which
	// carries it back, is past the bound too fails the batch's task: the
	// server drops the update, and the batch goes on.
	if err := add([]BatchItem{item(0, 2<<20-110)}); err == nil {
		t.Errorf("an item of 2 MiB was taken")
	}
	if err := add([]BatchItem{item(4, maxItem)}); err != nil {
		t.Errorf("an item of %d bytes, the most a run takes: %v", maxItem, err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, "adds", "")
	if err != nil {
		t.Fatal(err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the batch is %s; want it running", st)
	}
	if err := c.TerminateWorkflow(ctx, "adds", "", "done"); err != nil {
		t.Fatal(err)
	}
}
