package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// execPlan is a sealed plan with the exec tools named, each echoing its
// name.
func execPlan(t *testing.T, names ...string) *Plan {
	t.Helper()
	tools := map[string]Tool{}
	for _, n := range names {
		tools[n] = Tool{Kind: "exec", Description: "Says " + n + ".", Argv: []string{"echo", n}, Approve: "never"}
	}
	p := &Plan{Agent: Agent{
		Name: "hello", Model: Model{Provider: "test", Name: "test"}, Instructions: "Say hello.",
		Capabilities: Capabilities{Tools: tools},
		Budgets:      Budgets{Deadline: "1m0s", Rounds: 5},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadRefusesFoldedNames: encoding/json matches member names without
// regard to case, Unicode folding included, and merges a repeated object
// into the one before. A plan whose digests were computed from what Go
// decodes (as Read recomputes them) but whose text says something else to
// jq and to a reviewer is refused, naming the member.
func TestReadRefusesFoldedNames(t *testing.T) {
	shown := execPlan(t, "hello")
	data, err := shown.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// What a reader of the file does not see: a second tool, with the
	// digests of the plan that has it.
	hidden := execPlan(t, "hello", "shell")
	shell, err := json.Marshal(hidden.Agent.Capabilities.Tools["shell"])
	if err != nil {
		t.Fatal(err)
	}
	resealed := func(data []byte) []byte {
		data = bytes.ReplaceAll(data, []byte(shown.Digests.Plan), []byte(hidden.Digests.Plan))
		return bytes.ReplaceAll(data, []byte(shown.Digests.Contract), []byte(hidden.Digests.Contract))
	}
	replace := func(old, new string) []byte {
		if bytes.Count(data, []byte(old)) != 1 {
			t.Fatalf("the plan does not hold %q once", old)
		}
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"ARGV", replace(`"argv"`, `"ARGV"`),
			`plan.json: the plan is not as agentc compile writes it: member "ARGV" at /agent/capabilities/tools/hello is not a member agentc writes there`},
		{"long s", resealed(replace(`"tools": {`, `"toolſ": {"shell": `+string(shell)+`}, "tools": {`)),
			`plan.json: the plan is not as agentc compile writes it: member "toolſ" at /agent/capabilities is not a member agentc writes there`},
		{"tools twice", resealed(replace(`"tools": {`, `"tools": {"shell": `+string(shell)+`}, "tools": {`)),
			`plan.json: the plan is not as agentc compile writes it: /agent/capabilities: duplicate member name "tools"`},
		{"instructions folded", replace(`"instructions"`, `"inſtructions"`),
			`plan.json: the plan is not as agentc compile writes it: member "inſtructions" at /agent is not a member agentc writes there`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// What Go decodes is the plan the digests name.
			var p Plan
			if err := json.Unmarshal(tt.data, &p); err != nil {
				t.Fatal(err)
			}
			want := shown
			if _, ok := p.Agent.Capabilities.Tools["shell"]; ok {
				want = hidden
			}
			if err := p.Seal(); err != nil || p.Digests != want.Digests {
				t.Fatalf("the case's digests do not match what Go decodes (%v)", err)
			}
			_, err := Read("plan.json", tt.data)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got\n  %v\nwant\n  %s…", err, tt.want)
			}
		})
	}
	if _, err := Read("plan.json", data); err != nil {
		t.Errorf("the plan as written: %v", err)
	}
}

// TestReadRefusesInexactNumbers: a schema's number written longer than
// the double it rounds to keeps both digests, which read it as the double,
// while the validator reads the decimal as written: 0.1 written to 55
// places is not 0.1 to a maximum. Such a plan is refused wherever the
// number is: the output's schema, a tool's input schema.
func TestReadRefusesInexactNumbers(t *testing.T) {
	const long = "0.1000000000000000055511151231257827021181583404541015625"
	p := execPlan(t, "hello")
	p.Agent.Output = &Output{Name: "answer", Description: "The amount.", Schema: json.RawMessage(`{"type":"number","maximum":0.1}`), Mode: "auto", Enforce: "local", Retries: 2}
	tool := p.Agent.Capabilities.Tools["hello"]
	tool.Input = &Input{Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","minimum":0.1}}}`)}
	p.Agent.Capabilities.Tools["hello"] = tool
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read("plan.json", data); err != nil {
		t.Fatalf("the plan as written: %v", err)
	}
	for _, tt := range []struct{ old, want string }{
		{`"maximum": 0.1`, `/agent/output/schema/maximum`},
		{`"minimum": 0.1`, `/agent/capabilities/tools/hello/input/schema/properties/n/minimum`},
	} {
		edited := bytes.Replace(data, []byte(tt.old), []byte(strings.Replace(tt.old, "0.1", long, 1)), 1)
		if bytes.Equal(edited, data) {
			t.Fatalf("no %s in the plan", tt.old)
		}
		_, err := Read("plan.json", edited)
		if err == nil || !strings.HasPrefix(err.Error(), "plan.json: the plan is not as agentc compile writes it: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v; want the number at %s refused", tt.old, err, tt.want)
		}
	}
}
