package inclusion_test

import (
	"testing"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/plan"
)

// TestWitness checks that Witness finds a counterexample where a change
// widens a schema, none where it does not, and that every one it returns
// is one to the validator: sub accepts it and super rejects it.
func TestWitness(t *testing.T) {
	readJSONL(t, "testdata/witness.jsonl", func(line int, c map[string]any) {
		v, ok := inclusion.Witness(c["sub"], c["super"])
		if ok != c["found"] {
			t.Errorf("witness.jsonl:%d: %s: found %v (%v), want %v", line, c["why"], ok, v, c["found"])
		}
		if !ok {
			return
		}
		sub, err := plan.CompileSchema(c["sub"])
		if err != nil {
			t.Fatalf("witness.jsonl:%d: %v", line, err)
		}
		super, err := plan.CompileSchema(c["super"])
		if err != nil {
			t.Fatalf("witness.jsonl:%d: %v", line, err)
		}
		if sub.Validate(v) != nil || super.Validate(v) == nil {
			t.Errorf("witness.jsonl:%d: %s: %#v is no counterexample", line, c["why"], v)
		}
	})
}
