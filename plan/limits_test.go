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
		{"fallback openai:gpt-4o: output schema lowered for openai", func(p *Plan, s json.RawMessage) {
			p.Fallbacks = []FallbackModel{{Model: Model{Provider: "openai", Name: "gpt-4o"}, Output: &Lowering{Provider: "openai", Schema: s}}}
		}},
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

// nots is a schema of n "not" around {"type": "string"}: n+1 objects deep.
func nots(n int) string {
	return strings.Repeat(`{"not": `, n) + `{"type": "string"}` + strings.Repeat("}", n)
}

func TestSchemaDepth(t *testing.T) {
	tests := []struct {
		doc  string
		want int
	}{
		{`"x"`, 0},
		{`{}`, 1},
		{`{"type": "string"}`, 1},
		{`{"enum": [[1], 2]}`, 3},
		{`{"properties": {"a": {"type": "string"}}, "b": 1}`, 3},
		{`{"allOf": [{"type": "string"}, {"items": {"anyOf": [{}]}}]}`, 6},
		{nots(99), 100},
	}
	for _, tt := range tests {
		doc, err := UnmarshalJSONValue([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := SchemaDepth(doc, 1000); got != tt.want {
			t.Errorf("SchemaDepth(%.40s) = %d, want %d", tt.doc, got, tt.want)
		}
	}
	doc, _ := UnmarshalJSONValue([]byte(nots(99)))
	if got := SchemaDepth(doc, 10); got != 11 {
		t.Errorf("SchemaDepth with limit 10 = %d, want it to stop at 11", got)
	}
}

// TestCheckLimitsDepth: each schema a plan holds is checked for depth and
// named; a schema exactly MaxSchemaDepth deep is accepted.
func TestCheckLimitsDepth(t *testing.T) {
	at, past := json.RawMessage(nots(MaxSchemaDepth-1)), json.RawMessage(nots(MaxSchemaDepth))
	set := map[string]func(p *Plan, s json.RawMessage){
		"input schema":                     func(p *Plan, s json.RawMessage) { p.Agent.Input = &Input{Schema: s} },
		"output schema":                    func(p *Plan, s json.RawMessage) { p.Agent.Output = &Output{Schema: s} },
		"output schema lowered for openai": func(p *Plan, s json.RawMessage) { p.Output = &Lowering{Provider: "openai", Schema: s} },
		`tool "b": input schema`: func(p *Plan, s json.RawMessage) {
			p.Agent.Capabilities.Tools = map[string]Tool{"b": {Kind: "http", Input: &Input{Schema: s}}}
		},
	}
	for where, set := range set {
		p := &Plan{}
		set(p, at)
		if err := CheckLimits(p); err != nil {
			t.Errorf("%s %d deep: %v", where, MaxSchemaDepth, err)
		}
		p = &Plan{}
		set(p, past)
		var td *SchemaTooDeepError
		if err := CheckLimits(p); !errors.As(err, &td) || td.Where != where {
			t.Errorf("CheckLimits = %v, want the %s too deep", err, where)
		}
	}
}

// TestReadRefusesDeepSchema: a sealed plan whose schema, or whose callee's
// schema, nests past MaxSchemaDepth is refused as it is read, so that diff
// and digest of plans from elsewhere, not only a run, stay bounded.
func TestReadRefusesDeepSchema(t *testing.T) {
	deep := label(t, "Answer.", nots(MaxSchemaDepth))
	caller := mustCall(t, label(t, "Answer.", nots(200)))
	for name, tt := range map[string]struct {
		p    *Plan
		want string
	}{
		"own":    {deep, "plan.json: output schema: objects and arrays nest more than 64 deep"},
		"callee": {caller, `plan.json: agent tool "label": output schema: objects and arrays nest more than 64 deep`},
	} {
		data, err := tt.p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Read("plan.json", data); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: Read = %v, want it to start %q", name, err, tt.want)
		}
	}
	ok, err := label(t, "Answer.", nots(MaxSchemaDepth-1)).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read("plan.json", ok); err != nil {
		t.Errorf("a plan %d deep: %v", MaxSchemaDepth, err)
	}
}

// FuzzSchemaDepth: SchemaDepth with a limit is the full depth, or one past
// the limit where the full depth passes it.
func FuzzSchemaDepth(f *testing.F) {
	f.Add(`{"type": "string"}`, 0)
	f.Add(`{"enum": [[1], 2]}`, 2)
	f.Add(nots(70), MaxSchemaDepth)
	f.Add(`[[[], {"a": [{}]}], 3]`, 3)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		doc, err := UnmarshalJSONValue([]byte(text))
		if err != nil || limit < 0 {
			return
		}
		var full func(v any) int
		full = func(v any) int {
			d := 0
			switch v := v.(type) {
			case map[string]any:
				for _, sub := range v {
					d = max(d, full(sub))
				}
				return d + 1
			case []any:
				for _, sub := range v {
					d = max(d, full(sub))
				}
				return d + 1
			}
			return 0
		}
		if got, want := SchemaDepth(doc, limit), min(full(doc), limit+1); got != want {
			t.Fatalf("SchemaDepth(%s, %d) = %d, want %d", text, limit, got, want)
		}
	})
}
