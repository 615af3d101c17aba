package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSchemaValues(t *testing.T) {
	doc, err := UnmarshalJSONValue([]byte(`{"type": "object", "properties": {"a": {"enum": [1, "x", null, true]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := SchemaValues(doc, 100); n != 9 {
		t.Errorf("SchemaValues = %d, want 9", n)
	}
	if n := SchemaValues(doc, 3); n != 4 {
		t.Errorf("SchemaValues with limit 3 = %d, want it to stop at 4", n)
	}
}

// TestCheckLimits: a plan whose schema is past MaxSchemaValues is refused
// before any schema is compiled.
func TestCheckLimits(t *testing.T) {
	var props []string
	for i := range MaxSchemaValues / 2 {
		props = append(props, fmt.Sprintf(`"p%d": {"type": "string"}`, i))
	}
	big := json.RawMessage(`{"type": "object", "properties": {` + strings.Join(props, ",") + `}}`)
	small := json.RawMessage(`{"type": "string"}`)
	p := &Plan{Agent: Agent{Input: &Input{Schema: small}, Capabilities: Capabilities{Tools: map[string]Tool{
		"fetch": {Kind: "http", Input: &Input{Schema: big}},
	}}}}
	var tl *SchemaTooLargeError
	if err := CheckLimits(p); !errors.As(err, &tl) || tl.Where != `tool "fetch": input schema` {
		t.Fatalf("CheckLimits = %v, want the tool's schema too large", err)
	}
	p.Agent.Capabilities.Tools = nil
	if err := CheckLimits(p); err != nil {
		t.Fatalf("CheckLimits of a small plan = %v", err)
	}
}

// TestCheckLimitsWhere: each schema a plan holds is checked, and named in
// the error; a schema of exactly MaxSchemaValues values is accepted.
func TestCheckLimitsWhere(t *testing.T) {
	// {"enum": [0, ...]}: the object, the array and n numbers.
	enum := func(values int) json.RawMessage {
		return json.RawMessage(`{"enum": [0` + strings.Repeat(", 0", values-3) + `]}`)
	}
	big, most := enum(MaxSchemaValues+1), enum(MaxSchemaValues)
	tests := []struct {
		where string
		set   func(p *Plan, s json.RawMessage)
	}{
		{"input schema", func(p *Plan, s json.RawMessage) { p.Agent.Input = &Input{Schema: s} }},
		{"output schema", func(p *Plan, s json.RawMessage) { p.Agent.Output = &Output{Schema: s} }},
		{"output schema lowered for openai", func(p *Plan, s json.RawMessage) { p.Output = &Lowering{Provider: "openai", Schema: s} }},
		{`tool "b": input schema`, func(p *Plan, s json.RawMessage) {
			p.Agent.Capabilities.Tools = map[string]Tool{"a": {Kind: "exec"}, "b": {Kind: "http", Input: &Input{Schema: s}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			p := &Plan{}
			tt.set(p, most)
			if err := CheckLimits(p); err != nil {
				t.Errorf("a schema of exactly %d values: %v", MaxSchemaValues, err)
			}
			p = &Plan{}
			tt.set(p, big)
			var tl *SchemaTooLargeError
			if err := CheckLimits(p); !errors.As(err, &tl) || tl.Where != tt.where {
				t.Errorf("CheckLimits = %v, want the %s too large", err, tt.where)
			}
		})
	}
}
