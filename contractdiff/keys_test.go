package contractdiff

import (
	"testing"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/plan"
)

// FuzzMemberKeys: two list members share a key exactly when
// inclusion.Equal holds between them, so matching enum and required
// members by key finds the changes pairwise comparison found.
func FuzzMemberKeys(f *testing.F) {
	f.Add(`[1, 1.0, 10e-1, "1", true, null, [1], {"a": 1}, {"a": 1.0}, 1e999999, "x"]`)
	f.Add(`[{"a": [1, {"b": null}]}, {"a": [1.00, {"b": null}]}, 2, -0, 0]`)
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := plan.UnmarshalJSONValue([]byte(text))
		if err != nil {
			return
		}
		l, ok := doc.([]any)
		if !ok || len(l) > 64 {
			return
		}
		keys := memberKeys(l)
		for i := range l {
			for j := range l {
				same := keys[i] != "" && keys[i] == keys[j]
				if eq := inclusion.Equal(l[i], l[j]); eq != same {
					t.Fatalf("members %d and %d of %s: Equal %v, keys %q and %q", i, j, text, eq, keys[i], keys[j])
				}
			}
		}
	})
}
