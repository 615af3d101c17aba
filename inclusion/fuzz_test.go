package inclusion_test

import (
	"testing"

	"agentc.dev/agentc/internal/schemagen"
)

// FuzzVerdicts holds the engine's Yes verdicts on random schemas against
// the validator, as TestDifferential does on the corpora: the fuzz input
// is read as the choices of a small schema generator, for a schema and a
// second one to compare it with.
func FuzzVerdicts(f *testing.F) {
	edge := edgeValues(f)
	// The seeds are in testdata/fuzz/FuzzVerdicts.
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := schemagen.New(data).Pair()
		var corpus schemagen.Set
		for _, v := range edge {
			corpus.Add(v)
		}
		for _, v := range schemagen.Derived(a, b) {
			corpus.Add(v)
		}
		corpus.Synthesized(a, 0, 1)
		corpus.Synthesized(b, 0)
		d := &differ{t: t, inst: corpus.Sorted(), done: map[string]bool{}, targetedMax: 4000}
		var c tally
		d.document(&c, "schema A", a)
		d.document(&c, "schema B", b)
		d.pair(&c, "A ⊆ B", a, b)
		d.pair(&c, "B ⊆ A", b, a)
		if c.wrong > 0 {
			t.Logf("A: %s\nB: %s", short(a), short(b))
		}
	})
}
