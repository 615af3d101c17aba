package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// label is an agent to call, with its instructions and output schema.
func label(t testing.TB, instructions, schema string) *Plan {
	t.Helper()
	p := &Plan{Agent: Agent{
		Name: "label", Model: Model{Provider: "test", Name: "test"}, Instructions: instructions,
		Output: &Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(schema), Mode: "auto", Enforce: "local", Retries: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// calling returns the agent of testPlan with an agent tool "label" that
// calls child, sealed; edit, if set, changes it first.
func calling(t testing.TB, child *Plan, edit func(*Plan)) (*Plan, error) {
	t.Helper()
	p := testPlan(t)
	p.Agent.Capabilities.Tools["label"] = Tool{Kind: "agent", Description: "Label it.", Path: "agents/label.cue"}
	p.Callees = map[string]Callee{"label": {Path: "agents/label.cue", Dir: "agents", Contract: child.Digests.Contract, Plan: child}}
	if edit != nil {
		edit(p)
	}
	return p, p.Seal()
}

func mustCall(t testing.TB, child *Plan) *Plan {
	t.Helper()
	p, err := calling(t, child, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCalleeDigests: what a callee does drives its caller's run, so any
// change to the callee's plan moves the caller's plan digest; the callee
// is not part of the caller's contract, which stays.
func TestCalleeDigests(t *testing.T) {
	base := mustCall(t, label(t, "Label the issue.", `{"enum":["bug","feature"]}`))
	if base.Digests.Contract != testPlan(t).Digests.Contract {
		t.Error("calling an agent moved the caller's contract digest")
	}
	for _, tt := range []struct {
		name  string
		child *Plan
	}{
		{"instructions", label(t, "Label the issue, carefully.", `{"enum":["bug","feature"]}`)},
		{"contract", label(t, "Label the issue.", `{"enum":["bug","feature","question"]}`)},
	} {
		p := mustCall(t, tt.child)
		if p.Digests.Plan == base.Digests.Plan {
			t.Errorf("%s: the callee changed, the caller's plan digest did not", tt.name)
		}
		if p.Digests.Contract != base.Digests.Contract {
			t.Errorf("%s: the callee changed the caller's contract digest", tt.name)
		}
	}
	// Where the callee's relative paths resolve drives its run too.
	moved, err := calling(t, label(t, "Label the issue.", `{"enum":["bug","feature"]}`), func(p *Plan) {
		c := p.Callees["label"]
		c.Dir = "elsewhere"
		p.Callees["label"] = c
	})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Digests.Plan == base.Digests.Plan {
		t.Error("the callee's directory moved, the caller's plan digest did not")
	}
}

// TestSealChecksCallees: a plan's callees are its agent tools, each with
// the plan of an agent that answers, under the contract recorded and
// pinned.
func TestSealChecksCallees(t *testing.T) {
	child := label(t, "Label the issue.", `{"enum":["bug","feature"]}`)
	quiet := &Plan{Agent: Agent{Name: "quiet", Model: Model{Provider: "test", Name: "test"}, Instructions: "x"}}
	if err := quiet.Seal(); err != nil {
		t.Fatal(err)
	}
	other := label(t, "Label.", `{"type":"string"}`).Digests.Contract
	tests := []struct {
		name string
		edit func(p *Plan)
		want string
	}{
		{"no callee", func(p *Plan) { p.Callees = nil }, `tool "label": the plan holds no compiled agent for it`},
		{"no plan", func(p *Plan) { p.Callees["label"] = Callee{Path: "agents/label.cue", Contract: child.Digests.Contract} }, `tool "label": the plan holds no compiled agent for it`},
		{"other path", func(p *Plan) {
			c := p.Callees["label"]
			c.Path = "label.cue"
			p.Callees["label"] = c
		}, `tool "label": the called agent compiled in is "label.cue", not the tool's "agents/label.cue"`},
		{"other contract", func(p *Plan) {
			c := p.Callees["label"]
			c.Contract = other
			p.Callees["label"] = c
		}, `tool "label": the called agent's contract is ` + string(child.Digests.Contract) + ", not the " + string(other) + " recorded for it"},
		{"pin moved", func(p *Plan) {
			tl := p.Agent.Capabilities.Tools["label"]
			tl.Pin = string(other)
			p.Agent.Capabilities.Tools["label"] = tl
		}, `tool "label": the called agent's contract moved: pinned ` + string(other)},
		{"no output", func(p *Plan) {
			p.Callees["label"] = Callee{Path: "agents/label.cue", Contract: quiet.Digests.Contract, Plan: quiet}
		}, `tool "label": the called agent declares no output`},
		{"no tool", func(p *Plan) { p.Callees["extra"] = p.Callees["label"] }, `callee "extra": the agent has no agent tool of that name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := calling(t, child, tt.edit)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReadCallees: a plan reads with the plans of the agents it calls,
// each verified as a plan of its own; a damaged one is refused, positioned
// where it is in the file.
func TestReadCallees(t *testing.T) {
	child := label(t, "Label the issue.", `{"enum":["bug","feature"]}`)
	p := mustCall(t, child)
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digests != p.Digests || got.Callees["label"].Plan.Digests != child.Digests {
		t.Errorf("digests %v and the callee's %v, want %v and %v", got.Digests, got.Callees["label"].Plan.Digests, p.Digests, child.Digests)
	}
	// Where the callee's plan, and its format, begin.
	at := func(marker string) string {
		i := bytes.Index(data, []byte(marker))
		if i < 0 {
			t.Fatalf("no %q in the plan", marker)
		}
		i += len(marker) - 1
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return fmt.Sprintf("plan.json:%d:%d: ", line, i-bytes.LastIndexByte(data[:i], '\n'))
	}
	planAt := at(`"label": {
      "contract": "` + string(child.Digests.Contract) + `",
      "dir": "agents",
      "path": "agents/label.cue",
      "plan": {`)
	formatAt := at(`"format": "`)
	replace := func(old, new string) []byte {
		if bytes.Count(data, []byte(old)) != 1 {
			t.Fatalf("the plan does not hold %q once", old)
		}
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"tampered callee", replace("Label the issue.", "Close the issue."),
			planAt + "callees.label.plan: the plan's content does not match its digests; it was changed after it was compiled (plan: recorded " + string(child.Digests.Plan)},
		{"callee of an older format", bytes.Replace(data, []byte(`"format": "`+Format+`"`), []byte(`"format": "agentc.plan/v3"`), 1),
			formatAt + `callees.label.plan: the plan is of format "agentc.plan/v3", older than the "` + Format + `" this agentc reads`},
		{"callee without a format", bytes.Replace(data, []byte(`"format": "`+Format+`"`), []byte(`"format": ""`), 1),
			formatAt + `callees.label.plan: not an agentc plan: no "format" field`},
		{"callee without its plan", dropCalleePlan(t, data), `plan.json: tool "label": the plan holds no compiled agent for it; compile the agent again (agentc compile)`},
		// encoding/json matches keys in any case, and takes the last of
		// two: where the file's keys do not lead to the callee's plan as
		// written, its problem is not positioned.
		{"callees under a key in other case", bytes.Replace(replace("Label the issue.", "Close the issue."), []byte(`"callees": {`), []byte(`"Callees": {`), 1),
			"plan.json: callees.label.plan: the plan's content does not match its digests"},
		{"callees twice, null first", bytes.Replace(replace("Label the issue.", "Close the issue."), []byte(`"callees": {`), []byte(`"callees": null, "callees": {`), 1),
			"plan.json: callees.label.plan: the plan's content does not match its digests"},
		{"resealed callee", resealCallee(t, data), "plan.json: the plan's content does not match its digests; it was changed after it was compiled (plan: recorded " + string(p.Digests.Plan)},
		{"callee's contract", replace(`"contract": "`+string(child.Digests.Contract)+`",
      "dir"`, `"contract": "`+string(testPlan(t).Digests.Contract)+`",
      "dir"`), `plan.json: tool "label": the called agent's contract is ` + string(child.Digests.Contract)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read("plan.json", tt.data)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got\n  %v\nwant\n  %s…", err, tt.want)
			}
		})
	}
}

// dropCalleePlan removes the callee's plan from an encoded plan.
func dropCalleePlan(t *testing.T, data []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["callees"].(map[string]any)["label"].(map[string]any), "plan")
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resealCallee changes the callee's instructions in an encoded plan and
// reseals the callee alone, as someone editing it would: the callee reads,
// the caller, whose digest covers the callee's, does not.
func resealCallee(t *testing.T, data []byte) []byte {
	t.Helper()
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	c := p.Callees["label"]
	c.Plan.Agent.Instructions = "Close the issue."
	if err := c.Plan.Seal(); err != nil {
		t.Fatal(err)
	}
	out, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadNesting: a plan whose agents call agents past MaxCalleeDepth, or
// that holds more than MaxAgents, is refused before any digest is
// computed.
func TestReadNesting(t *testing.T) {
	seal := func(p *Plan) *Plan {
		if err := p.Seal(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// wrap returns an agent whose n tools each call child.
	wrap := func(child *Plan, n int) *Plan {
		a := label(t, "Ask.", `{"type":"string"}`).Agent
		a.Capabilities.Tools = map[string]Tool{}
		callees := map[string]Callee{}
		for i := range n {
			name := fmt.Sprintf("t%d", i)
			a.Capabilities.Tools[name] = Tool{Kind: "agent", Description: "Ask.", Path: name + ".cue"}
			callees[name] = Callee{Path: name + ".cue", Dir: ".", Contract: child.Digests.Contract, Plan: child}
		}
		return seal(&Plan{Agent: a, Callees: callees})
	}
	leaf := label(t, "Answer.", `{"type":"string"}`)
	deep := leaf
	for range MaxCalleeDepth {
		deep = wrap(deep, 1)
	}
	wide := wrap(wrap(leaf, 8), 8) // 1 + 8 + 64 agents
	// As deep as allowed, and too many: 1 + 1 + 10 × 7 agents.
	shallower := leaf
	for range MaxCalleeDepth - 2 {
		shallower = wrap(shallower, 1)
	}
	deepAndWide := wrap(wrap(shallower, 10), 1)
	tests := []struct {
		name string
		p    *Plan
		want string // "" when it reads
	}{
		{"deepest allowed", deep, ""},
		{"most agents allowed", wrap(leaf, MaxAgents-1), ""},
		{"one deeper", wrap(deep, 1), fmt.Sprintf("plan.json: agents call agents %d deep in this plan, more than the %d agentc allows", MaxCalleeDepth+1, MaxCalleeDepth)},
		{"too many", wide, fmt.Sprintf("plan.json: the plan holds 73 agents (callees of callees counted each time they are called), more than the %d agentc allows", MaxAgents)},
		{"too many at the deepest allowed", deepAndWide, fmt.Sprintf("plan.json: the plan holds 72 agents (callees of callees counted each time they are called), more than the %d agentc allows", MaxAgents)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read("plan.json", data)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}
