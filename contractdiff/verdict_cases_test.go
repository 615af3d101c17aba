package contractdiff_test

import (
	"math/rand/v2"
	"testing"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/plan"
)

// TestVerdictCases holds Compare to the truth on the pairs of
// testdata/verdicts.jsonl: kinds of change the property test
// (TestVerdictsHold) found judged wrong, each with its truth, checked
// here against the validator before it is used. A breaking pair comes
// with a value that shows it, which the test confirms: the new output
// schema accepts it and the old rejects it (the old input schema accepts
// it and the new rejects it). A compatible pair is a rewrite that keeps
// the meaning, on which the sampler finds no such value. Compare may be
// undecided on a pair, but on fewer than one in six, never compatible on
// a breaking one and never breaking on a compatible one; and every
// breaking finding's example must hold against both whole schemas.
func TestVerdictCases(t *testing.T) {
	var cases, undecided int
	readJSONL(t, "testdata/verdicts.jsonl", func(line int, _ []byte, c map[string]any) {
		parts := contractParts
		for _, p := range contractParts {
			if c["part"] == p.name {
				parts = []contractPart{p}
			}
		}
		old, new := c["old"], c["new"]
		oldS, err := plan.CompileSchema(old)
		if err != nil {
			t.Fatalf("verdicts.jsonl:%d: old: %v", line, err)
		}
		newS, err := plan.CompileSchema(new)
		if err != nil {
			t.Fatalf("verdicts.jsonl:%d: new: %v", line, err)
		}
		oa, err := agentOf(old)
		if err != nil {
			t.Fatal(err)
		}
		na, err := agentOf(new)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := contractdiff.Compare(oa, na)
		if err != nil {
			t.Fatalf("verdicts.jsonl:%d: %v", line, err)
		}
		truth := contractdiff.Class(c["truth"].(string))
		for _, p := range parts {
			cases++
			sub, super := p.subSuper(old, new)
			subS, superS := newS, oldS
			if p.input {
				subS, superS = oldS, newS
			}
			// The case itself must be true.
			switch truth {
			case contractdiff.Breaking:
				v, has := c["value"]
				if !has || !accepts(subS, v) || accepts(superS, v) {
					t.Fatalf("verdicts.jsonl:%d: %s (%s): the value %s does not show the change breaking", line, c["why"], p.name, propJSON(v))
				}
			case contractdiff.Compatible:
				rng := rand.New(rand.NewPCG(uint64(line), 0))
				if _, bad, found := findCounterexample(rng, sub, super, subS, superS); found {
					t.Fatalf("verdicts.jsonl:%d: %s (%s): %s shows the change breaking", line, c["why"], p.name, propJSON(bad))
				}
			default:
				t.Fatalf("verdicts.jsonl:%d: truth %q", line, truth)
			}
			got, mine := verdictOf(fs, p)
			switch {
			case got == contractdiff.Undecided:
				undecided++
			case got != truth:
				t.Errorf("verdicts.jsonl:%d: %s (%s, %s): %s, truly %s; findings %+v", line, c["why"], c["kind"], p.name, got, truth, mine)
			}
			for _, f := range mine {
				if f.Class == contractdiff.Breaking && (!f.HasExample || !accepts(subS, f.Example) || accepts(superS, f.Example)) {
					t.Errorf("verdicts.jsonl:%d: %s (%s, %s): breaking %s at %s with the example %s, which does not show it on the whole schemas", line, c["why"], c["kind"], p.name, f.Rule, f.Pointer, exampleText(f))
				}
			}
		}
	})
	t.Logf("%d verdicts, %d undecided", cases, undecided)
	if undecided*6 >= cases {
		t.Errorf("%d of %d verdicts undecided: one in six or more", undecided, cases)
	}
}
