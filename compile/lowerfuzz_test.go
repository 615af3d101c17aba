package compile

import (
	"encoding/json"
	"testing"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/schemagen"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/testmodel"
)

// FuzzLowerRaise holds a strict lowering to its promise on random schemas,
// as TestLowerCorpus does on real ones: an answer valid under the lowered
// schema (what a provider's strict mode lets through), raised, fails the
// contract only at constraints the lowering left to local validation. The
// fuzz input is read as the choices of a schema generator; its two schemas
// are an object's required and optional properties, so that nulls standing
// for absent properties are raised too.
func FuzzLowerRaise(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 2, 3, 4}, {7, 7, 7, 7, 7, 7, 7, 7}, {0, 6, 1, 6, 2, 6, 3, 6, 4, 6}, {200, 13, 99, 4, 250, 1, 0, 42, 17, 5, 5, 5}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := schemagen.New(data).Pair()
		stripSchemaKeys(a)
		stripSchemaKeys(b)
		raw, err := json.Marshal(map[string]any{
			"type":       "object",
			"properties": map[string]any{"req": a, "opt": b},
			"required":   []any{"req"},
		})
		if err != nil {
			return
		}
		contract, err := plan.CompileSchemaJSON(raw)
		if err != nil {
			return
		}
		if _, err := digest.Canonical(raw); err != nil {
			return // vet refuses it (SCHEMA_NUMBER); it is never lowered
		}
		doc, err := plan.UnmarshalJSONValue(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, provider := range []string{"openai", "anthropic"} {
			l, err := Lower(Profiles[provider], "auto", doc)
			if err != nil {
				t.Fatalf("%s: %v\nschema %s", provider, err, raw)
			}
			if !l.Strict {
				continue
			}
			if _, err := plan.CompileSchemaJSON(l.Schema); err != nil {
				t.Fatalf("%s: the lowered schema does not compile: %v\nschema  %s\nlowered %s", provider, err, raw, l.Schema)
			}
			for seed := int64(0); seed < 2; seed++ {
				answer, err := testmodel.Synthesize(l.Schema, seed)
				if err != nil {
					continue
				}
				raised := plan.Raise(l.Schema, l.Nullable, answer)
				inst, err := plan.UnmarshalJSONValue(raised)
				if err != nil {
					t.Fatalf("%s: the raised answer is not JSON: %s", provider, raised)
				}
				if err := contract.Validate(inst); err != nil {
					if at := unexplained(err, l.Local); len(at) > 0 {
						t.Errorf("%s, seed %d: an answer valid under the lowered schema fails the contract at %v, which the lowering did not record as local\nschema  %s\nlowered %s\nanswer  %s\nraised  %s", provider, seed, at, raw, l.Schema, answer, raised)
					}
				}
			}
		}
	})
}

// stripSchemaKeys removes a generated document's $schema: the two are
// nested as properties, where a $schema is not allowed.
func stripSchemaKeys(doc any) {
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$schema")
	}
}
