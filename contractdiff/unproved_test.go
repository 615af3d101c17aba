package contractdiff_test

import (
	"testing"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/plan"
)

// TestNeverCompatible holds Compare to the pairs of testdata/unproved.jsonl:
// changes that break (the value of each shows it, checked here with the
// validator the runtime uses, plan.Validate) where the engine cannot read
// the schemas as the validator does. Compare may call them breaking or
// undecided, never compatible.
func TestNeverCompatible(t *testing.T) {
	readJSONL(t, "testdata/unproved.jsonl", func(line int, _ []byte, c map[string]any) {
		p := contractParts[0]
		if c["part"] == "input" {
			p = contractParts[1]
		}
		old, new := c["old"], c["new"]
		sub, super := p.subSuper(old, new)
		subS, err := plan.CompileSchema(sub)
		if err != nil {
			t.Fatalf("unproved.jsonl:%d: %v", line, err)
		}
		superS, err := plan.CompileSchema(super)
		if err != nil {
			t.Fatalf("unproved.jsonl:%d: %v", line, err)
		}
		if v := c["value"]; plan.Validate(subS, v) != nil || plan.Validate(superS, v) == nil {
			t.Fatalf("unproved.jsonl:%d: %s: the value %s does not show the change breaking", line, c["why"], propJSON(v))
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
			t.Fatalf("unproved.jsonl:%d: %v", line, err)
		}
		if got, mine := verdictOf(fs, p); got == contractdiff.Compatible {
			t.Errorf("unproved.jsonl:%d: %s (%s): compatible; findings %+v", line, c["why"], p.name, mine)
		}
	})
}
