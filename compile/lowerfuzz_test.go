package compile

import (
	"encoding/json"
	"testing"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/schemagen"
	"agentc.dev/agentc/plan"
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
		// The first schema alone as the contract too: an answer that is
		// not an object goes wrapped in the output tool's arguments.
		root, err := json.Marshal(a)
		if err != nil {
			return
		}
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
		for _, raw := range [][]byte{raw, root} {
			contract, err := plan.CompileSchemaJSON(raw)
			if err != nil {
				continue
			}
			if _, err := digest.Canonical(raw); err != nil {
				continue // vet refuses it (SCHEMA_NUMBER); it is never lowered
			}
			doc, err := plan.UnmarshalJSONValue(raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := doc.(map[string]any); !ok {
				continue // vet refuses it (SCHEMA_NOT_OBJECT)
			}
			for _, provider := range []string{"openai", "anthropic", "google"} {
				checkLowering(t, string(raw), provider, raw, doc, contract, 2)
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
