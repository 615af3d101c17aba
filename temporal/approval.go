package temporal

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	agentrt "agentc.dev/agentc/runtime"
)

// SignalApprove is the signal that decides a call of a run waiting for
// approval (agentc approve WORKFLOW_ID CALL_KEY yes|no).
const SignalApprove = "approve"

// QueryApprovals is the query that returns the calls a run waits to have
// approved ([]Pending), in the order they were asked.
const QueryApprovals = "approvals"

// Approval is the payload of SignalApprove: the decision about the call
// whose effect key is Key. ForRun, with Approved, approves every later
// call of the tool in the run too, but for a tool whose approve is
// "always".
//
// Run is the run ID of the run the decision is for (agentc approve names
// the run it found going under the workflow ID): a run ignores a
// decision for another run, or for none (runs started before
// approvalRunVersion take any), so that a decision reaches neither a
// later run under the same workflow ID nor, re-applied by a reset, the
// run the reset makes.
type Approval struct {
	Run      string `json:"run,omitempty"`
	Key      string `json:"key"`
	Approved bool   `json:"approved"`
	ForRun   bool   `json:"for_run,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Pending is a call a run waits to have approved, as QueryApprovals
// returns it: what a person needs to decide it.
type Pending struct {
	agentrt.ApprovalRequest
	// Asked is when the run asked, on the workflow's clock; Until when
	// its deadline ends the wait (zero for none).
	Asked time.Time `json:"asked"`
	Until time.Time `json:"until,omitzero"`
}

// signalApprover is a run workflow's approver: a call that needs approval
// waits for its signal, as long as the run's deadline allows. The wait
// is the workflow's: it outlives any worker, and a signal sent while no
// worker runs is kept in the history. A signal for a call not yet asked
// about is kept for it.
type signalApprover struct {
	ctx workflow.Context
	// run, when set, is this run's ID: a decision naming another is
	// ignored (approvalRunVersion).
	run     string
	ch      workflow.ReceiveChannel
	got     map[string]Approval
	pending []Pending // the calls waiting, for QueryApprovals
	// cancel, when set, cancels the run's context: a wait the workflow's
	// cancellation ends cancels it first, so that the run ends
	// interrupted (approvalCancelVersion).
	cancel context.CancelFunc
}

func newSignalApprover(ctx workflow.Context) *signalApprover {
	a := &signalApprover{ctx: ctx, ch: workflow.GetSignalChannel(ctx, SignalApprove), got: map[string]Approval{}}
	// Runs started before version 1 (approvalRunVersion) took a decision
	// for any run of their workflow ID: their histories replay as they
	// were made.
	if workflow.GetVersion(ctx, approvalRunChange, workflow.DefaultVersion, approvalRunVersion) >= approvalRunVersion {
		a.run = workflow.GetInfo(ctx).WorkflowExecution.RunID
	}
	return a
}

// approvalRunChange and approvalRunVersion name the change that made a
// run take only the decisions that name it (Approval.Run).
const (
	approvalRunChange  = "agentc.approval-run"
	approvalRunVersion = workflow.Version(1)
)

// waiting returns the calls waiting for approval (QueryApprovals).
func (a *signalApprover) waiting() ([]Pending, error) {
	return append([]Pending{}, a.pending...), nil
}

func (a *signalApprover) approve(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
	a.pending = append(a.pending, Pending{ApprovalRequest: *req, Asked: workflow.Now(a.ctx), Until: req.Deadline})
	defer func() {
		a.pending = slices.DeleteFunc(a.pending, func(p Pending) bool { return p.Key == req.Key })
	}()
	for {
		if s, ok := a.got[req.Key]; ok {
			delete(a.got, req.Key)
			return agentrt.ApprovalDecision{Approved: s.Approved, ForRun: s.Approved && s.ForRun, By: agentrt.ByPerson, Reason: s.Reason}, nil
		}
		var err error
		tctx, cancelTimer := workflow.WithCancel(a.ctx)
		sel := workflow.NewSelector(a.ctx)
		sel.AddReceive(a.ch, func(c workflow.ReceiveChannel, _ bool) {
			var s Approval
			c.Receive(a.ctx, &s)
			if a.run == "" || s.Run == a.run {
				a.got[s.Key] = s
			}
		})
		cancelled := func() {
			if a.cancel != nil {
				a.cancel()
			}
			err = fmt.Errorf("the workflow was cancelled waiting for approval: %w", context.Canceled)
		}
		sel.AddReceive(a.ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled() })
		if !req.Deadline.IsZero() {
			left := req.Deadline.Sub(workflow.Now(a.ctx))
			if left <= 0 {
				cancelTimer()
				return agentrt.ApprovalDecision{}, fmt.Errorf("the deadline passed waiting for approval of call %s: %w", req.Key, context.DeadlineExceeded)
			}
			sel.AddFuture(workflow.NewTimer(tctx, left), func(f workflow.Future) {
				if a.cancel != nil && f.Get(a.ctx, nil) != nil {
					// Cancelled with the workflow, not fired: no deadline.
					cancelled()
					return
				}
				err = fmt.Errorf("the deadline passed waiting for approval of call %s: %w", req.Key, context.DeadlineExceeded)
			})
		}
		sel.Select(a.ctx)
		cancelTimer()
		if err != nil {
			return agentrt.ApprovalDecision{}, err
		}
	}
}
