package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
)

var fuzzExts = []string{".cue", ".json", ".yaml"}

// FuzzVet loads and checks arbitrary bytes as a CUE, JSON or YAML manifest.
// Whatever the input, vetting must not panic, and every diagnostic must
// carry a code and a message. Seeds: the examples and the bad manifests of
// testdata/vet, plus the corpus in testdata/fuzz/FuzzVet.
func FuzzVet(f *testing.F) {
	for _, name := range globOrEmpty(f, "../examples/*.*") {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, extIndex(name))
	}
	for _, name := range globOrEmpty(f, "../testdata/vet/*.txtar") {
		ar, err := txtar.ParseFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name != "want" && file.Name != "args" && file.Name != "exit" {
				f.Add(file.Data, extIndex(file.Name))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		name := "fuzz" + fuzzExts[int(format)%len(fuzzExts)]
		l := manifest.NewLoader()
		l.EvalTimeout = 2 * time.Second // a slow input is cut off, and reported as too complex
		for _, d := range compile.New(l).Check(l.LoadBytes(name, data)) {
			if d.Code == "" || d.Message == "" {
				t.Fatalf("diagnostic without code or message: %+v", d)
			}
			if !d.Pos.IsValid() {
				t.Fatalf("diagnostic without position: %s", d)
			}
		}
	})
}

func globOrEmpty(f *testing.F, pattern string) []string {
	names, err := filepath.Glob(pattern)
	if err != nil {
		f.Fatal(err)
	}
	return names
}

func extIndex(name string) uint8 {
	for i, ext := range fuzzExts {
		if strings.HasSuffix(name, ext) {
			return uint8(i)
		}
	}
	return 0
}
