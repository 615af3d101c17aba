package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/temporal"
)

// looper is a plan whose agent may call its search tool once, in at most
// 3 rounds, within 5 minutes.
func looper(t testing.TB) []byte {
	t.Helper()
	one := 1
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "looper",
		Model:        plan.Model{Provider: "openai", Name: "m1"},
		Instructions: "Search, then label.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"search": {Kind: "exec", Description: "Search.", Approve: plan.ApproveNever,
			Argv: []string{"echo", "found {{.q}}"}, Timeout: "10s", MaxBytes: 4096,
			Input: &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}}}},
		Output: &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(labelSchema),
			Mode: "auto", Enforce: "local", Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
		Budgets:  plan.Budgets{Deadline: "5m", Tools: &one, Rounds: 3},
	}}
	return encoded(t, p)
}

// looping is a model that searches in every turn it is free to, and
// answers when it must; it counts its calls.
type looping struct {
	mu    sync.Mutex
	calls int
}

func (m *looping) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	if req.ToolChoice.Mode == agentrt.ChooseTool && req.ToolChoice.Name == req.OutputTool {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
			Usage: agentrt.Usage{Input: 40, Output: 5}}, nil
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c" + string(rune('0'+n%10)), Name: "search", Arguments: json.RawMessage(`{"q":"disk"}`)}}},
		Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
}

func (m *looping) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func intp(n int) *int { return &n }

// TestClientBudgets: a client's budgets narrow the allowed plan's, never
// widen them. Bounds looser than the plan's (more tool calls, more
// rounds, a longer deadline) leave the plan's: its tool budget of 1 ends
// the run at its second tool call, and no call is given more time than
// the plan's deadline. A tighter bound holds. A bound that is not one (no
// tokens, a deadline of 0 or none, a negative tool budget, rounds of 0)
// is refused, never retried, before any call. Every history replays.
func TestClientBudgets(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := looper(t)
	m := &looping{}
	startWorker(t, c, "budgets", m, data)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ids []string

	// Wider: the plan's bounds hold.
	rep, id, err := temporal.Submit(ctx, c, data, temporal.RunInput{Budgets: temporal.Budgets{Tools: intp(30), Rounds: intp(30), Tokens: intp(1 << 30), Deadline: "100000h"}},
		temporal.SubmitOptions{TaskQueue: "budgets"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	if rep.Bound != agentrt.BoundToolBudget {
		t.Errorf("budgets wider than the plan's: bound %s (%s); want the plan's tool budget", rep.Bound, rep.Error)
	}
	tools, longest := scheduled(t, ctx, c, id)
	if tools != 1 {
		t.Errorf("budgets wider than the plan's: %d tool calls; the plan allows 1", tools)
	}
	if longest > 5*time.Minute {
		t.Errorf("budgets wider than the plan's: a call was given %s; the plan's deadline is 5m", longest)
	}

	// Tighter: the client's bound holds.
	rep, id, err = temporal.Submit(ctx, c, data, temporal.RunInput{Budgets: temporal.Budgets{Tools: intp(0), Deadline: "1m"}},
		temporal.SubmitOptions{TaskQueue: "budgets"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	tools, longest = scheduled(t, ctx, c, id)
	if rep.Bound != agentrt.BoundToolBudget || tools != 0 || longest > time.Minute {
		t.Errorf("budgets tighter than the plan's: bound %s, %d tool calls, a call given %s; want the tool budget of 0 to end it within a minute", rep.Bound, tools, longest)
	}

	// Not bounds: refused.
	before := m.count()
	for _, c2 := range []struct {
		name string
		b    temporal.Budgets
		want string
	}{
		{"tokens 0", temporal.Budgets{Tokens: intp(0)}, "the token budget 0 is not above zero"},
		{"deadline 0s", temporal.Budgets{Deadline: "0s"}, "the deadline 0s is not above zero"},
		{"deadline -1h", temporal.Budgets{Deadline: "-1h"}, "the deadline -1h0m0s is not above zero"},
		{"deadline soon", temporal.Budgets{Deadline: "soon"}, `budgets.deadline: time: invalid duration "soon"`},
		{"tools -1", temporal.Budgets{Tools: intp(-1)}, "the tool budget -1 is below zero"},
		{"rounds 0", temporal.Budgets{Rounds: intp(0)}, "the rounds bound 0 is not above zero"},
	} {
		run, err := temporal.Start(ctx, c, data, temporal.RunInput{Budgets: c2.b}, temporal.SubmitOptions{TaskQueue: "budgets"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.GetID())
		var rep agentrt.Report
		err = run.Get(ctx, &rep)
		var app *sdktemporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != temporal.ErrRefused || !app.NonRetryable() || !strings.Contains(app.Message(), c2.want) {
			t.Errorf("budgets %s: %v (outcome %q, bound %q); want a refusal, never retried, that says %q", c2.name, err, rep.Outcome, rep.Bound, c2.want)
		}
		if n, _ := scheduled(t, ctx, c, run.GetID()); n != 0 {
			t.Errorf("budgets %s: %d tool calls scheduled", c2.name, n)
		}
	}
	if n := m.count() - before; n != 0 {
		t.Errorf("the model was called %d times for runs whose budgets are not bounds", n)
	}

	// Each history replays as workflow code.
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: func(temporal.ModelCall) (agentrt.Model, error) { return m, nil }, Allowed: digests(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		replayer := worker.NewWorkflowReplayer()
		w.RegisterWorkflow(replayer)
		if err := replayer.ReplayWorkflowExecution(ctx, c.WorkflowService(), nil, "default", workflow.Execution{ID: id}); err != nil {
			t.Errorf("replaying %s: %v", id, err)
		}
	}
}

// scheduled returns how many tool calls a run's history schedules, and
// the longest time any activity it schedules is given to close.
func scheduled(t *testing.T, ctx context.Context, c client.Client, id string) (tools int, longest time.Duration) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		a := ev.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		if a.GetActivityType().GetName() == temporal.ToolActivity {
			tools++
		}
		if d := a.GetScheduleToCloseTimeout().AsDuration(); d > longest {
			longest = d
		}
	}
	return tools, longest
}
