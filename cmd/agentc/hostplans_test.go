package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/cli"
)

// TestHostExamplePlans: the plans the Go examples of the runtime and its batch runner run are
// compiled from the manifests beside them. After changing a manifest or
// the plan format, rewrite them with AGENTC_UPDATE=1 (or -update).
func TestHostExamplePlans(t *testing.T) {
	manifests, _ := filepath.Glob("../../runtime/testdata/example/*.cue")
	if len(manifests) == 0 {
		t.Fatal("found no manifests in runtime/testdata/example")
	}
	for _, m := range manifests {
		m, err := filepath.Abs(m)
		if err != nil {
			t.Fatal(err)
		}
		dir, base := filepath.Split(m)
		want := filepath.Join(dir, strings.TrimSuffix(base, ".cue")+".plan.json")
		// Positions in the plan name the manifest as compiled beside it.
		t.Chdir(dir)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"compile", base}, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir}); code != 0 {
			t.Fatalf("compile %s: exit %d\n%s", m, code, stderr.String())
		}
		if *update {
			if err := os.WriteFile(want, stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(want); err != nil || !bytes.Equal(got, stdout.Bytes()) {
			t.Errorf("%s is not what compiling %s gives (%v): run this test with AGENTC_UPDATE=1", want, m, err)
		}
	}
}
