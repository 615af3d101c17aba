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
// the number of manifests in it. Each agent here retains about 25 KiB
// while its CUE context lives: 400 of them in one context would hold
// about 10 MiB.
func TestLoaderLetsAgentsGo(t *testing.T) {
	const n = 500
	dir := t.TempDir()
	for i := range n {
		src := fmt.Sprintf("name: \"a%d\"\n%s\noutput: {description: \"d\", schema: {type: \"object\", properties: {x: {type: \"integer\", maximum: %d}}, required: [\"x\"]}}\n", i, validManifest[len("\nname: \"a\"\n"):], i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%03d.cue", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLoader()
	l.EvalTimeout = -1 // no goroutine of its own: nothing but the loader holds an agent
	var first, last uint64
	seen := 0
	err := l.Each([]string{dir}, func(inst *Instance) {
		if len(inst.Errors) > 0 || inst.Manifest == nil {
			t.Fatalf("%s: %v", inst.Source, inst.Errors)
		}
		switch seen++; seen {
		case agentsPerContext:
			first = liveHeap()
		case n:
			last = liveHeap()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != n {
		t.Fatalf("%d agents, want %d", seen, n)
	}
	if last > first+1<<20 {
		t.Errorf("live heap %.1f MiB after %d agents, %.1f MiB after %d: the loader holds the agents it handed over",
			float64(last)/(1<<20), n, float64(first)/(1<<20), agentsPerContext)
	}
}

// liveHeap returns the bytes of live heap objects, after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
