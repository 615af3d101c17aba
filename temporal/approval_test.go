package temporal_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/temporal"
)

// searchTwice searches in each of its first two rounds, then answers.
type searchTwice struct{ n atomic.Int32 }

func (m *searchTwice) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if n := m.n.Add(1); n <= 2 {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c" + string(rune('0'+n)), Name: "search", Arguments: json.RawMessage(`{"q":"disk"}`)}}},
			Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
		Usage: agentrt.Usage{Input: 40, Output: 5}}, nil
}

// TestApprovalQueryAndAlways: a run waiting for approval answers which
// call it waits on (key, tool, why, arguments, its deadline); "always"
// approves that call and the tool's next without asking again; once
// decided, nothing waits.
func TestApprovalQueryAndAlways(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := askingPlan(t)
	startWorker(t, c, "approve", &searchTwice{}, data)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	list := func() []temporal.Pending {
		t.Helper()
		v, err := c.QueryWorkflow(ctx, run.GetID(), "", temporal.QueryApprovals)
		if err != nil {
			t.Fatal(err)
		}
		var ps []temporal.Pending
		if err := v.Get(&ps); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	var ps []temporal.Pending
	for ps = list(); len(ps) == 0; ps = list() {
		if ctx.Err() != nil {
			t.Fatal("the run never asked for approval")
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := ps[0]
	if len(ps) != 1 || got.Key != "1.1" || got.Tool != "search" || !strings.Contains(string(got.Arguments), `"disk"`) || got.Why == "" || got.Asked.IsZero() {
		t.Fatalf("waiting: %+v", ps)
	}
	if d := got.Until.Sub(got.Asked); d <= 4*time.Minute || d > 5*time.Minute {
		t.Errorf("the wait ends %v after it began, want the run's deadline (5m from its start)", d)
	}
	if err := c.SignalWorkflow(ctx, run.GetID(), "", temporal.SignalApprove, temporal.Approval{Key: "1.1", Approved: true, ForRun: true, Run: run.GetRunID()}); err != nil {
		t.Fatal(err)
	}
	rep, err := temporal.Wait(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || len(rep.Approvals) != 2 {
		t.Fatalf("report: %s %s, approvals %+v", rep.Outcome, rep.Error, rep.Approvals)
	}
	if a, b := rep.Approvals[0], rep.Approvals[1]; a.By != agentrt.ByPerson || !a.ForRun || b.By != agentrt.ByRun || !b.Approved || b.Key != "2.1" {
		t.Errorf("decisions: %+v", rep.Approvals)
	}
	if ps := list(); len(ps) != 0 {
		t.Errorf("after the run, still waiting: %+v", ps)
	}
}

// searchFirst searches once in each conversation, then answers: the same
// in a run and in the run a reset makes of it.
type searchFirst struct{}

func (searchFirst) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	for _, m := range req.Messages {
		if m.Role == agentrt.ToolRole {
			return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
				Usage: agentrt.Usage{Input: 40, Output: 5}}, nil
		}
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"disk"}`)}}},
		Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
}

// TestApprovalForItsRun: a decision names the run it is for. One naming
// another run, or none, leaves the call waiting (it reached whatever run
// held the workflow ID: a later run under the same ID had its call run
// approved, never listed to anyone); the run's own approves it. A reset
// of the completed run re-applies the decision to the run the reset
// makes, which has another run ID: that run asks again.
func TestApprovalForItsRun(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := askingPlan(t)
	startWorker(t, c, "approve-run", searchFirst{}, data)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "approve-run", WorkflowID: "its-run"})
	if err != nil {
		t.Fatal(err)
	}
	// waiting waits until run runID waits on call 1.1.
	waiting := func(runID string) {
		t.Helper()
		for {
			v, err := c.QueryWorkflow(ctx, "its-run", runID, temporal.QueryApprovals)
			var ps []temporal.Pending
			if err == nil {
				err = v.Get(&ps)
			}
			if err == nil && len(ps) == 1 && ps[0].Key == "1.1" {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("run %s never waited on call 1.1: %v %+v", runID, err, ps)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waiting(run.GetRunID())
	for _, a := range []temporal.Approval{{Key: "1.1", Approved: true, Run: "another-run"}, {Key: "1.1", Approved: true}} {
		if err := c.SignalWorkflow(ctx, "its-run", "", temporal.SignalApprove, a); err != nil {
			t.Fatal(err)
		}
	}
	// A query is answered after the signals sent before it.
	waiting(run.GetRunID())
	if err := c.SignalWorkflow(ctx, "its-run", "", temporal.SignalApprove, temporal.Approval{Key: "1.1", Approved: true, Run: run.GetRunID()}); err != nil {
		t.Fatal(err)
	}
	rep, err := temporal.Wait(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || len(rep.Approvals) != 1 || rep.Approvals[0].By != agentrt.ByPerson {
		t.Fatalf("report: %s %s, approvals %+v", rep.Outcome, rep.Error, rep.Approvals)
	}

	// Reset to its first workflow task: the signals are re-applied.
	var first int64
	it := c.GetWorkflowHistory(ctx, "its-run", run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for first == 0 && it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			first = ev.GetEventId()
		}
	}
	reset, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{Namespace: "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "its-run", RunId: run.GetRunID()},
		Reason:            "again", WorkflowTaskFinishEventId: first, RequestId: "reset-its-run"})
	if err != nil {
		t.Fatal(err)
	}
	waiting(reset.GetRunId())
	if err := c.TerminateWorkflow(ctx, "its-run", reset.GetRunId(), "done"); err != nil {
		t.Fatal(err)
	}
}

// askingPlan is the labeller's plan with its search tool asking for
// approval before each call.
func askingPlan(t *testing.T) []byte {
	t.Helper()
	p, err := plan.Read("plan", labeller(t, labelSchema))
	if err != nil {
		t.Fatal(err)
	}
	search := p.Agent.Capabilities.Tools["search"]
	search.Approve = plan.ApproveAsk
	p.Agent.Capabilities.Tools["search"] = search
	return encoded(t, p)
}
