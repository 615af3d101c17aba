package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
)

var update = flag.Bool("update", os.Getenv("AGENTC_UPDATE") != "", "rewrite the want sections of testdata cases")

// TestVetCases runs agentc vet on every bad manifest in testdata/vet. Each
// case is a txtar archive: the manifest files, an optional "args" file (the
// command line after "agentc"; by default "vet" and every manifest file)
// and "want", the exact output. Every case must fail with exit 1, unless an
// "exit" file gives another code: a case with "exit" 0 is a manifest that vet
// must accept, with nothing to say.
func TestVetCases(t *testing.T) {
	files, err := filepath.Glob("../../testdata/vet/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("want at least 30 bad manifests in testdata/vet, found %d", len(files))
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		abs, _ := filepath.Abs(file)
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var args []string
			var want []byte
			wantIdx := -1
			wantCode := cli.ExitFindings
			for i, f := range ar.Files {
				switch f.Name {
				case "want":
					want, wantIdx = f.Data, i
				case "args":
					args = strings.Fields(string(f.Data))
				case "exit":
					if wantCode, err = strconv.Atoi(strings.TrimSpace(string(f.Data))); err != nil {
						t.Fatalf("exit: %v", err)
					}
				default:
					p := filepath.Join(dir, f.Name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if args == nil {
				args = []string{"vet"}
				for _, f := range ar.Files {
					if f.Name != "want" && f.Name != "args" && f.Name != "exit" && !strings.Contains(f.Name, "/") {
						args = append(args, f.Name)
					}
				}
			}
			if wantIdx < 0 && !*update {
				t.Fatal("case has no want section")
			}
			t.Chdir(dir)
			var stdout, stderr bytes.Buffer
			code := run(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Dir: dir})
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = stdout.Bytes()
				if err := os.WriteFile(abs, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				want = stdout.Bytes()
			}
			if code != wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, wantCode, stderr.String())
			}
			if got := stdout.String(); got != string(want) {
				t.Errorf("output differs\n--- got:\n%s--- want:\n%s", got, want)
			}
			if stderr.Len() > 0 {
				t.Errorf("unexpected stderr:\n%s", stderr.String())
			}
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if i := strings.LastIndex(line, " ["); i >= 0 {
					seen[strings.TrimSuffix(line[i+2:], "]")] = true
				}
			}
		})
	}
	for _, r := range compile.Rules {
		if !seen[r.Code] {
			t.Errorf("no case in testdata/vet produces %s (%s)", r.Code, r.Summary)
		}
	}
	if !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, "yaml") }) {
		t.Error("no YAML case in testdata/vet")
	}
}
