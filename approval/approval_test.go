package approval_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"agentc.dev/agentc/approval"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// TestMain makes the test binary the child that evaluates approve_if, as
// agentc is (cueproc.Verb).
func TestMain(m *testing.M) {
	cueproc.ServeChild(map[string]cueproc.Job{approval.Job: approval.Serve})
	os.Exit(m.Run())
}

func self(t testing.TB) cueproc.Program {
	p, err := cueproc.Self()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

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
		{"a comprehension the arguments make unbounded", &plan.CUEConstraint{CUE: `{n: int, k: len([for i in list.Range(0, n, 1) for j in list.Range(0, n, 1) {i + j}])}`, Imports: map[string]string{"list": "list"}}, "ask", `{"n":100000}`, false, "approve_if did not decide: the evaluation did not end within its bounds"},
		{"arguments larger than evaluated", &plan.CUEConstraint{CUE: `{}`}, "ask", `{"s":"` + strings.Repeat("x", cueproc.MaxInput) + `"}`, false, "approve_if was not evaluated: the arguments are larger than"},
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
			d, err := approval.Rules(self(t))(next)(context.Background(), req)
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

// FuzzAccepts: approve_if against any arguments decides, without panic,
// and approves only arguments that are JSON and an instance of it. It
// runs in this process: the constraints are small and the arguments are
// bounded by the fuzzer's inputs; the child's bounds are TestRules's.
func FuzzAccepts(f *testing.F) {
	cons := []*plan.CUEConstraint{
		{CUE: `sub: "log" | "status" | =~"^show "`},
		{CUE: `close({path: strings.HasPrefix("/tmp/") & !~"\\.\\."})`, Imports: map[string]string{"strings": "strings"}},
		{CUE: `{n: int & <10, tags: [...string] & list.MaxItems(3)}`, Imports: map[string]string{"list": "list"}},
	}
	for _, s := range []string{`{"sub":"log"}`, `{"sub":"show x"}`, `{"path":"/tmp/a"}`, `{"path":"/tmp/../etc"}`, `{"n":3,"tags":["a"]}`, `{"n":1e400}`, `not json`, `{"sub":"log","sub":"push"}`} {
		for i := range cons {
			f.Add(i, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, i int, args []byte) {
		if i < 0 || len(args) > 4096 {
			return
		}
		con := cons[i%len(cons)]
		ok, why := approval.Accepts(con, args)
		if ok == (why != "") {
			t.Fatalf("Accepts(%s, %q) = %v, %q", con.CUE, args, ok, why)
		}
		if !ok {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(args, &v); err != nil {
			t.Fatalf("Accepts(%s, %q) approved arguments that are not a JSON object: %v", con.CUE, args, err)
		}
		switch i % len(cons) {
		case 0:
			s, _ := v["sub"].(string)
			if s != "log" && s != "status" && !strings.HasPrefix(s, "show ") {
				t.Fatalf("approved sub %q", s)
			}
		case 1:
			p, _ := v["path"].(string)
			if !strings.HasPrefix(p, "/tmp/") || strings.Contains(p, "..") || len(v) != 1 {
				t.Fatalf("approved %q", args)
			}
		}
	})
}

// BenchmarkRules is the cost of deciding a call by approve_if in a child
// (what agentc does), and BenchmarkAccepts the evaluation alone.
func BenchmarkRules(b *testing.B) {
	next := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{}, nil
	}
	a := approval.Rules(self(b))(next)
	req := &agentrt.ApprovalRequest{Key: "1.1", Tool: "git", Arguments: json.RawMessage(`{"sub":"log"}`), Mode: "ask", If: &plan.CUEConstraint{CUE: `sub: "log" | "status"`}}
	for b.Loop() {
		if d, err := a(context.Background(), req); err != nil || !d.Approved {
			b.Fatal(d, err)
		}
	}
}

func BenchmarkAccepts(b *testing.B) {
	con := &plan.CUEConstraint{CUE: `sub: "log" | "status"`}
	for b.Loop() {
		if ok, why := approval.Accepts(con, []byte(`{"sub":"log"}`)); !ok {
			b.Fatal(why)
		}
	}
}
