package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/telemetry"
)

// Timing of effect activities.
const (
	// callTimeout bounds one attempt of a call when the run has no
	// deadline nearer.
	callTimeout = 10 * time.Minute
	// heartbeatTimeout is how soon a lost worker's call is given to
	// another: activities heartbeat several times within it.
	heartbeatTimeout = 10 * time.Second
	// attempts bounds how often a call is given to a worker again after
	// the worker was lost or the attempt timed out.
	attempts = 5
)

// run is the run workflow: it reads the plan from its input, builds the
// tools' specs (calls go to activities), and runs the runtime's loop on
// the workflow's clock with an effector that makes each effect an
// activity.
func (w *Worker) run(ctx workflow.Context, in RunInput) (*agentrt.Report, error) {
	// The calls waiting for approval answer QueryApprovals from the run's
	// first task on, so that a query does not meet an unknown type.
	sa := newSignalApprover(ctx)
	if err := workflow.SetQueryHandler(ctx, QueryApprovals, sa.waiting); err != nil {
		return nil, err
	}
	// The run's events, for a front that passes them on (QueryEvents).
	evlog := &eventLog{}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, evlog.page); err != nil {
		return nil, err
	}
	// Whatever the run fails with goes to the client: redacted first.
	secrets := w.secrets()
	fail := func(typ string, err error) error {
		return sdktemporal.NewNonRetryableApplicationError(secrets.String(err.Error()), typ, nil)
	}
	// Runs started before version 1 (opsVersion) schedule every call as
	// EffectActivity, set no search attribute, and complete whatever
	// their outcome: their histories replay as they were made.
	ops := workflow.GetVersion(ctx, opsChange, workflow.DefaultVersion, opsVersion) >= opsVersion
	// Runs started before version 1 (budgetsVersion) take the client's
	// budgets in place of the plan's: their histories replay as they were
	// made. Runs started since take them as bounds that narrow the plan's.
	narrow := workflow.GetVersion(ctx, budgetsChange, workflow.DefaultVersion, budgetsVersion) >= budgetsVersion
	// Runs started before version 1 (providerVersion) took the provider
	// their client named: their histories replay as they were made (the
	// activities refuse their calls all the same).
	ownModels := workflow.GetVersion(ctx, providerChange, workflow.DefaultVersion, providerVersion) >= providerVersion
	// The changes to what a run itself does, asked in this order: a run
	// started before one does as it did (runChanges).
	var before []func(context.Context) context.Context
	for _, c := range runChanges {
		if workflow.GetVersion(ctx, c.id, workflow.DefaultVersion, 1) < 1 {
			before = append(before, c.before)
		}
	}
	// Runs started before version 1 (ownPoolVersion) took any token pool
	// their input named: their histories replay as they were made (the
	// activities refuse their calls all the same).
	if workflow.GetVersion(ctx, ownPoolChange, workflow.DefaultVersion, ownPoolVersion) >= ownPoolVersion {
		if err := checkPool(&in); err != nil {
			return nil, err
		}
	}
	// Runs started before version 1 (batchParentVersion) took any batch
	// their input named as theirs: their histories replay as they were
	// made (the activities refuse their calls all the same).
	if in.Batch != nil && workflow.GetVersion(ctx, batchParentChange, workflow.DefaultVersion, batchParentVersion) >= batchParentVersion {
		var parentID, parentRun string
		if p := workflow.GetInfo(ctx).ParentWorkflowExecution; p != nil {
			parentID, parentRun = p.ID, p.RunID
		}
		if err := checkBatchParent(in.Batch, parentID, parentRun); err != nil {
			return nil, err
		}
	}
	if in.Batch != nil {
		// Its batch is told when it ends, however it ends.
		defer tellBatch(ctx, in.Batch)
		lao := workflow.LocalActivityOptions{StartToCloseTimeout: planTimeout,
			RetryPolicy: &sdktemporal.RetryPolicy{MaximumAttempts: attempts, NonRetryableErrorTypes: []string{ErrPlan}}}
		if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, lao), planActivity, *in.Batch, in.Digest).Get(ctx, &in.Plan); err != nil {
			return nil, fail(ErrPlan, fmt.Errorf("reading the plan of batch %s: %v", in.Batch.Workflow, err))
		}
	}
	data, err := planJSON(in.Plan)
	if err != nil {
		return nil, fail(ErrPlan, err)
	}
	p, err := readPlan(ctx, "the workflow's plan", data)
	if err != nil {
		return nil, fail(ErrPlan, err)
	}
	if string(p.Digests.Plan) != in.Digest {
		return nil, fail(ErrPlan, fmt.Errorf("the plan's digest is %s, but the run was submitted for %s", p.Digests.Plan, in.Digest))
	}
	// The search attributes this run sets: those the worker that first
	// ran this code found registered, recorded in the history so that a
	// replay on any worker sets the same (an unregistered one would fail
	// the workflow task).
	var search searchSet
	if ops {
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return w.registered() }).Get(&search); err != nil {
			return nil, err
		}
		if err := search.upsert(ctx, SearchAgent, p.Agent.Name, SearchPlan, string(p.Digests.Plan), SearchContract, string(p.Digests.Contract)); err != nil {
			return nil, err
		}
	}
	// Before anything of the plan is built or run.
	if err := w.checkPlan(p); err != nil {
		return nil, err
	}
	if ownModels {
		if err := checkProvider(p, in.Provider); err != nil {
			return nil, err
		}
	}
	// The client's budgets: in place of the plan's (runs started before
	// budgetsVersion), or the bounds that narrow them.
	var budgets, bounds agentrt.Overrides
	if narrow {
		if bounds, err = in.Budgets.overrides(); err != nil {
			return nil, fail(ErrRefused, fmt.Errorf("budgets.deadline: %v", err))
		}
	} else if budgets, err = in.Budgets.overrides(); err != nil {
		return nil, fail(ErrPlan, fmt.Errorf("budgets.deadline: %v", err))
	}
	var servers map[string]tool.ServerRecord
	if hasServers(p) {
		ao := workflow.ActivityOptions{ActivityID: "servers", StartToCloseTimeout: time.Minute, HeartbeatTimeout: heartbeatTimeout,
			RetryPolicy: &sdktemporal.RetryPolicy{MaximumAttempts: attempts}}
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), ServersActivity).Get(ctx, &servers); err != nil {
			return nil, err
		}
	}
	var rec *telemetry.Recorder
	content := false
	if t := w.opts.Telemetry; t != nil {
		exec := workflow.GetInfo(ctx).WorkflowExecution
		rec = t.WorkflowRecorder(exec.ID+"\x00"+exec.RunID, traceParent(in.TraceParent), func() bool { return workflow.IsReplaying(ctx) })
		content = t.Content()
	}
	events := func(ev agentrt.Event) {
		evlog.add(redactedEvent(secrets, ev)) // a Temporal client may query them
		if rec != nil {
			rec.Event(ev) // replayed events too: see WorkflowRecorder
		}
		if w.opts.Events != nil && !workflow.IsReplaying(ctx) {
			w.opts.Events(ev)
		}
	}
	// The tools as the model sees them. The workflow calls none of them:
	// the effector's activities do, but for agents called as tools, whose
	// runs are nested in this workflow.
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{
		BaseDir:  w.opts.Dir,
		ModelFor: func(*plan.Plan) (agentrt.Model, error) { return workerOnly{}, nil },
		Events:   events,
		Servers:  servers,
		Offline:  true,
		Provider: in.Provider,
		Secrets:  secrets,
		Content:  content,
	})
	if err != nil {
		return nil, fail(ErrPlan, err)
	}
	defer closeTools()
	// The run's context is cancelled when the workflow is.
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Runs started before version 1 (approvalCancelVersion) ended a
	// cancellation met waiting for approval as a failed call, not as an
	// interrupt: their histories replay as they were made.
	if workflow.GetVersion(ctx, approvalCancelChange, workflow.DefaultVersion, approvalCancelVersion) >= approvalCancelVersion {
		sa.cancel = cancel
	}
	for _, old := range before {
		rctx = old(rctx)
	}
	workflow.Go(ctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		cancel()
	})
	r, err := agentrt.New(p, agentrt.Options{
		Model:         workerOnly{},
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return workerOnly{}, nil },
		Tools:         tools,
		Budgets:       budgets,
		Events:        events,
		Provider:      in.Provider,
		Secrets:       secrets,
		Clock:         clock{ctx},
		Effector:      &effector{ctx: ctx, cancel: cancel, typed: ops},
		Content:       content,
		// A call that needs approval waits for a signal (agentc approve).
		Approver: w.approver(sa),
		Files:    w.opts.Files,
	})
	if err != nil {
		return nil, fail(ErrPlan, err)
	}
	if narrow && in.Budgets != (Budgets{}) {
		// A client's bound narrows the plan's, never lifts it; one that
		// is not a bound is refused.
		if r, err = r.WithBudgets(bounds); err != nil {
			return nil, fail(ErrRefused, fmt.Errorf("budgets: %v", err))
		}
	}
	rep, err := r.Run(rctx, in.Input)
	if err != nil {
		return nil, fail(ErrInput, err)
	}
	if !ops {
		return rep, nil
	}
	if err := search.upsert(ctx, SearchOutcome, rep.Outcome, SearchBound, rep.Bound); err != nil {
		return nil, err
	}
	if err := ended(ctx, rep, secrets); err != nil {
		return nil, err
	}
	return rep, nil
}

// opsChange and opsVersion name the change, in workflow.GetVersion's
// terms, that gave runs what operators read: activity types by kind,
// search attributes, and a failed workflow for a failed run.
const (
	opsChange  = "agentc.operators"
	opsVersion = workflow.Version(1)
)

// providerChange and providerVersion name the change that made a run's
// calls go only to the models its plan names, or to the test model
// (checkProvider), where a client could name another provider.
const (
	providerChange  = "agentc.provider"
	providerVersion = workflow.Version(1)
)

// calleeBudgetChange names the change that made the agents a run calls
// run within what its token budget has left (runtime.TokensLeft).
const calleeBudgetChange = "agentc.callee-budget"

// runChanges are the changes to what a run itself does, in the order a
// run's workflow asks for their versions (workflow.GetVersion, version 1
// each; a change is added at the end), each with the runtime option that
// has a run started before it do as it did, so that its history replays
// as it was made.
var runChanges = []struct {
	id     string
	before func(context.Context) context.Context
}{
	// The agents a run calls run within what its token budget has left;
	// before, within their own budgets alone.
	{calleeBudgetChange, agentrt.WithCalleesOwnBudgets},
	// The tool calls of a reply are not made once their results put the
	// conversation past what the model could be sent (runtime's
	// pastBound).
	{"agentc.call-bound", agentrt.WithCallsPastBound},
	// The files a run's tools return are held to the run's file bound, a
	// model call estimated past the token budget is refused, and text
	// files count toward the model's window.
	{"agentc.file-bound", agentrt.WithoutFileBounds},
	// The files a run's prompt places (a file printed more than once) are
	// held to the run's file bound.
	{"agentc.placed-files", agentrt.WithPlacedFilesUnbounded},
	// Answers and tool arguments holding a number no double holds exactly
	// are refused, and an answer is asked whether it is I-JSON before it
	// is raised.
	{"agentc.exact-answers", agentrt.WithLooseAnswers},
	// A provider's usage reports are held to the model's own tokeniser's
	// count where agentc has one.
	{"agentc.exact-usage", agentrt.WithUsageByBytes},
	// A run is charged what a failed model call's provider reported it
	// spent.
	{"agentc.failed-usage", agentrt.WithFailedUnspent},
	// strategy.escalate keeps to the plan's provider: a fallback of
	// another provider is not sent the escalation's model.
	{"agentc.escalation-provider", agentrt.WithEscalationAfterFallback},
	// The fewest tokens a request's text can be is counted rounding up,
	// refusing a request of a byte past 128 times the model's window.
	{"agentc.window-ceil", agentrt.WithWindowFloor},
	// A call of an agent that a cancellation or the deadline cut off ends
	// the run, as a cut-off call of any other tool does.
	{"agentc.callee-cut", agentrt.WithCalleeCutGoesOn},
}

// approvalCancelChange and approvalCancelVersion name the change that
// made a run cancelled while it waits for approval end interrupted, its
// workflow cancelled, as a run cancelled during a call does: the wait
// cancels the run's context before it ends, where the run took the
// wait's error for a failed call, its workflow failed and its client
// exited 1.
const (
	approvalCancelChange  = "agentc.approval-cancel"
	approvalCancelVersion = workflow.Version(1)
)

// budgetsChange and budgetsVersion name the change that made a run's
// budgets (RunInput.Budgets) bounds that narrow its plan's, where they
// had replaced them.
const (
	budgetsChange  = "agentc.budgets"
	budgetsVersion = workflow.Version(1)
)

// ended is how a run's workflow ends, given the run's report: nil, to
// complete with the report as its result, when the run succeeded;
// cancelled, with the report as the details, when it was cancelled;
// failed otherwise, never retried, with an ApplicationError whose type is
// FailureType's and whose details are the report. The report is the
// runtime's, redacted of the run's secrets; the message is redacted
// again.
func ended(ctx workflow.Context, rep *agentrt.Report, secrets *redact.Set) error {
	if rep.Interrupted && ctx.Err() != nil {
		return sdktemporal.NewCanceledError(rep)
	}
	typ := FailureType(rep)
	if typ == "" {
		return nil
	}
	msg := fmt.Sprintf("the run ended with outcome %s, bound %s", rep.Outcome, rep.Bound)
	if rep.Error != "" {
		msg += ": " + rep.Error
	}
	return sdktemporal.NewNonRetryableApplicationError(secrets.String(msg), typ, nil, rep)
}

// traceParent reads a W3C traceparent; an invalid one is no parent.
func traceParent(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

// approver is a run workflow's approver: the worker's rules, if any, then
// a signal. The rules are evaluated in a local activity, never in the
// workflow's code: an approve_if runs in a bounded child process whose
// verdict at its bound could differ between the first run and a replay,
// so the verdict is recorded in the history and a replay reads it back.
func (w *Worker) approver(sa *signalApprover) agentrt.Approver {
	if w.opts.Rules == nil {
		return sa.approve
	}
	return func(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		if req.If == nil || req.Mode == plan.ApproveAlways || req.Arguments == nil {
			return sa.approve(ctx, req)
		}
		lao := workflow.LocalActivityOptions{StartToCloseTimeout: rulesTimeout,
			RetryPolicy: &sdktemporal.RetryPolicy{MaximumAttempts: 1}}
		var v ruleVerdict
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(sa.ctx, lao), w.rules, ruleCall{*req, req.If}).Get(sa.ctx, &v)
		switch {
		case err != nil:
			q := *req
			q.Why += "; approve_if did not decide: " + err.Error()
			req = &q
		case v.Approved:
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByRule}, nil
		default:
			q := *req
			q.Why = v.Why
			req = &q
		}
		return sa.approve(ctx, req)
	}
}

// rulesTimeout bounds a local activity that evaluates an approve_if; the
// evaluation's own bounds (package cueproc) are tighter.
const rulesTimeout = time.Minute

// ruleCall is what the rules' local activity is given: the request and
// its constraint, which a request does not carry in JSON.
type ruleCall struct {
	Request agentrt.ApprovalRequest `json:"request"`
	If      *plan.CUEConstraint     `json:"if"`
}

// ruleVerdict is what the worker's rules decided about a call: approved,
// or why it goes on to be asked.
type ruleVerdict struct {
	Approved bool   `json:"approved,omitempty"`
	Why      string `json:"why,omitempty"`
}

// rules is the local activity that evaluates the worker's rules on a call.
func (w *Worker) rules(ctx context.Context, c ruleCall) (ruleVerdict, error) {
	req := c.Request
	req.If = c.If
	var passed *agentrt.ApprovalRequest
	d, err := w.opts.Rules(func(_ context.Context, r *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		passed = r
		return agentrt.ApprovalDecision{}, nil
	})(ctx, &req)
	switch {
	case err != nil:
		return ruleVerdict{}, err
	case passed != nil:
		return ruleVerdict{Why: passed.Why}, nil
	}
	return ruleVerdict{Approved: d.Approved}, nil
}

// hasServers reports whether a plan, or an agent it calls, declares an
// mcp server.
func hasServers(p *plan.Plan) bool {
	for _, t := range p.Agent.Capabilities.Tools {
		if t.Kind == "mcp" {
			return true
		}
	}
	for _, c := range p.Callees {
		if c.Plan != nil && hasServers(c.Plan) {
			return true
		}
	}
	return false
}

// clock is the workflow's clock: the same on every replay of its history.
type clock struct{ ctx workflow.Context }

func (c clock) Now() time.Time { return workflow.Now(c.ctx) }

// workerOnly stands in for the model in the workflow, where the effector
// makes every call.
type workerOnly struct{}

func (workerOnly) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, errors.New("a workflow makes no model call itself: its effector schedules an activity")
}

// effector makes each effect an activity, whose ID is the effect's key.
type effector struct {
	ctx    workflow.Context
	cancel context.CancelFunc
	// typed schedules each call as the activity of its kind
	// (activityOf); else as EffectActivity, as runs did before.
	typed bool
}

// activityOf is the activity type of an effect of kind.
func activityOf(kind string) string {
	switch kind {
	case journal.KindModel:
		return ModelActivity
	case journal.KindTool:
		return ToolActivity
	}
	return EffectActivity
}

func (e *effector) Make(_ context.Context, ef *agentrt.Effect) (json.RawMessage, error) {
	ao := workflow.ActivityOptions{
		ActivityID:          ef.Key,
		StartToCloseTimeout: callTimeout,
		HeartbeatTimeout:    heartbeatTimeout,
		// The call's own failures come back as results (EffectResult):
		// what Temporal retries is a worker lost or an attempt timed out.
		RetryPolicy: &sdktemporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 10 * time.Second, MaximumAttempts: attempts, NonRetryableErrorTypes: []string{ErrPlan}},
	}
	if !ef.Deadline.IsZero() {
		left := ef.Deadline.Sub(workflow.Now(e.ctx))
		if left <= 0 {
			return nil, fmt.Errorf("the deadline passed before the call: %w", context.DeadlineExceeded)
		}
		ao.ScheduleToCloseTimeout = left
		ao.StartToCloseTimeout = min(callTimeout, left)
	}
	name := EffectActivity
	if e.typed {
		name = activityOf(ef.Kind)
	}
	var out EffectResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(e.ctx, ao), name, EffectInput{Effect: *ef}).Get(e.ctx, &out)
	var canceled *sdktemporal.CanceledError
	var timeout *sdktemporal.TimeoutError
	switch {
	case err == nil:
	case errors.As(err, &canceled):
		e.cancel()
		return nil, fmt.Errorf("the workflow was cancelled: %w", context.Canceled)
	case errors.As(err, &timeout) && !ef.Deadline.IsZero() && !workflow.Now(e.ctx).Before(ef.Deadline):
		return nil, fmt.Errorf("the call did not end before the deadline: %w", context.DeadlineExceeded)
	default:
		return nil, fmt.Errorf("the call failed on its workers: %w", err)
	}
	if out.Error != "" {
		if out.Spent != nil || out.Retried != nil {
			// What the failed call spent, for the run to charge.
			return nil, &agentrt.FailedEffect{Msg: out.Error, Class: out.Class, Usage: out.Spent, Retried: out.Retried}
		}
		if out.Pool {
			return nil, &agentrt.FailedEffect{Msg: out.Error, Pool: true}
		}
		if out.Deadline {
			return nil, fmt.Errorf("%s: %w", out.Error, context.DeadlineExceeded)
		}
		if out.Class != "" {
			return nil, &agentrt.FailedEffect{Msg: out.Error, Class: out.Class}
		}
		return nil, errors.New(out.Error)
	}
	return out.Response, nil
}

// secrets is a new set of the secrets the worker read: each run adds its
// tools' own.
func (w *Worker) secrets() *redact.Set {
	s := &redact.Set{}
	for _, v := range w.opts.Secrets {
		s.Add(v)
	}
	return s
}

// ownPoolChange and ownPoolVersion name the change that refused a run
// naming a token pool other than its batch's (checkPool).
const (
	ownPoolChange  = "agentc.own-pool"
	ownPoolVersion = workflow.Version(1)
)

// batchParentChange and batchParentVersion name the change that refused
// a run naming a batch that did not start it (checkBatchParent).
const (
	batchParentChange  = "agentc.batch-parent"
	batchParentVersion = workflow.Version(1)
)

// checkBatchParent refuses, never retried, a run whose input names batch
// b as its own (RunInput.Batch) when its parent, which the server sets
// and no client can, is not the run of b that the input names: a client
// that started a run of an allowed plan naming a batch going, and its
// pool, had its model calls charged to that batch's pool.
func checkBatchParent(b *BatchRef, parentID, parentRun string) error {
	switch {
	case parentID == "":
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run names batch %s as its own and was started by a client, not by that batch: a batch's runs are the children it starts", b.Workflow), ErrRefused, nil)
	case parentID != b.Workflow || parentRun != b.Run:
		return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the run names batch %s (run %s) as its own and was started by workflow %s (run %s): a batch's runs are the children it starts", b.Workflow, b.Run, parentID, parentRun), ErrRefused, nil)
	}
	return nil
}

// modelNameChange and modelNameVersion name the change that refused a
// plan whose model names hold a control character, or one not shown
// (plan.CheckModelName: refusing the second asked no version of its own,
// since only a plan that fails to read asks this one).
const (
	modelNameChange  = "agentc.model-name"
	modelNameVersion = workflow.Version(1)
)

// readPlan reads a workflow's plan, as plan.Read does. A workflow begun
// before version 1 (modelNameVersion) read a plan whatever its model
// names held: its history replays as it was made (its activities refuse
// the plan all the same). Only a plan that fails to read asks the
// version, so the histories of the rest hold no marker of it.
func readPlan(ctx workflow.Context, name string, data []byte) (*plan.Plan, error) {
	p, err := plan.Read(name, data)
	if err != nil && workflow.GetVersion(ctx, modelNameChange, workflow.DefaultVersion, modelNameVersion) < modelNameVersion {
		return plan.Read(name, data, plan.AnyModelName())
	}
	return p, err
}
