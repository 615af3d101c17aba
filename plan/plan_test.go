package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testPlan(t testing.TB) *Plan {
	t.Helper()
	tools := 3
	p := &Plan{
		Agent: Agent{
			Name:         "triage",
			Model:        Model{Provider: "test", Name: "test"},
			Instructions: "Triage the issue.",
			Capabilities: Capabilities{Provides: "triage.issue", Tools: map[string]Tool{
				"docs": {Kind: "fs", Description: "Docs.", Root: "docs", Ops: []string{"read"}, MaxBytes: 1024},
			}},
			Output: &Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(`{"enum":["bug","feature"],"maximum":1.50}`),
				Mode: "auto", Enforce: "local", Retries: 2},
			Budgets: Budgets{Deadline: "1m0s", Tools: &tools},
		},
		Sources: map[string]string{"output.schema": "triage.cue:12:2"},
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEncodeReadRoundTrip(t *testing.T) {
	p := testPlan(t)
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := testPlan(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("encoding the same plan twice gave different bytes")
	}
	got, err := Read("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digests != p.Digests {
		t.Errorf("digests %v, want %v", got.Digests, p.Digests)
	}
	if !strings.Contains(string(data), `"maximum": 1.5`) {
		t.Errorf("schema numbers are not canonical in the plan:\n%s", data)
	}
}

// TestReadRefuses: every way a plan can be damaged is refused with a clear,
// positioned error.
func TestReadRefuses(t *testing.T) {
	data, err := testPlan(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) []byte {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("plan has no %q", old)
		}
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"tampered instructions", replace("Triage the issue.", "Close every issue."), "plan: recorded"},
		{"tampered schema", replace(`"bug"`, `"bugs"`), "contract: recorded"},
		{"tampered digest", replace(`"plan": "blake3:`, `"plan": "blake3:0`), "does not match its digests"},
		{"truncated", data[:len(data)/2], "plan.json:"},
		{"truncated message", data[:len(data)/2], "truncated"},
		{"unknown format", replace(Format, "agentc.plan/v9"), `unknown plan format "agentc.plan/v9"`},
		{"no format", []byte(`{"agent": {}}`), "not an agentc plan"},
		{"unknown field", replace(`"format":`, `"extra": 1, "format":`), `unknown field "extra"`},
		{"not json", []byte("format = v1\n"), "plan.json:1:2: not valid JSON"},
		{"wrong type", replace(`"retries": 2`, `"retries": "two"`), "plan.json:"},
		{"trailing data", append(append([]byte{}, data...), []byte("{}")...), "after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read("plan.json", tt.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestSourcesOutsideDigest: where an agent was written does not change
// what it does.
func TestSourcesOutsideDigest(t *testing.T) {
	a, b := testPlan(t), testPlan(t)
	b.Sources = map[string]string{"output.schema": "elsewhere.cue:1:1"}
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	if a.Digests != b.Digests {
		t.Error("moving the source changed the digests")
	}
}

// FuzzRead: reading a plan never panics; a plan it accepts encodes to bytes
// it accepts again, with the same digests.
func FuzzRead(f *testing.F) {
	p := &Plan{Agent: Agent{Name: "a", Model: Model{Provider: "test", Name: "t"}, Instructions: "x",
		Output: &Output{Name: "answer", Description: "d", Schema: json.RawMessage(`{"type":"string"}`)}}}
	if err := p.Seal(); err != nil {
		f.Fatal(err)
	}
	data, err := p.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Add([]byte(`{"format":"` + Format + `"}`))
	caller, err := mustCall(f, label(f, "Label the issue.", `{"enum":["bug","feature"]}`)).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(caller)
	// A tool sent strict: its lowering in tool_inputs.
	tooled := *p
	tooled.Agent.Model = Model{Provider: "openai", Name: "gpt-4o"}
	tooled.Agent.Capabilities.Tools = map[string]Tool{"look": {Kind: "exec", Description: "d", Argv: []string{"true"},
		Input: &Input{Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}}
	tooled.ToolInputs = map[string]*Lowering{"look": {Provider: "openai", Mode: ModeTool, Strict: true, Nullable: []string{"/properties/q"},
		Schema: json.RawMessage(`{"additionalProperties":false,"properties":{"q":{"type":["string","null"]}},"required":["q"],"type":"object"}`)}}
	if err := tooled.Seal(); err != nil {
		f.Fatal(err)
	}
	if data, err = tooled.Encode(); err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read("plan.json", data)
		if err != nil {
			return
		}
		out, err := p.Encode()
		if err != nil {
			t.Fatalf("an accepted plan does not encode: %v", err)
		}
		q, err := Read("plan.json", out)
		if err != nil {
			t.Fatalf("an encoded plan is refused: %v", err)
		}
		if q.Digests != p.Digests {
			t.Fatalf("digests changed: %v, then %v", p.Digests, q.Digests)
		}
	})
}

// TestIsPlan: a plan of any format version is told from a manifest by its
// format field; text that is not JSON is no plan.
func TestIsPlan(t *testing.T) {
	data, err := testPlan(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		data string
		want bool
	}{
		{string(data), true},
		{`{"format": "agentc.plan/v1"}`, true},
		{`{"format": "agentc.plan/v99", "agent": 1}`, true},
		{`{"name": "triage", "instructions": "Triage the issue."}`, false},
		{`{"format": "agentc.manifest/v1"}`, false},
		{`{"format": "agentc.plan/v4"`, false},
		{`["agentc.plan/v4"]`, false},
	} {
		if got := IsPlan([]byte(tt.data)); got != tt.want {
			t.Errorf("IsPlan(%.40q) = %v, want %v", tt.data, got, tt.want)
		}
	}
}

// TestContractAgent: the contract JSON a lock keeps reads back as an
// agent with the same contract, and nothing else of the agent.
func TestContractAgent(t *testing.T) {
	p := testPlan(t)
	p.Agent.Input = &Input{Schema: json.RawMessage(`{"type":"object"}`)}
	want, err := ContractDigest(&p.Agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ContractJSON(&p.Agent)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ContractAgent(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ContractDigest(a); err != nil || got != want {
		t.Errorf("contract digest read back %s (%v), want %s", got, err, want)
	}
	if a.Name != "" || a.Instructions != "" || len(a.Capabilities.Tools) != 0 {
		t.Errorf("more than the contract read back: %+v", a)
	}
	if _, err := ContractAgent([]byte(`{"provides":"x","model":{}}`)); err == nil {
		t.Error("a contract with a member no contract has read without error")
	}
}

// TestReadModelNames: a plan edited and sealed again to name a model with
// a control character or one not shown, as its agent's model, a fallback,
// an escalation or a called agent's model, is refused, positioned at the field (or the
// list that holds it); the names providers and servers use are read.
func TestReadModelNames(t *testing.T) {
	for _, tt := range []struct {
		name, want, at string
		edit           func(*Plan)
	}{
		{"model", `agent.model.name: model "test\n::error::x": it holds a control character`, `"name"`,
			func(p *Plan) { p.Agent.Model.Name = "test\n::error::x" }},
		{"fallback", `agent.model.fallback.models[1]: model "openai:gpt\x1b[2J": it holds a control character`, `"models"`,
			func(p *Plan) {
				p.Agent.Model.Fallback = &Fallback{Models: []string{"openai:gpt-4.1", "openai:gpt\x1b[2J"}}
			}},
		{"escalation", `agent.strategy.escalate.model: model "gpt\u009b31m": it holds a control character`, `"model"`,
			func(p *Plan) { p.Agent.Strategy.Escalate = &Escalate{AfterInvalid: 1, Model: "gpt\u009b31m"} }},
		{"hidden", `agent.model.name: model "gpt-4o\u202e": it holds a character that is not shown`, `"name"`,
			func(p *Plan) { p.Agent.Model.Name = "gpt-4o\u202e" }},
		{"hidden fallback", `agent.model.fallback.models[0]: model "openai:gpt\u200b": it holds a character that is not shown`, `"models"`,
			func(p *Plan) { p.Agent.Model.Fallback = &Fallback{Models: []string{"openai:gpt\u200b"}} }},
		{"compiled fallback", `fallbacks[0].model.name: model "gpt\x7f": it holds a control character`, `"fallbacks"`,
			func(p *Plan) { p.Fallbacks = []FallbackModel{{Model: Model{Provider: "openai", Name: "gpt\x7f"}}} }},
		{"callee", `callees.label.plan.agent.model.name: model "test\t": it holds a control character`, `"name"`,
			func(p *Plan) {
				child := label(t, "Label the issue.", `{"enum":["bug","feature"]}`)
				child.Agent.Model.Name = "test\t"
				if err := child.Seal(); err != nil {
					t.Fatal(err)
				}
				*p = *mustCall(t, child)
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := testPlan(t)
			tt.edit(p)
			if err := p.Seal(); err != nil {
				t.Fatal(err)
			}
			data, err := p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read("plan.json", data)
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			// At the value of the field named, or of the list that holds it.
			if lines := strings.Split(string(data), "\n"); pe.Line < 1 || !strings.HasSuffix(lines[pe.Line-1][:pe.Column-1], tt.at+": ") {
				t.Errorf("error at %d:%d, want it at the value of %s", pe.Line, pe.Column, tt.at)
			}
			if _, err := Read("plan.json", data, AnyModelName()); err != nil {
				t.Errorf("AnyModelName: %v", err)
			}
		})
	}
	for _, name := range []string{"gpt-4o-2024-08-06", "meta-llama/Llama-3.1-8B-Instruct", "models/gemini-2.0-flash",
		"arn:aws:bedrock:us-east-1:123:inference-profile/x", "qwen2.5:7b", "modèle"} {
		p := testPlan(t)
		p.Agent.Model.Name = name
		if err := p.Seal(); err != nil {
			t.Fatal(err)
		}
		data, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Read("plan.json", data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckModelName("gpt\xff"); err == nil || err.Error() != "it is not UTF-8" {
		t.Errorf("a name that is not UTF-8: %v", err)
	}
}
