package agenttest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestMain makes the test binary the child that checks constraints, as
// agentc is (cueproc.Verb).
func TestMain(m *testing.M) {
	cueproc.ServeChild(map[string]cueproc.Job{Job: Serve})
	os.Exit(m.Run())
}

func self(t testing.TB) cueproc.Program {
	p, err := cueproc.Self()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func report(answer string, calls ...agentrt.CallReport) *agentrt.Report {
	return &agentrt.Report{Outcome: agentrt.OutcomeOK, Bound: agentrt.BoundNone, OutputTool: "answer_x",
		Answer: json.RawMessage(answer), Rounds: []agentrt.RoundReport{{Round: 1, ToolCalls: calls}}}
}

func call(name, args string) agentrt.CallReport {
	return agentrt.CallReport{Name: name, Arguments: json.RawMessage(args)}
}

func intp(n int) *int { return &n }

// TestCheck: each kind of expectation passes a run that meets it and
// fails one that does not, positioned in the manifest where it was
// written (the constraint's text starts at agent.cue:10:11).
func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		test plan.Test
		rep  *agentrt.Report
		opts Options
		want []string // the failures, in order; none for a pass
	}{
		{name: "values pass",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{urgency: "high", headline: =~"disk"}`}},
			rep:  report(`{"urgency":"high","headline":"disk full","extra":1}`)},
		{name: "conflict",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{urgency: "high"}`}},
			rep:  report(`{"urgency":"low"}`),
			want: []string{`dir/agent.cue:10:21: expect: urgency: conflicting values "low" and "high"`}},
		{name: "pattern",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{headline: =~"disk"}`}},
			rep:  report(`{"headline":"printer"}`),
			want: []string{`dir/agent.cue:10:22: expect: headline: invalid value "printer" (out of bound =~"disk")`}},
		{name: "field absent",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{urgency: "high"}`}},
			rep:  report(`{}`),
			want: []string{`dir/agent.cue:10:12: expect: urgency: the value has no such field (want "high")`}},
		// Unification completes a value through a disjunction, a list's
		// element pattern or a member pattern as it does through a field:
		// each field it adds is one the answer lacks.
		{name: "field absent in a disjunction",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{owner: {team: "ops"} | null}`}},
			rep:  report(`{"owner":{}}`),
			want: []string{`dir/agent.cue:10:20: expect: owner.team: the value has no such field (want "ops")`}},
		{name: "field absent in every item",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{items: [...{currency: "USD"}]}`}},
			rep:  report(`{"items":[{"currency":"USD"},{}]}`),
			want: []string{`dir/agent.cue:10:24: expect: items.1.currency: the value has no such field (want "USD")`}},
		{name: "field absent in a pattern's member",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{hosts: [string]: {up: true}}`}},
			rep:  report(`{"hosts":{"web":{}}}`),
			want: []string{`dir/agent.cue:10:30: expect: hosts.web.up: the value has no such field (want true)`}},
		{name: "field absent beside a conflict",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{urgency: "high", items: [...{currency: "USD"}]}`}},
			rep:  report(`{"urgency":"low","items":[{}]}`),
			want: []string{`dir/agent.cue:10:21: expect: urgency: conflicting values "low" and "high"`,
				`dir/agent.cue:10:41: expect: items.0.currency: the value has no such field (want "USD")`}},
		{name: "disjunction met",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{owner: {team: "ops"} | null, items: [...{currency: "USD"}]}`}},
			rep:  report(`{"owner":null,"items":[{"currency":"USD","n":1}]}`)},
		{name: "list length with an import",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{labels: list.MinItems(1)}`, Imports: map[string]string{"list": "list"}}},
			rep:  report(`{"labels":[]}`),
			want: []string{`dir/agent.cue:10:20: expect: labels: invalid value [] (does not satisfy list.MinItems(1))`}},
		{name: "aliased import",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{n: s.HasPrefix("a")}`, Imports: map[string]string{"s": "strings"}}},
			rep:  report(`{"n":"abc"}`)},
		{name: "list length by pattern",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{labels: [_, ...]}`}},
			rep:  report(`{"labels":[]}`),
			want: []string{`dir/agent.cue:10:11: expect: labels: incompatible list lengths (0 and 1)`}},
		{name: "fields without braces",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `urgency: "high"`}},
			rep:  report(`{"urgency":"high"}`)},
		{name: "shape only skips values",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{urgency: "high"}`}},
			rep:  report(`{"urgency":"low"}`), opts: Options{ShapeOnly: true}},
		{name: "outcome by default ok",
			test: plan.Test{},
			rep:  &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundDeadline, Error: "deadline"},
			want: []string{"outcome: the run ended error (bound deadline), want ok: deadline"}},
		{name: "outcome and bound declared",
			test: plan.Test{Outcome: "error", Bound: "tool_budget"},
			rep:  &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundDeadline},
			want: []string{"bound: the run ended with bound deadline, want tool_budget"}},
		{name: "max tool calls, the output tool not counted",
			test: plan.Test{MaxToolCalls: intp(1)},
			rep:  report(`{}`, call("a", `{}`), call("b", `{}`), call("answer_x", `{}`)),
			want: []string{"max_tool_calls: the run made 2 tool calls (a, b), want at most 1"}},
		{name: "tool call with arguments",
			test: plan.Test{ToolCalls: []plan.ToolCallExpect{{Name: "get", Arguments: &plan.CUEConstraint{CUE: `{n: >=3}`}}}},
			rep:  report(`{}`, call("get", `{"n":1}`), call("get", `{"n":4}`))},
		{name: "tool call arguments fail",
			test: plan.Test{ToolCalls: []plan.ToolCallExpect{{Name: "get", Arguments: &plan.CUEConstraint{CUE: `{n: >=3}`}}}},
			rep:  report(`{}`, call("get", `{"n":1}`)),
			want: []string{`dir/agent.cue:12:8: tool_calls[0].arguments: n: invalid value 1 (out of bound >=3)`}},
		{name: "tool call refused",
			test: plan.Test{ToolCalls: []plan.ToolCallExpect{{Name: "get", Arguments: &plan.CUEConstraint{CUE: `{n: >=3}`}}}},
			rep: report(`{}`, agentrt.CallReport{Name: "get", Arguments: json.RawMessage(`{"n":4}`), IsError: true, Refused: true,
				Error: "arguments do not match the tool's schema: n: must be at most 3"}),
			want: []string{"tool_calls[0]: the run made no call of get (it called: none; a call of get was refused: arguments do not match the tool's schema: n: must be at most 3)"}},
		{name: "tool not called",
			test: plan.Test{ToolCalls: []plan.ToolCallExpect{{Name: "get"}}},
			rep:  report(`{}`, call("put", `{}`)),
			want: []string{"tool_calls[0]: the run made no call of get (it called: put)"}},
		{name: "constraint that does not compile",
			test: plan.Test{Expect: &plan.CUEConstraint{CUE: `{a: nosuch}`}},
			rep:  report(`{"a":1}`),
			want: []string{`dir/agent.cue:10:15: expect does not compile: a: reference "nosuch" not found`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &plan.Plan{Tests: map[string]plan.Test{"c": c.test}, Sources: map[string]string{
				"tests.c.expect":                 "agent.cue:10:11",
				"tests.c.tool_calls.0.arguments": "agent.cue:12:4",
			}}
			got := New(p, "dir", self(t)).Check(context.Background(), "c", c.rep, c.opts)
			if len(got) != len(c.want) {
				t.Fatalf("failures %q, want %q", got, c.want)
			}
			for i, f := range got {
				if !strings.Contains(f.String(), c.want[i]) {
					t.Errorf("failure %d: %q, want %q", i, f.String(), c.want[i])
				}
			}
		})
	}
}

// TestBudget: checks sharing a budget stop once it is spent: each later
// one fails as not checked, whatever the value, never passes.
func TestBudget(t *testing.T) {
	p := &plan.Plan{Tests: map[string]plan.Test{"c": {Expect: &plan.CUEConstraint{CUE: `{urgency: "high"}`}}},
		Sources: map[string]string{"tests.c.expect": "agent.cue:10:11"}}
	b := NewBudget(time.Nanosecond)
	c := New(p, "dir", self(t)).WithBudget(b)
	if got := c.Check(context.Background(), "c", report(`{"urgency":"high"}`), Options{}); len(got) != 0 {
		t.Fatalf("the first check, within the budget: %v", got)
	}
	// The same case again, on another Checker sharing the budget.
	got := New(p, "dir", self(t)).WithBudget(b).Check(context.Background(), "c", report(`{"urgency":"high"}`), Options{})
	if len(got) != 1 || !strings.Contains(got[0].String(), "expect: not checked: the constraint checks of this command have taken the 1ns they may take in all") {
		t.Errorf("a check past the budget: %v", got)
	}
}
