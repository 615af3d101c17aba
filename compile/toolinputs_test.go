package compile_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/plan"
)

// An agent's exec and http tools are sent with their argument schemas
// lowered to the provider's dialect, strict, where the provider enforces
// a strict tool's schema and the schema fits the dialect: the plan keeps
// each such lowering, for the agent's model and for each fallback.
func TestToolInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, model, extra string) string {
		path := filepath.Join(dir, name+".cue")
		src := `name: "` + name + `"
model: ` + model + `
instructions: "Answer."
budgets: deadline: "60s"
capabilities: tools: {
	lookup: {
		kind: "exec", description: "Looks up.", argv: ["echo", "{{.q}}"]
		input: schema: {type: "object", properties: {q: {type: "string", maxLength: 40}, limit: {type: "integer"}}, required: ["q"], additionalProperties: false}
	}
	fetch: {
		kind: "http", description: "Fetches.", url: "https://api.example/{{.id}}", allow: ["https://api.example/"]
		input: schema: {type: "object", properties: id: {type: "string"}, patternProperties: "^x-": {type: "string"}, required: ["id"]}
	}
	files: {kind: "fs", description: "Reads.", root: ".", ops: ["read"]}
}
output: {description: "The answer.", schema: {type: "object", properties: a: {type: "string"}, required: ["a"], additionalProperties: false}}
` + extra
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p := compileAt(t, write("agent", `{provider: "openai", name: "gpt-4o-2024-08-06", fallback: models: ["anthropic:claude-sonnet-4-5", "bedrock:anthropic.claude-sonnet-4-5-v1:0", "google:gemini-2.5-flash"]}`, ""))
	if got := slices.Sorted(maps.Keys(p.ToolInputs)); !slices.Equal(got, []string{"lookup"}) {
		t.Fatalf("tools lowered for openai: %v, want [lookup] (fetch's patternProperties is outside the dialect; fs declares no schema)", got)
	}
	l := p.ToolInputs["lookup"]
	var sent map[string]any
	if err := json.Unmarshal(l.Schema, &sent); err != nil {
		t.Fatal(err)
	}
	req, _ := sent["required"].([]any)
	if l.Provider != "openai" || !l.Strict || len(req) != 2 || sent["additionalProperties"] != false ||
		!slices.Equal(l.Nullable, []string{"/properties/limit"}) || len(l.Local) != 1 || l.Local[0].Keyword != "maxLength" {
		t.Errorf("lookup lowered for openai: %+v, schema %s", l, l.Schema)
	}
	if !strings.Contains(string(l.Schema), `{maxLength: 40}`) {
		t.Errorf("the dropped maxLength is not told in the description: %s", l.Schema)
	}
	if len(p.Fallbacks) != 3 {
		t.Fatalf("fallbacks: %+v", p.Fallbacks)
	}
	a := p.Fallbacks[0].ToolInputs["lookup"]
	if a == nil || a.Provider != "anthropic" || !a.Strict || len(a.Nullable) != 0 || len(p.Fallbacks[0].ToolInputs) != 1 {
		t.Errorf("lowered for the anthropic fallback: %+v", p.Fallbacks[0].ToolInputs)
	}
	for _, f := range p.Fallbacks[1:] {
		if f.ToolInputs != nil {
			t.Errorf("%s has no strict tools, and yet: %+v", f.Ref(), f.ToolInputs)
		}
	}
	// --model to Anthropic lowers them again, as the manifest naming it.
	claude := compileAt(t, write("agent", `{provider: "anthropic", name: "claude-sonnet-4-5"}`, ""))
	got, err := compile.Retarget(p, "anthropic", "claude-sonnet-4-5")
	if err != nil || got.ToolInputs["lookup"] == nil || got.ToolInputs["lookup"].Provider != "anthropic" {
		t.Fatalf("retargeted: %v %+v", err, got)
	}
	if claude.ToolInputs["lookup"] == nil || string(claude.ToolInputs["lookup"].Schema) != string(got.ToolInputs["lookup"].Schema) {
		t.Errorf("retargeted %+v, compiled %+v", got.ToolInputs, claude.ToolInputs)
	}
	for _, model := range []string{`{provider: "test", name: "test"}`, `{provider: "bedrock", name: "anthropic.claude-sonnet-4-5-v1:0"}`, `{provider: "google", name: "gemini-2.5-flash"}`} {
		if q := compileAt(t, write("other", model, "")); q.ToolInputs != nil {
			t.Errorf("%s: tools lowered %+v; its tools are sent as written", model, q.ToolInputs)
		}
	}

	// The lowering is part of the plan digest, and a plan whose lowerings
	// do not fit its agent is refused.
	for _, c := range []struct {
		name string
		edit func(q *plan.Plan)
		want string
	}{
		{"unknown tool", func(q *plan.Plan) { q.ToolInputs["nope"] = l }, `tool_inputs: "nope" is not one of the agent's tools`},
		{"no schema to lower", func(q *plan.Plan) { q.ToolInputs["files"] = l }, `tool_inputs: tool "files" (kind fs) declares no input schema`},
		{"another provider", func(q *plan.Plan) { q.ToolInputs["lookup"] = a }, `tool_inputs: tool "lookup"'s input schema is lowered for "anthropic", not "openai"`},
		{"not strict", func(q *plan.Plan) { c := *l; c.Strict = false; q.ToolInputs["lookup"] = &c }, "lowering is not strict"},
		{"a fallback's", func(q *plan.Plan) {
			q.Fallbacks = slices.Clone(q.Fallbacks)
			q.Fallbacks[0].ToolInputs = map[string]*plan.Lowering{"lookup": l}
		}, `fallback anthropic:claude-sonnet-4-5: tool_inputs: tool "lookup"'s input schema is lowered for "openai", not "anthropic"`},
		{"nil", func(q *plan.Plan) { q.ToolInputs["lookup"] = nil }, `tool_inputs: tool "lookup" has no lowering`},
		{"a number", func(q *plan.Plan) { c := *l; c.Schema = json.RawMessage(`5`); q.ToolInputs["lookup"] = &c }, `tool_inputs: tool "lookup"'s lowered schema is not an object schema`},
		{"none", func(q *plan.Plan) { c := *l; c.Schema = nil; q.ToolInputs["lookup"] = &c }, `tool_inputs: tool "lookup"'s lowered schema is not JSON`},
	} {
		q := *p
		q.ToolInputs = map[string]*plan.Lowering{"lookup": l}
		c.edit(&q)
		if err := q.Seal(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	q := *p
	q.ToolInputs = nil
	if err := q.Seal(); err != nil || q.Digests.Plan == p.Digests.Plan || q.Digests.Contract != p.Digests.Contract {
		t.Errorf("without the lowering: %v; plan digest %s, as with it", err, q.Digests.Plan)
	}
}

// An optional property whose schema takes null keeps its null as a value:
// it is not made to stand for the property's absence, however the schema
// says it takes null (oneOf, a $ref). Reading whether a schema
// takes null follows each $ref once, however its references branch.
func TestLowerNullAsValue(t *testing.T) {
	var defs strings.Builder
	for i := range 40 {
		fmt.Fprintf(&defs, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	defs.WriteString(`"d40":{"type":["string","null"]}`)
	for _, c := range []struct {
		name, prop string
		nullable   bool
	}{
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, false},
		{"ref", `{"$ref":"#/$defs/opt"}`, false},
		{"ref to a ref", `{"$ref":"#/$defs/alias"}`, false},
		{"branching refs", `{"$ref":"#/$defs/d0"}`, false},
		{"no null", `{"$ref":"#/$defs/str"}`, true},
	} {
		doc := `{"type":"object","properties":{"q":{"type":"string"},"tag":` + c.prop + `},"required":["q"],"additionalProperties":false,
			"$defs":{"opt":{"type":["string","null"]},"alias":{"$ref":"#/$defs/opt"},"str":{"type":"string"},` + defs.String() + `}}`
		v, err := plan.UnmarshalJSONValue([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		l, err := compile.Lower(compile.Profiles["openai"], plan.ModeTool, v)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(l.Nullable, "/properties/tag"); got != c.nullable || !l.Strict {
			t.Errorf("%s: nullable %v (strict %v, %s), want %v", c.name, l.Nullable, l.Strict, l.Reason, c.nullable)
		}
		if !c.nullable {
			if got := plan.Raise(l.Schema, l.Nullable, json.RawMessage(`{"q":"x","tag":null}`)); string(got) != `{"q":"x","tag":null}` {
				t.Errorf("%s: raised to %s; the null is the tag's value", c.name, got)
			}
		}
	}
}

// A tool whose schema lets the model pass properties it does not name is
// sent as written: closing it, as the strict dialects demand, would take
// those from the tool. A schema that leaves additionalProperties out is
// closed, as the providers' own tooling takes it.
func TestToolInputsOpen(t *testing.T) {
	tools := map[string]plan.Tool{}
	for name, schema := range map[string]string{
		"map":      `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		"open":     `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":true}`,
		"nested":   `{"type":"object","properties":{"h":{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":{"type":"string"}}}}`,
		"closed":   `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`,
		"left out": `{"type":"object","properties":{"path":{"type":"string"}}}`,
		"named so": `{"type":"object","properties":{"additionalProperties":{"type":"string"}}}`,
	} {
		tools[name] = plan.Tool{Kind: "http", Input: &plan.Input{Schema: json.RawMessage(schema)}}
	}
	got, err := compile.LowerToolInputs("openai", tools)
	if err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, []string{"closed", "left out", "named so"}) {
		t.Errorf("strict: %v, want the closed ones, and the one that names a property additionalProperties", names)
	}
}

// lowerAndRaise lowers a schema for OpenAI, checks that ans is valid
// against it as written, and raises ans as a strict provider's value.
func lowerAndRaise(t *testing.T, src, ans string) string {
	t.Helper()
	doc, err := plan.UnmarshalJSONValue([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.CompileSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := plan.UnmarshalJSONValue([]byte(ans))
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s is not valid as written: %v", ans, err)
	}
	l, err := compile.Lower(compile.Profiles["openai"], plan.ModeTool, doc)
	if err != nil || !l.Strict {
		t.Fatalf("lowering: %v %s", err, l.Reason)
	}
	return string(plan.Raise(l.Schema, l.Nullable, json.RawMessage(ans)))
}

// Nulls that are values survive references that cycle without stepping
// into the value, references written percent-encoded, and an anyOf branch
// reached through more references than the raise follows in a row. A
// $id below the root, which the lowered schema could not keep, leaves the
// schema as written.
func TestRaiseKeepsValueNulls(t *testing.T) {
	cycle := `{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/B"}},
	 "$defs":{"A":{"anyOf":[{"$ref":"#/$defs/B"},{"type":"null"}]},"B":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]}}}`
	if got := lowerAndRaise(t, cycle, `{"a":null,"b":null}`); got != `{"a":null,"b":null}` {
		t.Errorf("cycle: raised to %s", got)
	}
	percent := `{"type":"object","additionalProperties":false,"properties":{"x":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{"type":["string","null"]}}}`
	if got := lowerAndRaise(t, percent, `{"x":null}`); got != `{"x":null}` {
		t.Errorf("percent-encoded: raised to %s", got)
	}
	var defs strings.Builder
	for i := range 66 {
		fmt.Fprintf(&defs, `"d%d":{"$ref":"#/$defs/d%d"},`, i, i+1)
	}
	defs.WriteString(`"d66":{"type":"object","properties":{"p":{"type":["string","null"]},"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)
	chain := `{"type":"object","additionalProperties":false,"required":["v"],"properties":{"v":{"anyOf":[{"$ref":"#/$defs/d0"},{"type":"object","properties":{"p":{"type":"string"}},"additionalProperties":false}]}},"$defs":{` + defs.String() + `}}`
	if got := lowerAndRaise(t, chain, `{"v":{"p":null,"q":"x"}}`); got != `{"v":{"p":null,"q":"x"}}` {
		t.Errorf("a long chain of references: raised to %s", got)
	}
	doc, err := plan.UnmarshalJSONValue([]byte(`{"type":"object","additionalProperties":false,"properties":{"x":{"$id":"https://example.com/n","$ref":"#/$defs/n","$defs":{"n":{"type":"string"}}}},"$defs":{"n":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := compile.Lower(compile.Profiles["openai"], plan.ModeTool, doc); err != nil || l.Strict || !strings.Contains(l.Reason, "$id below the root") {
		t.Errorf("a nested $id: %v %+v", err, l)
	}
}
