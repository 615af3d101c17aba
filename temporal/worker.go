package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	nethttp "net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/telemetry"
)

// ModelCall is what a worker's ModelFor is asked for a model for.
type ModelCall struct {
	// Plan is the plan whose calls the model serves: the run's own, or a
	// fallback or a called agent of it.
	Plan *plan.Plan
	// Run is the run's own plan.
	Run *plan.Plan
	// Provider is the provider the run names in place of the plan's: ""
	// for the plan's own, "test" for the test model (a worker runs no
	// other).
	Provider string
	// Seed is the test model's seed.
	Seed int64
	// Secrets is the set the calls' results are redacted with, to which
	// the model adds each credential it sends (those a provider obtains
	// while it serves, such as OAuth tokens, included) before a request
	// carries it.
	Secrets *redact.Set
}

// WorkerOptions are what a worker runs plans with.
type WorkerOptions struct {
	// ModelFor returns the model a plan's calls go to (ModelCall says
	// which). Required.
	ModelFor func(ModelCall) (agentrt.Model, error)
	// Dir is what relative paths in tools resolve against (a called
	// agent's, against its own directory below it).
	Dir string
	// Allowed are the plan digests of the plans the worker runs. A run or
	// batch of any other plan fails before any effect, never retried,
	// with an error (type ErrRefused) that names its digest. A caller's
	// digest covers the agents it calls. NewWorker refuses a worker that
	// allows nothing unless AllowAnyPlan is set.
	Allowed []digest.Digest
	// AllowAnyPlan runs whatever plan a client sends: any program, as the
	// worker's user, for anyone who can start a workflow on its task
	// queue. For development on a server no one else reaches.
	AllowAnyPlan bool
	// Secrets are the secret values the worker read (provider keys):
	// redacted from everything a run sends, records and reports. A plan
	// whose tool's env would hand one to a program is refused, as is one
	// naming a key variable (plan.KeyVars).
	Secrets []string
	// Events, when set, receives the events of the runs this worker
	// advances (a workflow replayed on another worker emits there).
	Events func(agentrt.Event)
	// HTTPTransport, when set, carries http tools' requests.
	HTTPTransport nethttp.RoundTripper
	// Rules, when set, wraps the approver of runs: what it decides, a
	// run's workflow does not wait for a signal about. agentc passes
	// approval.Rules, which evaluates a tool's approve_if (CUE, which this
	// package does not link). It runs in workflow code, so it must decide
	// the same way every time it is given the same call.
	Rules func(next agentrt.Approver) agentrt.Approver
	// Files, when set, is the file store runs' files are read from: a
	// directory every worker of the task queue can read, which clients
	// put files in (agentc's AGENTC_FILES). A workflow's input names
	// files by digest only, never holds their bytes. The store is read
	// in workflow code to check a file's type and size, which is the same
	// every time as long as the file is there: blobs are named by their
	// content and never change. Runs whose input names files, and tools
	// that return files, need one.
	Files *filestore.Store
	// Telemetry, when set, records the runs this worker advances as
	// spans and metrics (telemetry.WorkflowRecorder): a run replayed on
	// another worker goes on in the same trace there, and what a replay
	// goes over again is neither exported nor counted twice. Its tracer
	// provider must draw IDs as package telemetry/otlp's does
	// (otlp.TracerOptions).
	Telemetry *telemetry.Telemetry
}

// Worker serves runs: the run workflow and the activities that make its
// effects. Register it on a Temporal worker; Close it when the worker
// has stopped. Its activities make calls only for runs started on their
// own task queue: register the workflow and the activities on workers of
// the same queue.
type Worker struct {
	opts    WorkerOptions
	client  client.Client
	allowed map[digest.Digest]bool
	// life ends when the worker closes (end): the tools' mcp servers
	// still starting then are given up, their processes killed.
	life context.Context
	end  context.CancelFunc

	// What the worker keeps of the runs it served is bounded, whatever
	// its clients start: runs and batches are read again from their
	// histories once let go (maxRuns, maxBatches), plans are kept once
	// each (maxPlans), agents' models made again (maxBuilt), and agents'
	// tools, which may hold processes (mcp servers), are made once a
	// plan, whatever seed a run names for the test model.
	mu      sync.Mutex
	runs    map[string]*workerRun        // by workflow and run ID
	plans   map[digest.Digest]*plan.Plan // the runs' plans, each once
	built   map[string]*builtAgent       // by plan digest, provider, seed and agent path
	tools   map[string]*builtTools       // by plan digest, provider and agent path
	batches map[BatchRef]json.RawMessage // the plans of batches, by the batch run whose input holds it
	pools   map[string]bool              // the token pools checked as their batch's (checkPoolStart)
	search  searchSet                    // the search attributes registered (CheckSearchAttributes)
}

// The most runs, plans, batches' plans and agents' models a worker keeps;
// past them, one kept is let go for each new one. (Variables for tests.)
var (
	maxRuns    = 4096
	maxPlans   = 256
	maxBatches = 64
	maxBuilt   = 1024
)

// keep puts v in m under k, letting go of another entry when m holds max
// already: what is let go is read again when needed.
func keep[K comparable, V any](m map[K]V, k K, v V, max int) {
	if _, ok := m[k]; !ok && len(m) >= max {
		for other := range m {
			delete(m, other)
			break
		}
	}
	m[k] = v
}

// workerRun is what a worker knows of a run it makes effects for: its
// plan, and of its input what the effects need (not the input itself,
// nor the plan's text).
type workerRun struct {
	plan     *plan.Plan
	provider string // RunInput.Provider
	seed     int64  // RunInput.Seed
	pool     string // RunInput.Pool
	// queue is the task queue the run's workflow was started on.
	queue string
}

// builtAgent is one agent's model and tools on this worker, shared by
// the runs of its plan.
type builtAgent struct {
	once  sync.Once
	model agentrt.Model
	// fallbacks are the models of the plan's fallbacks, in order, and
	// fallbackProviders their providers.
	fallbacks         []agentrt.Model
	fallbackProviders []string
	provider          string      // the provider its calls go to, which counts their tokens
	kit               *builtTools // its tools, shared with the other seeds' models
	secrets           *redact.Set // the kit's
	err               error
}

// builtTools is one agent's tools on this worker, shared by the runs of
// its plan, and by the models made for them (builtAgent): built once,
// closed with the worker.
type builtTools struct {
	once    sync.Once
	tools   map[string]agentrt.Tool
	close   func() error
	servers map[string]tool.ServerRecord
	secrets *redact.Set // the worker's, and the tools'
	err     error
	// begun says the build has begun, and done is closed once it has
	// ended: Close waits for it.
	begun atomic.Bool
	done  chan struct{}
}

// fail is the failure, never retried, of an activity that could not build
// the agent: its message redacted of the worker's secrets and its tools'.
func (b *builtAgent) fail(err error) error {
	return sdktemporal.NewNonRetryableApplicationError(b.secrets.String(err.Error()), ErrPlan, nil)
}

// buildFailed is the failure of an activity that could not build the
// agent: never retried (fail), but where the worker closing gave up the
// build, which another worker makes.
func (w *Worker) buildFailed(b *builtAgent, err error) error {
	if w.life.Err() != nil {
		return errors.New(b.secrets.String("the worker stopped while it built the agent's tools: " + err.Error()))
	}
	return b.fail(err)
}

// NewWorker returns a Worker whose activities read runs' plans through c.
func NewWorker(c client.Client, opts WorkerOptions) (*Worker, error) {
	if opts.ModelFor == nil {
		return nil, errors.New("temporal: a worker needs ModelFor")
	}
	if len(opts.Allowed) == 0 && !opts.AllowAnyPlan {
		return nil, errors.New("temporal: a worker needs the plans it may run (WorkerOptions.Allowed), or AllowAnyPlan")
	}
	life, end := context.WithCancel(context.Background())
	return &Worker{opts: opts, client: c, allowed: allowSet(opts.Allowed), life: life, end: end, runs: map[string]*workerRun{}, plans: map[digest.Digest]*plan.Plan{}, built: map[string]*builtAgent{}, tools: map[string]*builtTools{}, batches: map[BatchRef]json.RawMessage{}, pools: map[string]bool{}}, nil
}

// Options returns the options of a Temporal worker that serves agentc's
// runs. A workflow task may take a while on a loaded machine (the first
// compiles the plan's schemas and builds its tools' specs), longer than
// the SDK's default of a second before it calls a task deadlocked.
func Options() worker.Options {
	return worker.Options{DeadlockDetectionTimeout: 30 * time.Second}
}

// Register registers the run workflow and its activities on r.
func (w *Worker) Register(r worker.Registry) {
	w.RegisterWorkflow(r)
	w.RegisterActivities(r)
}

// RegisterActivities registers the activities alone, for a worker that
// leaves the workflows to others of its queue.
func (w *Worker) RegisterActivities(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(w.effect, activity.RegisterOptions{Name: ModelActivity})
	r.RegisterActivityWithOptions(w.effect, activity.RegisterOptions{Name: ToolActivity})
	r.RegisterActivityWithOptions(w.effect, activity.RegisterOptions{Name: EffectActivity})
	r.RegisterActivityWithOptions(w.servers, activity.RegisterOptions{Name: ServersActivity})
	r.RegisterActivityWithOptions(w.planLocal, activity.RegisterOptions{Name: planActivity})
	r.RegisterActivityWithOptions(w.closedLocal, activity.RegisterOptions{Name: closedActivity})
}

// RegisterWorkflow registers the run workflow alone, as a replayer of
// histories needs it.
func (w *Worker) RegisterWorkflow(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(w.run, workflow.RegisterOptions{Name: Workflow})
	r.RegisterWorkflowWithOptions(w.pool, workflow.RegisterOptions{Name: PoolWorkflow})
	r.RegisterWorkflowWithOptions(w.batch, workflow.RegisterOptions{Name: BatchWorkflow})
}

// Close closes what the worker's activities started: mcp servers, tool
// processes. The servers still starting are given up, and waited for
// until their processes are gone: a worker stopped while an activity
// started one (the activity does not wait for it) had it go on after
// the worker exited.
func (w *Worker) Close() error {
	w.end()
	w.mu.Lock()
	tools := w.tools
	w.built, w.tools = map[string]*builtAgent{}, map[string]*builtTools{}
	w.mu.Unlock()
	var errs []error
	for _, t := range tools {
		if !t.begun.Load() {
			continue
		}
		<-t.done
		if t.close != nil {
			errs = append(errs, t.close())
		}
	}
	return errors.Join(errs...)
}

// effect is the effect activity: it makes the call on this worker, with
// the model and tools of the agent the effect belongs to, heartbeating
// while the call lasts.
func (w *Worker) effect(ctx context.Context, in EffectInput) (EffectResult, error) {
	run, err := w.runOf(ctx)
	if err != nil {
		return EffectResult{}, err
	}
	b, err := w.agent(ctx, run, in.Effect.Agent)
	if err != nil {
		return EffectResult{}, w.buildFailed(b, err)
	}
	// Each attempt heartbeats the attempts made before it and its own,
	// so that the next attempt, should this one's worker be lost, knows
	// them: the history keeps no event of an attempt that did not
	// complete.
	started := time.Now()
	var lost []journal.Attempt
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &lost); err != nil {
			lost = nil
		}
	}
	stop := heartbeat(ctx, append(slices.Clip(lost), journal.Attempt{Attempt: int(activity.GetInfo(ctx).Attempt), Started: started.UTC()}))
	defer stop()
	model, provider := b.model, b.provider
	if n := in.Effect.Fallback; in.Effect.Model != nil && n != 0 {
		if n < 0 || n > len(b.fallbacks) {
			return EffectResult{}, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("effect %s: the run has no fallback model %d", in.Effect.Key, n), ErrPlan, nil)
		}
		model, provider = b.fallbacks[n-1], b.fallbackProviders[n-1]
	}
	settle := func(int64) {}
	if run.pool != "" && in.Effect.Model != nil {
		info := activity.GetInfo(ctx)
		settle, err = w.reserveCall(ctx, run.pool, info.WorkflowExecution.ID+"/"+in.Effect.Key, info.Attempt, provider, in.Effect.Model)
		var pe *agentrt.PoolError
		switch {
		case errors.As(err, &pe):
			return EffectResult{Error: pe.Error(), Pool: true, Started: started.UTC(), Lost: lost}, nil
		case err != nil:
			return EffectResult{}, err // Temporal tries the call again
		}
	}
	if fs := w.opts.Files; fs != nil {
		// The request's files are read from the store; a tool's go there.
		ctx = agentrt.WithFileStore(ctx, fs)
		if in.Effect.Model != nil {
			in.Effect.Model.Files = fs
		}
	}
	resp, err := agentrt.Perform(ctx, &in.Effect, model, b.kit.tools, b.secrets)
	if in.Effect.Model != nil {
		// Settled to what the run charges the call (CountedUsage): a
		// reply's usage where it is plausible, else the estimate, and the
		// attempts the provider answered and lost. Settled to the usage
		// a reply reported, a provider that reports none spent none of
		// the pool.
		settle(int64(agentrt.CountedUsage(in.Effect.Model, replyOf(resp, err), err).Total()))
	}
	res := EffectResult{Response: resp, Started: started.UTC(), DurationMS: time.Since(started).Milliseconds(), Lost: lost}
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			// The activity was cancelled or its worker is stopping: no
			// outcome to record.
			return EffectResult{}, ctx.Err()
		}
		res.Response = nil
		res.Error = b.secrets.String(err.Error())
		res.Deadline = errors.Is(err, context.DeadlineExceeded)
		if in.Effect.Model != nil {
			res.Class = agentrt.FailureClassOf(err)
			if spent := agentrt.SpentOf(err); spent != (agentrt.Usage{}) {
				res.Spent = &spent
			}
			if r := agentrt.RetriedOf(err); r.Attempts > 0 {
				res.Retried = &r
			}
		}
	}
	return res, nil
}

// servers is the servers activity: it starts the run's mcp servers on
// this worker and returns the tools each offers, by server path.
func (w *Worker) servers(ctx context.Context) (map[string]tool.ServerRecord, error) {
	// A server may take longer to start than heartbeatTimeout (its start
	// is given up to 30 s): silent so long, the activity was taken for
	// lost with its worker and given to a worker again.
	stop := heartbeat(ctx, nil)
	defer stop()
	run, err := w.runOf(ctx)
	if err != nil {
		return nil, err
	}
	b, err := w.agent(ctx, run, "")
	if err != nil {
		return nil, w.buildFailed(b, err)
	}
	return b.kit.servers, nil
}

// heartbeat records the activity's heartbeat, with details, at once and
// until stopped, so that a worker lost during a long call is noticed
// within heartbeatTimeout.
func heartbeat(ctx context.Context, details any) (stop func()) {
	done := make(chan struct{})
	activity.RecordHeartbeat(ctx, details)
	go func() {
		t := time.NewTicker(heartbeatTimeout / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, details)
			}
		}
	}()
	return func() { close(done) }
}

// runOf returns the run an activity belongs to, reading its workflow's
// input from the history the first time. An activity makes a call only
// for agentc's run workflow started on the task queue the activity came
// from: a workflow's code is run by whoever polls the task queue it was
// started on, and a client that runs a worker of its own, on a queue of
// its own, under agentc's workflow type, could otherwise schedule calls
// of its own writing on agentc's queue (no approval asked, no budget
// counted, a model request of its choosing sent with the worker's key).
func (w *Worker) runOf(ctx context.Context) (*workerRun, error) {
	info := activity.GetInfo(ctx)
	exec := info.WorkflowExecution
	id := exec.ID + "\x00" + exec.RunID
	w.mu.Lock()
	run, ok := w.runs[id]
	w.mu.Unlock()
	if !ok {
		var err error
		if run, err = w.readRun(ctx, exec.ID, exec.RunID, info.TaskQueue); err != nil {
			return nil, err
		}
		w.mu.Lock()
		keep(w.runs, id, run, maxRuns)
		w.mu.Unlock()
	}
	// A Worker registered on workers of several queues: each activity's
	// own queue is the one its run must have been started on.
	if err := checkQueue(exec.ID, run.queue, info.TaskQueue); err != nil {
		return nil, err
	}
	return run, nil
}

// readRun reads the run of workflow ID and run runID from the first event
// of its history, for an activity that came from task queue queue, and
// checks it before anything of it is built: agentc's run workflow, on
// queue, of a plan this worker runs.
func (w *Worker) readRun(ctx context.Context, workflowID, runID, queue string) (*workerRun, error) {
	ev, err := firstEvent(ctx, w.client, workflowID, runID)
	if err != nil {
		return nil, err
	}
	started := ev.GetWorkflowExecutionStartedEventAttributes()
	if t := started.GetWorkflowType().GetName(); started == nil || t != Workflow {
		return nil, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("workflow %s is a %s, not an agentc run (%s): this worker makes calls only for runs of agentc's workflow", workflowID, t, Workflow), ErrRefused, nil)
	}
	if err := checkQueue(workflowID, started.GetTaskQueue().GetName(), queue); err != nil {
		return nil, err
	}
	in, err := runInputOf(workflowID, ev)
	if err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrPlan, nil)
	}
	if in.Batch != nil {
		parent := started.GetParentWorkflowExecution()
		if err := checkBatchParent(in.Batch, parent.GetWorkflowId(), parent.GetRunId()); err != nil {
			return nil, err
		}
		if in.Plan, err = w.batchPlan(ctx, *in.Batch, in.Digest); err != nil {
			return nil, err
		}
	}
	if in.Plan, err = planJSON(in.Plan); err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrPlan, nil)
	}
	p, err := plan.Read("the workflow's plan", in.Plan)
	if err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), ErrPlan, nil)
	}
	// The workflow checked the plan before it scheduled this activity;
	// the activity reads the plan from the history itself, and checks
	// again what it is about to run, and with which models.
	if err := w.checkPlan(p); err != nil {
		return nil, err
	}
	if err := checkProvider(p, in.Provider); err != nil {
		return nil, err
	}
	if err := w.checkPoolWorkflow(ctx, in, queue); err != nil {
		return nil, err
	}
	// Runs of one plan share it.
	w.mu.Lock()
	if kept, ok := w.plans[p.Digests.Plan]; ok {
		p = kept
	} else {
		keep(w.plans, p.Digests.Plan, p, maxPlans)
	}
	w.mu.Unlock()
	return &workerRun{plan: p, provider: in.Provider, seed: in.Seed, pool: in.Pool, queue: queue}, nil
}

// checkProvider refuses, never retried, a run whose client names a
// provider to answer in place of its plan's (RunInput.Provider): the
// worker would send that provider's key, which the plan its operator
// allowed never names, for requests made for another model (and its
// called agents' too). The test model, which needs no key, answers for
// any plan. A run against another model is a plan of its own (agentc run
// --model PROVIDER:MODEL makes it), which the operator allows by its
// digest.
func checkProvider(p *plan.Plan, provider string) error {
	if provider == "" || provider == "test" {
		return nil
	}
	return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"this worker runs plan %s (agent %q) against the models it names, or the test model, not provider %q: a run against another model is a plan of its own (agentc run --model PROVIDER:MODEL makes it), which the worker's operator allows by its digest",
		p.Digests.Plan, p.Agent.Name, provider), ErrRefused, nil)
}

// checkPoolWorkflow refuses, never retried, a run whose token pool is not
// its batch's (checkPool), or is a workflow of that ID that is not
// agentc's pool started on queue (one started under the pool's ID before
// the batch, which the batch then shares): an update sent there is never
// answered.
func (w *Worker) checkPoolWorkflow(ctx context.Context, in *RunInput, queue string) error {
	if in.Pool == "" {
		return nil
	}
	if err := checkPool(in); err != nil {
		return err
	}
	d, err := w.client.DescribeWorkflowExecution(ctx, in.Pool, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("the run's token pool %s is no workflow", in.Pool), ErrRefused, nil)
	case err != nil:
		return fmt.Errorf("the run's token pool %s: %w", in.Pool, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if t, q := info.GetType().GetName(), info.GetTaskQueue(); t != PoolWorkflow || q != queue {
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run's token pool %s is a %s on task queue %q, not agentc's token pool (%s) on this worker's (%q): its calls reserve only there", in.Pool, t, q, PoolWorkflow, queue), ErrRefused, nil)
	}
	key := in.Pool + "\x00" + info.GetFirstRunId() + "\x00" + in.Batch.Workflow + "\x00" + in.Batch.Run
	w.mu.Lock()
	checked := w.pools[key]
	w.mu.Unlock()
	if checked {
		return nil
	}
	if err := w.checkPoolStart(ctx, in, info.GetFirstRunId()); err != nil {
		return err
	}
	w.mu.Lock()
	keep(w.pools, key, true, maxBatches)
	w.mu.Unlock()
	return nil
}

// checkPoolStart refuses, never retried, a run whose token pool was not
// started by its batch, for the batch's tokens, as the first run of the
// pool's workflow (firstRun) says: another client can start agentc's pool
// under a batch's pool ID before the batch, with a count of its own (one
// token, and every call waits until its run's deadline), and the batch
// then shares it. A child's parent is set by the server, not by whoever
// asks it to start a workflow.
func (w *Worker) checkPoolStart(ctx context.Context, in *RunInput, firstRun string) error {
	ev, err := firstEvent(ctx, w.client, in.Pool, firstRun)
	if err != nil {
		return fmt.Errorf("the run's token pool: %w", err)
	}
	var pin PoolInput
	if err := inputOf(in.Pool, ev, PoolWorkflow, "token pool", &pin); err != nil {
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("the run's token pool: %v", err), ErrRefused, nil)
	}
	bin, err := ReadBatchInput(ctx, w.client, in.Batch.Workflow, in.Batch.Run)
	if err != nil {
		return fmt.Errorf("the run's batch: %w", err)
	}
	refuse := func(why string) error {
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run's token pool %s %s: a run's calls reserve only in the pool its batch started", in.Pool, why), ErrRefused, nil)
	}
	switch parent := ev.GetWorkflowExecutionStartedEventAttributes().GetParentWorkflowExecution().GetWorkflowId(); {
	case parent == "":
		return refuse("was started by a client, not by batch " + in.Batch.Workflow)
	case parent != in.Batch.Workflow:
		return refuse(fmt.Sprintf("was started by %s, not by batch %s", parent, in.Batch.Workflow))
	case pin.Carry != nil:
		return refuse("was started with the books of another pool")
	case pin.Tokens != bin.PoolTokens:
		return refuse(fmt.Sprintf("was started with %d tokens, and the batch's pool has %d", pin.Tokens, bin.PoolTokens))
	}
	return nil
}

// checkQueue refuses, never retried, an activity that came from task
// queue queue for a run workflow started on another, started: that
// workflow's code is whatever its own queue's pollers run, not agentc's.
func checkQueue(workflowID, started, queue string) error {
	if started == queue {
		return nil
	}
	return sdktemporal.NewNonRetryableApplicationError(
		fmt.Sprintf("workflow %s was started on task queue %q, not on this worker's (%q): this worker makes calls only for runs started on its own task queue, whose workflow code its own queue's workers run", workflowID, started, queue),
		ErrRefused, nil)
}

// ReadInput reads a run workflow's input from its history.
func ReadInput(ctx context.Context, c client.Client, workflowID, runID string) (*RunInput, error) {
	ev, err := firstEvent(ctx, c, workflowID, runID)
	if err != nil {
		return nil, err
	}
	return runInputOf(workflowID, ev)
}

// firstEvent reads the first event of a workflow's history.
func firstEvent(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.HistoryEvent, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, fmt.Errorf("workflow %s has no history", workflowID)
	}
	ev, err := it.Next()
	if err != nil {
		return nil, fmt.Errorf("workflow %s: reading its history: %w", workflowID, err)
	}
	return ev, nil
}

// batchPlan returns the plan of a batch's runs, read from the input of
// the batch run that started them, once on this worker; it must be the
// plan of digest.
func (w *Worker) batchPlan(ctx context.Context, ref BatchRef, digest string) (json.RawMessage, error) {
	w.mu.Lock()
	data, ok := w.batches[ref]
	w.mu.Unlock()
	if !ok {
		var err error
		if data, err = BatchPlan(ctx, w.client, ref, digest); err != nil {
			return nil, err
		}
		w.mu.Lock()
		keep(w.batches, ref, data, maxBatches)
		w.mu.Unlock()
	}
	return data, nil
}

// planLocal is the local activity planActivity: the plan of a batch's
// run, read by the run's workflow on this worker. It is registered as
// activities are, so it refuses to be scheduled as an activity by some
// other workflow.
func (w *Worker) planLocal(ctx context.Context, ref BatchRef, digest string) (json.RawMessage, error) {
	if !activity.GetInfo(ctx).IsLocalActivity {
		return nil, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s is a local activity of agentc's run workflow, not one a workflow schedules", planActivity), ErrRefused, nil)
	}
	return w.batchPlan(ctx, ref, digest)
}

// closedLocal is the local activity closedActivity: of the runs ids of
// batch batchID, those that have closed, as the server describes them. A
// run whose ID now holds a workflow the batch did not start (another
// client's, started once the batch's closed), or none (its history let
// go), is closed too.
func (w *Worker) closedLocal(ctx context.Context, batchID string, ids []string) ([]string, error) {
	if !activity.GetInfo(ctx).IsLocalActivity {
		return nil, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s is a local activity of agentc's batch workflow, not one a workflow schedules", closedActivity), ErrRefused, nil)
	}
	var closed []string
	for _, id := range ids {
		d, err := w.client.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			closed = append(closed, id)
		case err != nil:
			return nil, fmt.Errorf("run %s: %w", id, err)
		default:
			info := d.GetWorkflowExecutionInfo()
			if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetParentExecution().GetWorkflowId() != batchID {
				closed = append(closed, id)
			}
		}
	}
	return closed, nil
}

// BatchPlan reads the plan of a batch's runs from the input of the batch
// run that started them; it must be the plan of digest.
func BatchPlan(ctx context.Context, c client.Client, ref BatchRef, digest string) (json.RawMessage, error) {
	in, err := ReadBatchInput(ctx, c, ref.Workflow, ref.Run)
	if err != nil {
		return nil, err
	}
	if in.Run.Digest != digest {
		return nil, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("batch %s runs plan %s, not %s", ref.Workflow, in.Run.Digest, digest), ErrPlan, nil)
	}
	data, err := planJSON(in.Run.Plan)
	if err != nil {
		return nil, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("batch %s: %v", ref.Workflow, err), ErrPlan, nil)
	}
	return data, nil
}

// ReadBatchInput reads a batch workflow's input from its history (runID
// empty: its latest run's).
func ReadBatchInput(ctx context.Context, c client.Client, workflowID, runID string) (*BatchInput, error) {
	ev, err := firstEvent(ctx, c, workflowID, runID)
	if err != nil {
		return nil, err
	}
	var in BatchInput
	if err := inputOf(workflowID, ev, BatchWorkflow, "batch", &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// runInputOf reads a run's input from the first event of its history.
func runInputOf(workflowID string, ev *historypb.HistoryEvent) (*RunInput, error) {
	var in RunInput
	if err := inputOf(workflowID, ev, Workflow, "run", &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// inputOf reads the input of an agentc workflow of type typ (a run or a
// batch, as noun says) from the first event of its history into in.
func inputOf(workflowID string, ev *historypb.HistoryEvent, typ, noun string, in any) error {
	started := ev.GetWorkflowExecutionStartedEventAttributes()
	if started == nil {
		return fmt.Errorf("workflow %s: its history does not start with the workflow's start", workflowID)
	}
	if t := started.GetWorkflowType().GetName(); t != typ {
		return fmt.Errorf("workflow %s is a %s, not an agentc %s (%s)", workflowID, t, noun, typ)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(started.GetInput(), in); err != nil {
		return fmt.Errorf("workflow %s: its input is not a %s's: %w", workflowID, noun, err)
	}
	return nil
}

// agent returns the model and tools of the agent at path in a run's plan
// ("" for the plan's own agent, "a/b" for b called by a), built once on
// this worker for every run of the plan (the models for each seed a run
// names for the test model, the tools once); a build that failed is
// tried again by the next run.
func (w *Worker) agent(ctx context.Context, run *workerRun, path string) (*builtAgent, error) {
	at := strings.Join([]string{string(run.plan.Digests.Plan), run.provider, path}, "\x00")
	key := at + "\x00" + fmt.Sprint(run.seed)
	w.mu.Lock()
	b, ok := w.built[key]
	if !ok {
		b = &builtAgent{}
		keep(w.built, key, b, maxBuilt)
	}
	t, ok := w.tools[at]
	if !ok {
		t = &builtTools{done: make(chan struct{})}
		w.tools[at] = t
	}
	w.mu.Unlock()
	b.once.Do(func() {
		t.once.Do(func() {
			t.begun.Store(true)
			defer close(t.done)
			t.secrets = w.secrets()
			t.err = w.buildTools(ctx, run, path, t)
		})
		// The tools' secrets are the models' too: one set redacts all.
		b.secrets, b.kit = t.secrets, t
		if b.err = t.err; b.err == nil {
			b.err = w.build(run, path, b)
		}
	})
	if b.err != nil {
		// A failure to build (credentials a provider could not get, a
		// server that did not start) may pass: the next run builds again
		// rather than fail on this one for the worker's life.
		w.mu.Lock()
		if w.built[key] == b {
			delete(w.built, key)
		}
		if t.err != nil && w.tools[at] == t {
			delete(w.tools, at)
		}
		w.mu.Unlock()
	}
	return b, b.err
}

// at returns the plan of the agent at path in plan p, and the directory
// its files are relative to.
func (w *Worker) at(p *plan.Plan, path string) (*plan.Plan, string, error) {
	dir := w.opts.Dir
	if path != "" {
		for _, name := range strings.Split(path, "/") {
			c, ok := p.Callees[name]
			if !ok || c.Plan == nil {
				return nil, "", fmt.Errorf("the plan has no called agent %q (effect of agent %s)", name, path)
			}
			_, dir = c.Within(dir)
			p = c.Plan
		}
	}
	return p, dir, nil
}

// build makes the models of the agent at path for a run: its own, and its
// fallbacks'.
func (w *Worker) build(run *workerRun, path string, b *builtAgent) error {
	p, _, err := w.at(run.plan, path)
	if err != nil {
		return err
	}
	modelFor := func(p *plan.Plan) (agentrt.Model, error) {
		return w.opts.ModelFor(ModelCall{Plan: p, Run: run.plan, Provider: run.provider, Seed: run.seed, Secrets: b.secrets})
	}
	b.provider = run.provider
	if b.provider == "" {
		b.provider = p.Agent.Model.Provider
	}
	model, err := modelFor(p)
	if err != nil {
		return err
	}
	if run.provider != "test" {
		// The models a run's calls fall back to, each made for its plan.
		b.fallbacks, b.fallbackProviders = nil, nil
		for i := range p.Fallbacks {
			m, err := modelFor(p.FallbackPlan(i))
			if err != nil {
				return fmt.Errorf("fallback %s: %w", p.Fallbacks[i].Ref(), err)
			}
			b.fallbacks = append(b.fallbacks, m)
			b.fallbackProviders = append(b.fallbackProviders, p.Fallbacks[i].Model.Provider)
		}
	}
	b.model = model
	return nil
}

// buildTools makes the tools of the agent at path, once for every run of
// its plan on this worker: its mcp servers are started here. The models
// of the agents it calls (which a worker's tools never run: their calls
// are effects of their own) are made for the first run's seed.
func (w *Worker) buildTools(ctx context.Context, run *workerRun, path string, t *builtTools) error {
	p, dir, err := w.at(run.plan, path)
	if err != nil {
		return err
	}
	modelFor := func(p *plan.Plan) (agentrt.Model, error) {
		return w.opts.ModelFor(ModelCall{Plan: p, Run: run.plan, Provider: run.provider, Seed: run.seed, Secrets: t.secrets})
	}
	var mu sync.Mutex
	t.servers = map[string]tool.ServerRecord{}
	// Started outside the activity's context: the tools outlive the
	// activity, for every run of the plan on this worker. The worker's
	// closing gives up the servers' start (ctx bounds only that).
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(w.life, cancel)()
	tools, closeTools, err := tool.Build(bctx, p, tool.Env{
		BaseDir:       dir,
		ModelFor:      modelFor,
		Events:        w.opts.Events,
		HTTPTransport: w.opts.HTTPTransport,
		OnServer: func(path string, rec tool.ServerRecord) {
			mu.Lock()
			t.servers[path] = rec
			mu.Unlock()
		},
		Provider: run.provider,
		Secrets:  t.secrets,
	})
	if err != nil {
		return err
	}
	t.tools, t.close = tools, closeTools
	return nil
}

// replyOf is the response of a model call that succeeded, as its effect
// encoded it; nil for a call that failed.
func replyOf(resp json.RawMessage, err error) *agentrt.Response {
	if err != nil {
		return nil
	}
	var r agentrt.Response
	if json.Unmarshal(resp, &r) != nil {
		return &agentrt.Response{}
	}
	return &r
}
