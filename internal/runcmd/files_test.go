package runcmd

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/filestore"
)

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '%'
	}
	return len(p), nil
}

// A file from an endless standard input is read to its bound and
// refused, storing nothing.
func TestEndlessStdinFile(t *testing.T) {
	store, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	fi := &fileInputs{fields: []plan.FileField{{Name: "doc", MediaTypes: []string{"application/pdf"}, MaxBytes: 1 << 20}}, store: store, stdin: endless{}}
	_, err = fi.resolve(nil, []string{"doc=-"}, ".")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), "larger than the 1 MiB input doc takes") {
		t.Fatalf("got %v", err)
	}
}

// An input refused for any of its files leaves nothing in the store, nor
// any of the temporary files its files were staged in: every file is
// checked before any is stored, whichever way it is given.
func TestRefusedInputStoresNothing(t *testing.T) {
	dir := t.TempDir()
	pdf := []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, bad := write("good.pdf", pdf), write("bad.png", png)
	big := make([]byte, 17<<20)
	copy(big, pdf)
	big1, big2 := write("big1.pdf", big), write("big2.pdf", append(big[:len(big)-1:len(big)-1], 'x'))
	b64 := base64.StdEncoding.EncodeToString
	fields := []plan.FileField{
		{Name: "a", MediaTypes: []string{"application/pdf"}, MaxBytes: 20 << 20},
		{Name: "b", MediaTypes: []string{"application/pdf"}, MaxBytes: 20 << 20},
	}
	cases := []struct {
		name  string
		input string
		given []string
		want  string
	}{
		{"flag then flag", "", []string{"a=" + good, "b=" + bad}, "the file is image/png, and input b takes application/pdf"},
		{"flag then path", `{"b": "@bad.png"}`, []string{"a=" + good}, "input b @bad.png: the file is image/png"},
		{"flag then base64", `{"b": "` + b64(png) + `"}`, []string{"a=" + good}, "input b: the file is image/png"},
		{"path then base64", `{"a": "@good.pdf", "b": "` + b64(png) + `"}`, nil, "input b: the file is image/png"},
		{"base64 then missing", `{"a": "` + b64(pdf) + `", "b": "@none.pdf"}`, nil, "input b @none.pdf"},
		{"base64 then corrupt", `{"a": "` + b64(pdf) + `", "b": "%%%"}`, nil, "not base64"},
		{"together too large", "", []string{"a=" + big1, "b=" + big2}, "the run's files come to more than the 32 MiB a run takes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storeDir := filepath.Join(t.TempDir(), "files")
			store, err := filestore.Open(storeDir)
			if err != nil {
				t.Fatal(err)
			}
			fi := &fileInputs{fields: fields, store: store}
			_, err = fi.resolve(json.RawMessage(c.input), c.given, dir)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a usage error saying %q", err, c.want)
			}
			left, err := os.ReadDir(storeDir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("the store holds %d entries after a refused input, the first %s", len(left), left[0].Name())
			}
		})
	}
	// The same files, all accepted, are all stored, each once.
	storeDir := filepath.Join(t.TempDir(), "files")
	store, err := filestore.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	fi := &fileInputs{fields: fields, store: store}
	in, err := fi.resolve(json.RawMessage(`{"b": "@good.pdf"}`), []string{"a=" + big1}, dir)
	if err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(storeDir)
	if err != nil || len(left) != 2 {
		t.Fatalf("the store holds %v (%v), want the two files", left, err)
	}
	if !strings.Contains(string(in), `"file_name":"good.pdf"`) || !strings.Contains(string(in), `"file_name":"big1.pdf"`) {
		t.Errorf("input %s does not name both files", in)
	}
}

// TestReplayStore: a replay reads its files from the store beside its
// journal, FILE.files or a store in files/ beside it, and puts nothing in
// a files/ directory of the person's own, which is no store.
func TestReplayStore(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "run.jsonl")
	own := filepath.Join(dir, "files")
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, done, err := storeFor(Flags{replay: journal})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() == own {
		t.Errorf("a replay took the person's files/ directory for its store")
	}
	done()
	// A store beside it is taken.
	blob := strings.Repeat("ab", 32)
	if err := os.Remove(filepath.Join(own, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, blob), []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	// It is read, never written: the replay's store is its own, over it.
	readsFrom := func(s *filestore.Store) string {
		p, err := s.Path(filestore.Prefix + blob)
		if err != nil {
			return err.Error()
		}
		return filepath.Dir(p)
	}
	if s, done, err = storeFor(Flags{replay: journal}); err != nil || readsFrom(s) != own || s.Dir() == own {
		t.Errorf("the store beside the journal: %v, %v", s, err)
	}
	done()
	// FILE.files comes first.
	mine := journal + ".files"
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, blob), []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if s, done, err = storeFor(Flags{replay: journal}); err != nil || readsFrom(s) != mine || s.Dir() == mine {
		t.Errorf("the journal's own store: %v, %v", s, err)
	}
	done()
}
