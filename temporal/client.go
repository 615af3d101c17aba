package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// Dial connects to the Temporal server at hostPort, in namespace. Both
// may be empty: they then come from Temporal's own client configuration,
// as the temporal command reads it (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// or the profile of its configuration file), the namespace defaulting to
// DefaultNamespace. So does everything else about the connection: TLS,
// client certificates, an API key (TEMPORAL_API_KEY, TEMPORAL_TLS,
// TEMPORAL_TLS_CLIENT_CERT_PATH and the rest; TEMPORAL_CONFIG_FILE and
// TEMPORAL_PROFILE name the file and profile). The SDK's own log lines go
// to logw, at warning level and above (nil: nowhere).
func Dial(ctx context.Context, hostPort, namespace string, logw io.Writer) (client.Client, error) {
	opts, err := clientOptions(hostPort, namespace)
	if err != nil {
		return nil, err
	}
	if logw == nil {
		logw = io.Discard
	}
	opts.Logger = log.NewStructuredLogger(slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporal: connecting to %s: %w", opts.HostPort, err)
	}
	return c, nil
}

// Resolve returns the server address and namespace Dial connects to,
// given the same arguments.
func Resolve(hostPort, namespace string) (string, string, error) {
	opts, err := clientOptions(hostPort, namespace)
	return opts.HostPort, opts.Namespace, err
}

// clientOptions reads Temporal's client configuration, with hostPort and
// namespace in place of its own where set.
func clientOptions(hostPort, namespace string) (client.Options, error) {
	opts, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{})
	if err != nil {
		file := os.Getenv("TEMPORAL_CONFIG_FILE")
		if file == "" {
			file = envconfig.DefaultConfigFilePath()
		}
		return opts, fmt.Errorf("temporal: reading the client configuration (%s): %w", file, err)
	}
	if hostPort != "" {
		opts.HostPort = hostPort
	}
	if opts.HostPort == "" {
		return opts, errors.New("temporal: no server address: give --temporal HOST:PORT, or set TEMPORAL_ADDRESS")
	}
	switch {
	case namespace != "":
		opts.Namespace = namespace
	case opts.Namespace == "":
		opts.Namespace = DefaultNamespace
	}
	return opts, nil
}

// SubmitOptions name where a run goes.
type SubmitOptions struct {
	TaskQueue string // DefaultTaskQueue if empty
	// WorkflowID, when set, is the run's workflow ID; else one is made
	// from the agent's name.
	WorkflowID string
}

// Start starts a run of the plan file data with in's input and budgets.
// A span in ctx is the parent of the run's spans, which workers with
// telemetry record (RunInput.TraceParent).
func Start(ctx context.Context, c client.Client, data []byte, in RunInput, opts SubmitOptions) (client.WorkflowRun, error) {
	p, err := plan.Read("plan", data)
	if err != nil {
		return nil, err
	}
	in.Plan, in.Digest = data, string(p.Digests.Plan)
	if in.TraceParent == "" && trace.SpanContextFromContext(ctx).IsValid() {
		// The run's spans go under the caller's.
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		in.TraceParent = carrier.Get("traceparent")
	}
	id := opts.WorkflowID
	if id == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		id = "agentc-" + p.Agent.Name + "-" + hex.EncodeToString(b)
	}
	queue := opts.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	// No retry policy: Temporal runs the workflow once, and a run that
	// failed (FailureType) stays failed until it is submitted again.
	// Eager start: where a worker of the queue runs in this process, it
	// gets the first workflow task in the start's reply. A workflow of
	// the ID still going is an error, not the run: the SDK would hand
	// back that workflow, whoever started it, with whatever plan and
	// input. An ID whose workflow has ended is Temporal's to reuse: the
	// run starts anew under it.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, EnableEagerStart: true,
		WorkflowExecutionErrorWhenAlreadyStarted: true}, Workflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil, fmt.Errorf("temporal: workflow %s is already running: the run was not submitted (a run is started under an ID no workflow going holds; give it another)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("temporal: starting the run: %w", err)
	}
	want := in.Provider
	if want == "" {
		want = p.Agent.Model.Provider
	}
	return &submitted{WorkflowRun: run, digest: in.Digest, provider: want, agent: p.Agent.Name, digests: p.Digests}, nil
}

// submitted is a run Start started: what it was submitted for, which
// Wait holds its report to.
type submitted struct {
	client.WorkflowRun
	digest, provider string
	// agent and digests name the plan, for the report of a run cancelled
	// before it could report (interrupted).
	agent   string
	digests plan.Digests
}

// interrupted is the report of the run, cancelled by its client, whose
// workflow has not reported (unreported says why): it says the run was
// interrupted, as a local run's interrupted report does.
func (s *submitted) interrupted(why string) *agentrt.Report {
	return &agentrt.Report{Agent: s.agent, Provider: s.provider, Digests: s.digests, Outcome: agentrt.OutcomeError,
		Bound: agentrt.BoundNone, Interrupted: true, Error: "interrupted: " + why, Started: time.Now().UTC(), Rounds: []agentrt.RoundReport{}}
}

// unreported is a run its client cancelled that gave no report: no
// worker had begun it, it was cancelled before its run loop began (while
// its mcp servers started), or its report did not come within cancelWait.
type unreported struct{ why string }

func (u *unreported) Error() string { return u.why }

// check refuses a report that is not of the run submitted: another plan,
// or another provider answering. A workflow of the run's ID is started
// by this client only (Start refuses an ID taken), so this holds should
// that ever not be so.
func (s *submitted) check(rep *agentrt.Report) error {
	return checkReport(s.GetID(), rep, s.digest, s.provider)
}

// checkReport refuses, naming what differs, the report of workflow id
// unless it is of plan digest and provider answered it.
func checkReport(id string, rep *agentrt.Report, digest, provider string) error {
	switch {
	case string(rep.Digests.Plan) != digest:
		return fmt.Errorf("temporal: run %s reports plan %s, and this is plan %s: its report is not this run's", id, rep.Digests.Plan, digest)
	case rep.Provider != provider:
		return fmt.Errorf("temporal: run %s reports provider %q answering, and this run asked for %q: its report is not this run's", id, rep.Provider, provider)
	}
	return nil
}

// WatchWorkers says on w, once, when no worker has polled the task queue
// a while after a run of the plan of digest was submitted to it (a run
// then waits for one), and how to start one that runs it; hostPort names
// the server in the hint. It stops when ctx ends.
func WatchWorkers(ctx context.Context, c client.Client, hostPort, queue, digest string, w io.Writer) {
	if queue == "" {
		queue = DefaultTaskQueue
	}
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(workersHint):
		}
		resp, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil && len(resp.GetPollers()) == 0 && ctx.Err() == nil {
			fmt.Fprintf(w, "agentc: no worker serves task queue %s yet; the run waits for one: agentc worker --temporal %s --task-queue %s --allow %s\n", queue, hostPort, queue, digest)
		}
	}()
}

// workersHint is how long a run waits for a worker before WatchWorkers
// says so.
const workersHint = 5 * time.Second

// cancelWait bounds the wait for a cancelled run's report (a variable
// for tests).
var cancelWait = time.Minute

// ErrStopWaiting, as the cause a waiter's context ends with
// (context.WithCancelCause), has Wait and Follow stop waiting and leave
// the run going, not cancel it: for a front that only waits on runs
// (agentc serve --temporal), whose stop is not theirs.
var ErrStopWaiting = errors.New("temporal: the client stopped waiting for the run; it goes on")

// Wait waits for a run's report. When ctx ends first, the run is
// cancelled, as an interrupt cancels a local run, and its report (which
// says it was interrupted) is waited for a while longer; but where ctx
// ended with ErrStopWaiting as its cause, Wait returns that cause, and
// the run goes on.
//
// A run that failed (FailureType) or was cancelled ends its workflow so,
// with its report in the failure's details: Wait returns that report, as
// it returns a succeeding run's, and a nil error. Of a run Start
// returned, a report of another plan than the one submitted, or another
// provider than the one asked (RunInput.Provider, else the plan's), is
// an error.
func Wait(ctx context.Context, c client.Client, run client.WorkflowRun) (*agentrt.Report, error) {
	rep, err := wait(ctx, c, run)
	var u *unreported
	if s, ok := run.(*submitted); ok && errors.As(err, &u) {
		// Cancelled, as an interrupt cancels a local run: interrupted.
		return s.interrupted(u.why), nil
	}
	if s, ok := run.(*submitted); ok && rep != nil {
		if err := s.check(rep); err != nil {
			return nil, err
		}
	}
	return rep, err
}

// wait is Wait, the report not checked.
func wait(ctx context.Context, c client.Client, run client.WorkflowRun) (*agentrt.Report, error) {
	var rep agentrt.Report
	err := run.Get(ctx, &rep)
	if r := EndedReport(err); r != nil {
		return r, nil
	}
	if err != nil && errors.Is(context.Cause(ctx), ErrStopWaiting) {
		return nil, fmt.Errorf("run %s: %w", run.GetID(), context.Cause(ctx))
	}
	if err != nil && ctx.Err() != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
		defer cancel()
		if cerr := c.CancelWorkflow(wctx, run.GetID(), run.GetRunID()); cerr != nil {
			return nil, fmt.Errorf("temporal: run %s: cancelling it: %w", run.GetID(), cerr)
		}
		// A run no worker has begun waits for one to report: a worker that
		// begins it now finds it cancelled, and it makes no call.
		if !begun(wctx, c, run) {
			return nil, &unreported{fmt.Sprintf("run %s was cancelled before a worker began it: it makes no model or tool call", run.GetID())}
		}
		err = run.Get(wctx, &rep)
		if r := EndedReport(err); r != nil {
			return r, nil
		}
		var canceled *sdktemporal.CanceledError
		var late *serviceerror.DeadlineExceeded
		switch {
		case errors.As(err, &canceled):
			return nil, &unreported{fmt.Sprintf("run %s was cancelled before its run began (while it read its plan or started its mcp servers)", run.GetID())}
		case wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &late):
			// (The server may end the wait at wctx's deadline a moment
			// before wctx itself ends.)
			return nil, &unreported{fmt.Sprintf("run %s was cancelled, and its report did not come within %s (no worker serves it now?): it ends cancelled once a worker takes it up", run.GetID(), cancelWait)}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("temporal: run %s: %w", run.GetID(), err)
	}
	return asWritten(&rep), nil
}

// begun reports whether a worker has begun run: completed a workflow task
// of it, or holds one now. Unknown (the server out of reach) is begun.
func begun(ctx context.Context, c client.Client, run client.WorkflowRun) bool {
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil || d.GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_STARTED {
		return true
	}
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil || ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return true
		}
	}
	return false
}

// EndedReport returns the report a run's workflow failed or was cancelled
// with, given the error reading its result returned; nil for any other
// error (a plan refused, an input the agent refuses, the server out of
// reach), which holds no report.
func EndedReport(err error) *agentrt.Report {
	if err == nil {
		return nil
	}
	var app *sdktemporal.ApplicationError
	var canceled *sdktemporal.CanceledError
	var rep agentrt.Report
	switch {
	case errors.As(err, &app) && isRunFailure(app.Type()) && app.HasDetails():
		if app.Details(&rep) == nil {
			return asWritten(&rep)
		}
	case errors.As(err, &canceled) && canceled.HasDetails():
		if canceled.Details(&rep) == nil {
			return asWritten(&rep)
		}
	}
	return nil
}

// Refused reports whether err, of Wait, is a run's workflow refused
// before its run began (ErrPlan, ErrInput, ErrRefused): a plan its worker
// does not run or cannot read, an input or bounds it refuses. Such a run
// made no model or tool call.
func Refused(err error) bool {
	var app *sdktemporal.ApplicationError
	if !errors.As(err, &app) {
		return false
	}
	switch app.Type() {
	case ErrPlan, ErrInput, ErrRefused:
		return true
	}
	return false
}

// isRunFailure reports whether typ is the type of a run's failure
// (FailureType), which carries the run's report.
func isRunFailure(typ string) bool {
	return typ == FailUnapproved || strings.HasPrefix(typ, FailBound) || strings.HasPrefix(typ, FailOutcome)
}

// Submit starts a run and waits for its report (Start, then Wait).
func Submit(ctx context.Context, c client.Client, data []byte, in RunInput, opts SubmitOptions) (*agentrt.Report, string, error) {
	run, err := Start(ctx, c, data, in, opts)
	if err != nil {
		return nil, "", err
	}
	rep, err := Wait(ctx, c, run)
	return rep, run.GetID(), err
}

// Export reads a run workflow's history and returns it as a journal: its
// header and, for each effect activity that completed, its entry. A call
// an activity made more than once (its worker lost) appears once, with
// the result the workflow went on with; notes, when set, is told of it
// (the history keeps only the count of such attempts).
func Export(ctx context.Context, c client.Client, workflowID, runID string, notes func(string)) (journal.Header, []journal.Entry, error) {
	var h journal.Header
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	dc := converter.GetDefaultDataConverter()
	scheduled := map[int64]EffectInput{}
	var entries []journal.Entry
	var serversAt int64 = -1
	attempts := map[int64]int32{} // by the scheduling event
	first := true
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return h, nil, fmt.Errorf("workflow %s: reading its history: %w", workflowID, err)
		}
		if first {
			first = false
			in, err := runInputOf(workflowID, ev)
			if err != nil {
				return h, nil, err
			}
			if in.Batch != nil {
				if in.Plan, err = BatchPlan(ctx, c, *in.Batch, in.Digest); err != nil {
					return h, nil, fmt.Errorf("workflow %s: %w", workflowID, err)
				}
			}
			data, err := planJSON(in.Plan)
			if err != nil {
				return h, nil, fmt.Errorf("workflow %s: %w", workflowID, err)
			}
			p, err := plan.Read("the workflow's plan", data)
			if err != nil {
				return h, nil, fmt.Errorf("workflow %s: %w", workflowID, err)
			}
			h = journal.Header{Plan: string(p.Digests.Plan), Run: workflowID, OutputSuffix: p.OutputSuffix(),
				Agent: p.Agent.Name, Started: ev.GetEventTime().AsTime().UTC()}
			continue
		}
		if m := ev.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
			// The run's workflow.GetVersion of the change a journal's
			// header names: that its called agents ran within its token
			// budget. Its journal says so, and replays so. Its usage was
			// not held to the model's tokeniser's count (its workflow
			// reserves in no pool: a batch's pool is the workers'), so the
			// header says nothing of that, whatever the run's version.
			var change string
			if dc.FromPayloads(m.GetDetails()["change-id"], &change) == nil && change == calleeBudgetChange {
				h.CalleeBudget = true
			}
			continue
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			switch name := a.GetActivityType().GetName(); name {
			case ServersActivity:
				serversAt = ev.GetEventId()
			case ModelActivity, ToolActivity, EffectActivity:
				var in EffectInput
				if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
					return h, nil, fmt.Errorf("workflow %s: event %d: %w", workflowID, ev.GetEventId(), err)
				}
				scheduled[ev.GetEventId()] = in
			default:
				return h, nil, fmt.Errorf("workflow %s: event %d schedules activity %s, which agentc does not know", workflowID, ev.GetEventId(), name)
			}
			continue
		}
		if st := ev.GetActivityTaskStartedEventAttributes(); st != nil {
			attempts[st.GetScheduledEventId()] = st.GetAttempt()
			continue
		}
		a := ev.GetActivityTaskCompletedEventAttributes()
		if a == nil {
			continue
		}
		if a.GetScheduledEventId() == serversAt {
			// The tools the run's mcp servers offered, as a local run's
			// journal header records them.
			var servers map[string]json.RawMessage
			if err := dc.FromPayloads(a.GetResult(), &servers); err != nil {
				return h, nil, fmt.Errorf("workflow %s: the servers' tools: %w", workflowID, err)
			}
			if h.Tools, err = json.Marshal(struct {
				Servers map[string]json.RawMessage `json:"servers"`
			}{servers}); err != nil {
				return h, nil, err
			}
			continue
		}
		in, ok := scheduled[a.GetScheduledEventId()]
		if !ok {
			return h, nil, fmt.Errorf("workflow %s: event %d completes an activity never scheduled", workflowID, ev.GetEventId())
		}
		var res EffectResult
		if err := dc.FromPayloads(a.GetResult(), &res); err != nil {
			return h, nil, fmt.Errorf("workflow %s: event %d: %w", workflowID, ev.GetEventId(), err)
		}
		e, err := entry(in.Effect, res)
		if err != nil {
			return h, nil, fmt.Errorf("workflow %s: event %d: %w", workflowID, ev.GetEventId(), err)
		}
		entries = append(entries, e)
		if n := attempts[a.GetScheduledEventId()]; n > 1 && notes != nil {
			notes(fmt.Sprintf("effect %s (%s) was made %d times: the attempts before the last were lost with their workers (the journal lists those it knows under \"lost\"), and the call may have reached the provider or tool each time", in.Effect.Key, in.Effect.Kind, n))
		}
	}
	if first {
		return h, nil, fmt.Errorf("workflow %s has no history", workflowID)
	}
	return h, entries, nil
}

// entry is an effect activity as a journal entry.
func entry(ef agentrt.Effect, res EffectResult) (journal.Entry, error) {
	k, err := journal.ParseKey(ef.Key)
	if err != nil {
		return journal.Entry{}, err
	}
	e := journal.Entry{Key: k, Kind: ef.Kind, Fingerprint: ef.Fingerprint, Request: ef.Request, Response: res.Response,
		Started: res.Started, DurationMS: res.DurationMS, Lost: res.Lost}
	if res.Error != "" {
		e.Error = res.Error
		e.Response, _ = json.Marshal(agentrt.FailedEffect{Deadline: res.Deadline, Own: res.Deadline, Class: res.Class, Usage: res.Spent, Retried: res.Retried})
	}
	if e.Started.IsZero() {
		return e, errors.New("the effect's result has no start time")
	}
	e.Started = e.Started.Truncate(time.Millisecond)
	return e, nil
}
