package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestWithBudgets: a caller's bounds narrow a run's budgets and never
// widen them; bounds that are not bounds are refused.
func TestWithBudgets(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Budgets.Rounds = 3
		a.Budgets.Tokens = 1000
	})
	run := func(b agentrt.Overrides, turns ...turn) *agentrt.Report {
		t.Helper()
		r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: turns}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
		if err != nil {
			t.Fatal(err)
		}
		if r, err = r.WithBudgets(b); err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	one, two, zero, many, small := 1, 2, 0, 100, 30
	// Narrowed: one round, no tool calls, a small token budget.
	if rep := run(agentrt.Overrides{Rounds: &one}, call(10, "search", `{"q":"a"}`), answer(`{"label":"bug"}`, 10)); rep.Bound != agentrt.BoundRounds {
		t.Errorf("rounds 1: bound %q, want rounds", rep.Bound)
	}
	if rep := run(agentrt.Overrides{Tools: &zero}, call(10, "search", `{"q":"a"}`), answer(`{"label":"bug"}`, 10)); rep.Bound != agentrt.BoundToolBudget {
		t.Errorf("tools 0: bound %q, want tool_budget", rep.Bound)
	}
	if rep := run(agentrt.Overrides{Tokens: &small}, prose("thinking", 40), answer(`{"label":"bug"}`, 10)); rep.Bound != agentrt.BoundTokenBudget {
		t.Errorf("tokens 30: bound %q, want token_budget", rep.Bound)
	}
	// Not widened: the plan's three rounds still bound a run asked for 100.
	if rep := run(agentrt.Overrides{Rounds: &many}, prose("a", 10), prose("b", 10), prose("c", 10), prose("d", 10)); rep.Bound != agentrt.BoundRounds || len(rep.Rounds) != 3 {
		t.Errorf("rounds 100: bound %q after %d rounds, want rounds after 3", rep.Bound, len(rep.Rounds))
	}
	// Within both: the run answers.
	if rep := run(agentrt.Overrides{Rounds: &two}, call(10, "search", `{"q":"a"}`), answer(`{"label":"bug"}`, 10)); rep.Outcome != agentrt.OutcomeOK {
		t.Errorf("rounds 2: %s %s", rep.Outcome, rep.Error)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	if err != nil {
		t.Fatal(err)
	}
	neg, none := -1, time.Duration(0)
	for _, b := range []agentrt.Overrides{{Tools: &neg}, {Tokens: &zero}, {Rounds: &zero}, {Deadline: &none}} {
		var ce *agentrt.ConfigError
		if _, err := r.WithBudgets(b); !errors.As(err, &ce) {
			t.Errorf("WithBudgets(%+v): %v, want a ConfigError", b, err)
		}
	}
}

// TestPlanDeadline: a plan whose deadline no run can take (a plan built by
// a program, its digests made again) is refused, not run without one.
func TestPlanDeadline(t *testing.T) {
	for _, d := range []string{"0s", "-5s", "soon"} {
		p := agent(t, func(a *plan.Agent) { a.Budgets.Deadline = d })
		var ce *agentrt.ConfigError
		if _, err := agentrt.New(p, agentrt.Options{Model: &scripted{}}); !errors.As(err, &ce) || ce.Error() != `budgets.deadline: "`+d+`" is not a duration above zero (write e.g. "90s")` {
			t.Errorf("deadline %q: %v, want a ConfigError", d, err)
		}
	}
}
