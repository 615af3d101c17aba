package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSingleFileLikeLoad: a single self-contained .cue file, built without
// cue/load, loads as cue/load loads it — the same manifest, the same
// errors at the same lines and columns. The same files are loaded inside
// a CUE module, where they go through cue/load, and outside one.
func TestSingleFileLikeLoad(t *testing.T) {
	files := map[string]string{
		"valid":    validManifest,
		"package":  "package a\n" + validManifest,
		"stdlib":   "import \"strings\"\n" + strings.Replace(validManifest, `"Answer."`, `strings.ToUpper("answer.")`, 1),
		"unknown":  validManifest + "bogus: 1\ncapabilities: tools: t: {kind: \"fs\", description: \"d\", root: \".\", nope: 2}\n",
		"missing":  "name: \"a\"\nmodel: {provider: \"test\"}\n",
		"type":     strings.Replace(validManifest, `"a"`, `"Not A Name"`, 1),
		"budget":   validManifest + "budgets: tokens: -1\n",
		"conflict": validManifest + "name: \"b\"\n",
	}
	plain, mod := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(mod, "cue.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "cue.mod", "module.cue"), []byte("module: \"example.com/m\"\nlanguage: version: \"v0.17.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := func(inst *Instance) string {
		var b strings.Builder
		for _, e := range inst.Errors {
			fmt.Fprintf(&b, "%d:%d %s [%s]\n", e.Pos.Line(), e.Pos.Column(), e.Msg, e.Code)
		}
		if inst.Manifest != nil {
			fmt.Fprintf(&b, "manifest %q %q\n", inst.Manifest.Name, inst.Manifest.Instructions)
		}
		return b.String()
	}
	for name, src := range files {
		t.Run(name, func(t *testing.T) {
			var got [2]string
			for i, dir := range []string{plain, mod} {
				p := filepath.Join(dir, name+".cue")
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				l := NewLoader()
				if i == 0 && l.inModule(dir) {
					t.Skip("the temporary directory lies in a CUE module")
				}
				insts, err := l.Load([]string{p})
				if err != nil || len(insts) != 1 {
					t.Fatalf("%v, %d instances", err, len(insts))
				}
				if f := insts[0].Errors; len(f) > 0 && !strings.HasSuffix(f[0].Pos.Filename(), name+".cue") {
					t.Errorf("position names %s", f[0].Pos.Filename())
				}
				got[i] = summary(insts[0])
			}
			if got[0] != got[1] {
				t.Errorf("built directly:\n%s\nthrough cue/load:\n%s", got[0], got[1])
			}
			if name != "valid" && name != "package" && name != "stdlib" && got[0] == "" {
				t.Errorf("no finding")
			}
		})
	}
}
