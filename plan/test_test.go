package plan

import (
	"encoding/json"
	"testing"
)

// TestTestsInPlanDigestOnly: a plan's test cases move its plan digest and
// never its contract digest, and a plan without them keeps the digest it
// had before plans could carry them; the expect's position, in Sources,
// moves neither.
func TestTestsInPlanDigestOnly(t *testing.T) {
	before := testPlan(t)
	with := testPlan(t)
	with.Tests = map[string]Test{"bug": {Input: json.RawMessage(`{"title":"crash"}`), Expect: &CUEConstraint{CUE: `"bug"`}, MinPass: 1}}
	if err := with.Seal(); err != nil {
		t.Fatal(err)
	}
	if with.Digests.Contract != before.Digests.Contract {
		t.Errorf("a test case moved the contract digest: %s, was %s", with.Digests.Contract, before.Digests.Contract)
	}
	if with.Digests.Plan == before.Digests.Plan {
		t.Error("a test case left the plan digest where it was")
	}
	edited := testPlan(t)
	edited.Tests = map[string]Test{"bug": {Input: json.RawMessage(`{"title":"crash"}`), Expect: &CUEConstraint{CUE: `"feature"`}, MinPass: 1}}
	edited.Sources["tests.bug.expect"] = "triage.cue:30:10"
	if err := edited.Seal(); err != nil {
		t.Fatal(err)
	}
	if edited.Digests.Plan == with.Digests.Plan {
		t.Error("changing an expect left the plan digest where it was")
	}
	// A case's faults count in the plan digest, and only when declared.
	faults := testPlan(t)
	faults.Tests = map[string]Test{"bug": {Input: json.RawMessage(`{"title":"crash"}`), Expect: &CUEConstraint{CUE: `"bug"`}, MinPass: 1, Faults: map[string]string{"timeout": "deadline"}}}
	if err := faults.Seal(); err != nil {
		t.Fatal(err)
	}
	if faults.Digests.Plan == with.Digests.Plan || faults.Digests.Contract != with.Digests.Contract {
		t.Errorf("a case's faults: plan digest %s (was %s), contract %s (was %s)", faults.Digests.Plan, with.Digests.Plan, faults.Digests.Contract, with.Digests.Contract)
	}
	empty := testPlan(t)
	empty.Tests = map[string]Test{"bug": {Input: json.RawMessage(`{"title":"crash"}`), Expect: &CUEConstraint{CUE: `"bug"`}, MinPass: 1, Faults: map[string]string{}}}
	if err := empty.Seal(); err != nil {
		t.Fatal(err)
	}
	if empty.Digests.Plan != with.Digests.Plan {
		t.Error("an empty faults moved the plan digest")
	}
	data, err := with.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tests["bug"].Expect == nil || got.Tests["bug"].Expect.CUE != `"bug"` {
		t.Errorf("the case did not survive the plan file: %+v", got.Tests)
	}
}
