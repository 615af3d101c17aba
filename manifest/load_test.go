package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"cuelang.org/go/cue"

	"agentc.dev/agentc/internal/leaf/userfile"
)

const validManifest = `
name: "a"
model: {provider: "test", name: "test"}
instructions: "Answer."
budgets: deadline: "1m"
`

// TestLoadGroupsAgents checks how arguments become agents: a package per
// directory and package clause, a file per unpackaged .cue, JSON or YAML
// file, and dir/... for a tree.
func TestLoadGroupsAgents(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one/a.cue", "package x\n"+validManifest)
	write("two/a.cue", "package x\n"+validManifest)
	write("two/b.cue", "package y\n"+validManifest)
	write("two/c.cue", validManifest)
	write("two/d.json", `{"name": "d", "model": {"provider": "test", "name": "t"}, "instructions": "x", "budgets": {"tokens": 9}}`)
	write("two/_skipped.cue", "this is not CUE")
	write("two/deep/e.yaml", "name: e\nmodel: {provider: test, name: t}\ninstructions: x\nbudgets: {tokens: 9}\n")

	tests := []struct {
		arg  string
		want []string // sources, relative to dir
	}{
		{"one", []string{"one"}},
		{"two", []string{"two/c.cue", "two/d.json", "two:x", "two:y"}},
		{"two/...", []string{"two/c.cue", "two/d.json", "two:x", "two:y", "two/deep/e.yaml"}},
		{"two/c.cue", []string{"two/c.cue"}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			insts, err := NewLoader().Load([]string{filepath.Join(dir, tt.arg)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range insts {
				got = append(got, filepath.ToSlash(strings.TrimPrefix(in.Source, dir+string(filepath.Separator))))
				if len(in.Errors) > 0 {
					t.Errorf("%s: %v", in.Source, in.Errors)
				}
				if in.Manifest == nil {
					t.Errorf("%s: no manifest decoded", in.Source)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("agents %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadArgErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"missing.cue", "notes.txt", ".", "./..."} {
		_, err := NewLoader().Load([]string{filepath.Join(dir, arg)})
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v, want an *ArgError", arg, err)
		}
	}
}

// TestLoadDefaults checks that decoding applies the schema's defaults.
func TestLoadDefaults(t *testing.T) {
	inst := NewLoader().LoadBytes("a.cue", []byte(validManifest+`output: {description: "d", schema: {type: "string"}}`))
	if len(inst.Errors) > 0 {
		t.Fatal(inst.Errors)
	}
	o := inst.Manifest.Output
	if o.Name != "answer" || o.Mode != "auto" || o.Enforce != "local" || o.Retries != 2 || o.KeepsTools {
		t.Errorf("output defaults not applied: %+v", o)
	}
	if string(o.Schema) != `{"type":"string"}` {
		t.Errorf("schema %s", o.Schema)
	}
}

// TestLoaderLetsAgentsGo: the loader does not hold the agents it has
// handed over, so the memory vetting a directory needs does not grow with
// the number of manifests in it. A CUE context holds every agent built in
// it; once the caller lets go of the first agent, and the loader has moved
// on, its context must be garbage.
func TestLoaderLetsAgentsGo(t *testing.T) {
	const n = 2*agentsPerContext + 1
	dir := t.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%03d.cue", i)), []byte(validManifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLoader()
	var first weak.Pointer[cue.Context]
	seen := 0
	err := l.Each([]string{dir}, func(inst *Instance) {
		if len(inst.Errors) > 0 || inst.Manifest == nil {
			t.Fatalf("%s: %v", inst.Source, inst.Errors)
		}
		if seen++; seen == 1 {
			first = weak.Make(inst.Value.Context())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != n {
		t.Fatalf("%d agents, want %d", seen, n)
	}
	runtime.GC()
	if first.Value() != nil {
		t.Errorf("after %d agents, the loader holds the CUE context of the first", n)
	}
	runtime.KeepAlive(l) // the loader lives on, to load more
}

// TestExpandReadsBounded: expanding a directory reads each .cue file
// within a manifest's bound to find its package clause: a 1 GB sparse
// file is refused, as a unit of its own carrying the error, having been
// read no further (its package clause was looked for by reading it whole).
func TestExpandReadsBounded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.cue"), []byte("package agent\n"+validManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.cue")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	units, err := expandDir(dir, "")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("expanding the directory allocated %d bytes", n)
	}
	var tl *userfile.TooLargeError
	found := false
	for _, u := range units {
		if slices.Contains(u.files, big) {
			found = true
			if len(u.files) != 1 || !errors.As(u.err, &tl) {
				t.Errorf("the big file's unit: %+v", u)
			}
		}
	}
	if !found {
		t.Errorf("no unit for the big file: %+v", units)
	}
}
