package compile_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// TestSchemaTooLarge vets a manifest whose output schema has 25,000
// properties: it is refused as too large, at the schema, and no other
// check of the schema runs (compiling it alone would take minutes).
func TestSchemaTooLarge(t *testing.T) {
	props := map[string]any{}
	for i := range 25000 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "string"}
	}
	data, err := json.Marshal(map[string]any{
		"name":         "big",
		"model":        map[string]any{"provider": "openai", "name": "gpt-4o-2024-08-06"},
		"instructions": "Fill in the form.",
		"output":       map[string]any{"description": "The form.", "schema": map[string]any{"type": "object", "properties": props}},
		"budgets":      map[string]any{"deadline": "60s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := manifest.NewLoader()
	l.EvalTimeout = -1 // what is measured is the check, not the load
	inst := l.LoadBytes("big.json", data)
	start := time.Now()
	ds := compile.New(l).Check(inst)
	took := time.Since(start)
	if len(ds) != 1 || ds[0].Code != compile.CodeSchemaTooLarge {
		t.Fatalf("diagnostics = %v, want one %s", ds, compile.CodeSchemaTooLarge)
	}
	if want := fmt.Sprintf("output.schema: the schema holds more than %d JSON values", plan.MaxSchemaValues); len(ds[0].Message) < len(want) || ds[0].Message[:len(want)] != want {
		t.Errorf("message %q, want it to start %q", ds[0].Message, want)
	}
	if p := ds[0].Pos; p.Filename() != "big.json" || p.Line() != 1 {
		t.Errorf("position %v, want the schema in big.json", p)
	}
	t.Logf("checked in %v", took)
}
