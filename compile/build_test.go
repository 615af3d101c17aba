package compile_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// TestBuildPlans builds the agents of each archive in testdata/build: its
// "build" section names them, one a line, as the command line would from
// the archive's root, and "want" is what the plans hold that vet's cases
// cannot show: how the answer is asked for, and where each part was
// written (Sources).
func TestBuildPlans(t *testing.T) {
	files, err := filepath.Glob("testdata/build/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/build: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			sections := extract(t, file, t.TempDir())
			var got strings.Builder
			for _, path := range strings.Fields(sections["build"]) {
				got.WriteString(path + "\n" + describePlan(compileAt(t, path)))
			}
			if got.String() != sections["want"] {
				t.Errorf("plans differ\n--- got:\n%s--- want:\n%s", got.String(), sections["want"])
			}
		})
	}
}

// TestBuildWithoutFiles: an instance that names no files, as a host may
// make one, builds; its sources name the files as its positions do, with
// no directory to be relative to.
func TestBuildWithoutFiles(t *testing.T) {
	sections := extract(t, filepath.Join("testdata", "build", "sources.txtar"), t.TempDir())
	cp := compile.New(manifest.NewLoader())
	insts, err := cp.Loader().Load([]string{"project/agent.cue"})
	if err != nil || len(insts) != 1 {
		t.Fatalf("load: %v (%d agents)", err, len(insts))
	}
	insts[0].Files = nil
	p, ds, err := cp.Build(insts[0])
	if err != nil || p == nil {
		t.Fatalf("build: %v %v", err, ds)
	}
	// As the want of sources.txtar, with the files' absolute names.
	abs, err := filepath.Abs(filepath.Join("project", "agent.cue"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(strings.TrimPrefix(sections["want"], "project/agent.cue\n"), ": agent.cue:", ": "+abs+":")
	if got := describePlan(p); got != want {
		t.Errorf("plan differs\n--- got:\n%s--- want:\n%s", got, want)
	}
}

// extract writes an archive's files into dir, makes dir the working
// directory, and returns the sections that are not files: those named in
// lower-case letters alone ("build", "want").
func extract(t *testing.T, file, dir string) map[string]string {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range ar.Files {
		if strings.Trim(f.Name, "abcdefghijklmnopqrstuvwxyz") == "" {
			sections[f.Name] = string(f.Data)
			continue
		}
		name := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return sections
}

// describePlan prints the output tool and the sources of a plan, one a
// line, indented.
func describePlan(p *plan.Plan) string {
	var b strings.Builder
	if p.Output != nil {
		fmt.Fprintf(&b, "  output: mode %s, tool %q\n", p.Output.Mode, p.Output.Tool)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Sources)) {
		fmt.Fprintf(&b, "  source %s: %s\n", k, p.Sources[k])
	}
	return b.String()
}
