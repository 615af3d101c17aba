package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentc.dev/agentc/approval"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestRules: a call whose arguments are an instance of approve_if is
// approved by rule; any other is passed on, with the reason.
func TestRules(t *testing.T) {
	hasPrefix := &plan.CUEConstraint{CUE: `{path: strings.HasPrefix("/tmp/")}`, Imports: map[string]string{"strings": "strings"}}
	cases := []struct {
		name string
		con  *plan.CUEConstraint
		mode string
		args string
		rule bool   // approved by rule
		why  string // else: what the next approver is told
	}{
		{"a listed subcommand", &plan.CUEConstraint{CUE: `sub: "log" | "status"`}, "ask", `{"sub":"log"}`, true, ""},
		{"another subcommand", &plan.CUEConstraint{CUE: `sub: "log" | "status"`}, "ask", `{"sub":"push"}`, false, "approve_if does not accept the arguments"},
		{"a field it requires is absent", &plan.CUEConstraint{CUE: `sub: "log"`}, "ask", `{}`, false, "requires fields they lack"},
		{"a standard library import", hasPrefix, "ask", `{"path":"/tmp/x"}`, true, ""},
		{"outside the prefix", hasPrefix, "ask", `{"path":"/etc/passwd"}`, false, "does not accept"},
		{"approve always asks", &plan.CUEConstraint{CUE: `sub: "log"`}, "always", `{"sub":"log"}`, false, ""},
		{"a constraint that does not compile", &plan.CUEConstraint{CUE: `sub: #nowhere`}, "ask", `{"sub":"log"}`, false, "approve_if does not compile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var passed *agentrt.ApprovalRequest
			next := func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
				passed = req
				return agentrt.ApprovalDecision{By: agentrt.ByPerson}, nil
			}
			req := &agentrt.ApprovalRequest{Key: "1.1", Tool: "git", Arguments: json.RawMessage(c.args), Why: "exec tool git", Mode: c.mode, If: c.con}
			d, err := approval.Rules(next)(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if c.rule {
				if !d.Approved || d.By != agentrt.ByRule || passed != nil {
					t.Fatalf("decision %+v, passed on %v; want approved by rule", d, passed != nil)
				}
				return
			}
			if passed == nil || d.By != agentrt.ByPerson {
				t.Fatalf("decision %+v, not passed on", d)
			}
			if !strings.HasPrefix(passed.Why, "exec tool git") || !strings.Contains(passed.Why, c.why) {
				t.Fatalf("passed on with why %q, want it to say %q", passed.Why, c.why)
			}
		})
	}
}
