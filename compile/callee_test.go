package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// compileAt compiles the one agent at path with a fresh compiler.
func compileAt(t *testing.T, path string) *plan.Plan {
	t.Helper()
	cp := compile.New(manifest.NewLoader())
	insts, err := cp.Loader().Load([]string{path})
	if err != nil || len(insts) != 1 {
		t.Fatalf("load %s: %v (%d agents)", path, err, len(insts))
	}
	p, ds, err := cp.Build(insts[0])
	if err != nil || p == nil {
		t.Fatalf("build %s: %v %v", path, err, ds)
	}
	return p
}

// TestBuildCallees: a plan carries the plans of the agents it calls, and
// theirs, each the plan the agent compiles to on its own (a manifest, a
// package directory or a compiled plan alike), with the directory its
// relative paths resolve against. A change to a callee's behaviour moves
// its callers' plan digests, not their contracts.
func TestBuildCallees(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "callees.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		name := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	caller := compileAt(t, "caller.cue")
	review, lint := compileAt(t, "agents/review.cue"), compileAt(t, "agents/lint")

	rc, ok := caller.Callees["review"]
	if !ok || rc.Plan == nil {
		t.Fatalf("the caller's plan does not carry review: %+v", caller.Callees)
	}
	if rc.Path != "agents/review.cue" || rc.Dir != "agents" || rc.Contract != review.Digests.Contract || rc.Plan.Digests != review.Digests {
		t.Errorf("review as called: path %q, dir %q, contract %s, digests %v; want agents/review.cue, agents, and review's own %v", rc.Path, rc.Dir, rc.Contract, rc.Plan.Digests, review.Digests)
	}
	lc, ok := rc.Plan.Callees["lint"]
	if !ok || lc.Plan == nil {
		t.Fatalf("review's plan does not carry lint: %+v", rc.Plan.Callees)
	}
	if lc.Dir != "lint" || lc.Plan.Digests != lint.Digests {
		t.Errorf("lint as called: dir %q, digests %v; want lint and lint's own %v", lc.Dir, lc.Plan.Digests, lint.Digests)
	}

	// The plan reads back whole.
	data, err := caller.Encode()
	if err != nil {
		t.Fatal(err)
	}
	read, err := plan.Read("caller.plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if read.Callees["review"].Plan.Callees["lint"].Plan.Digests != lint.Digests {
		t.Error("the plan read back lost lint's plan")
	}

	// A callee given as a compiled plan is carried as it was compiled.
	lintPlan, err := lint.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("agents/lint.plan.json", lintPlan, 0o644); err != nil {
		t.Fatal(err)
	}
	editFile(t, "agents/review.cue", `path: "lint"`, `path: "lint.plan.json"`)
	viaPlan := compileAt(t, "agents/review.cue")
	if c := viaPlan.Callees["lint"]; c.Plan.Digests != lint.Digests || c.Dir != "." {
		t.Errorf("lint as a plan: digests %v, dir %q; want %v and .", c.Plan.Digests, c.Dir, lint.Digests)
	}
	editFile(t, "agents/review.cue", `path: "lint.plan.json"`, `path: "lint"`)

	// lint's instructions change: so do its callers' plan digests, all the
	// way up, and none of their contracts.
	edited, err := os.ReadFile("lint-edited/b.cue")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("agents/lint/b.cue", edited, 0o644); err != nil {
		t.Fatal(err)
	}
	lint2, caller2 := compileAt(t, "agents/lint"), compileAt(t, "caller.cue")
	if lint2.Digests.Contract != lint.Digests.Contract || lint2.Digests.Plan == lint.Digests.Plan {
		t.Fatalf("the edit to lint is not what the test needs: %v, then %v", lint.Digests, lint2.Digests)
	}
	if caller2.Digests.Plan == caller.Digests.Plan || caller2.Callees["review"].Plan.Digests.Plan == review.Digests.Plan {
		t.Error("a callee of a callee changed; the callers' plan digests did not")
	}
	if caller2.Digests.Contract != caller.Digests.Contract || caller2.Callees["review"].Contract != review.Digests.Contract {
		t.Error("a callee's instructions changed its callers' contract digests")
	}
}

// editFile replaces old, which the file must hold once, with new.
func editFile(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.Count(s, old) != 1 {
		t.Fatalf("%s does not hold %q once", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(s, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
