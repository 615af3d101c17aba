package agenttest

import (
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestCheckFault: each expectation of a fault run passes the runs that
// meet it and fails the others, saying what the run did; a declared one
// is positioned where the manifest declares it.
func TestCheckFault(t *testing.T) {
	p := &plan.Plan{Tests: map[string]plan.Test{"disk": {}}, Sources: map[string]string{"tests.disk.faults.timeout": "agent.cue:12:13"}}
	c := New(p, "dir", self(t))
	base := report(`{"urgency":"high"}`)
	same := report("{\n  \"urgency\": \"high\"\n}")
	other := report(`{"urgency":"low"}`)
	failed := &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone, Error: "model gpt: 400 Bad Request"}
	deadline := &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundDeadline, Error: "the deadline (1s) passed during a model call"}
	tokens := report(`{"urgency":"high"}`)
	tokens.Bound = agentrt.BoundTokenBudget
	for _, tc := range []struct {
		fault, want string
		got         *agentrt.Report
		msg         string // the failure; "" for a pass
	}{
		{"rate_limit", "recovered", same, ""},
		{"rate_limit", "recovered", other, `rate_limit: expected recovered, got outcome ok, bound none, another answer: {"urgency":"low"}`},
		{"rate_limit", "recovered", tokens, `rate_limit: expected recovered, got outcome ok, bound token_budget, the same answer`},
		{"truncated", "recovered", failed, `truncated: expected recovered, got outcome error, bound none: model gpt: 400 Bad Request`},
		{"truncated", "error", failed, ""},
		{"truncated", "error", deadline, `truncated: expected error, got outcome error, bound deadline: the deadline (1s) passed during a model call`},
		{"timeout", "deadline", deadline, ""},
		{"timeout", "recovered", deadline, `dir/agent.cue:12:13: timeout: expected recovered, got outcome error, bound deadline: the deadline (1s) passed during a model call`},
		{"timeout", "deadline", same, `dir/agent.cue:12:13: timeout: expected deadline, got outcome ok, bound none, the same answer`},
	} {
		fails := c.CheckFault("disk", tc.fault, tc.want, base, tc.got)
		switch {
		case tc.msg == "" && len(fails) > 0:
			t.Errorf("%s, want %s: failed: %v", tc.fault, tc.want, fails)
		case tc.msg != "" && (len(fails) != 1 || fails[0].String() != tc.msg):
			t.Errorf("%s, want %s: failures %v, want %q", tc.fault, tc.want, fails, tc.msg)
		}
	}
}
