package cuecmd

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUntar checks that the tree of a revision is written as the archive
// holds it, and that a member named outside the directory is refused
// before anything is written there.
func TestUntar(t *testing.T) {
	archive := func(names ...string) *bytes.Buffer {
		var b bytes.Buffer
		w := tar.NewWriter(&b)
		for _, name := range names {
			body := []byte("x: 1\n")
			if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(body); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "tree")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := untar(archive("a.cue", "pkg/b.cue"), dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.cue", "pkg/b.cue"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != "x: 1\n" {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	for _, bad := range []string{"../evil.cue", "/abs.cue"} {
		if err := untar(archive(bad), dir); err == nil {
			t.Errorf("%s: written, want refused", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "evil.cue")); err == nil {
		t.Error("../evil.cue was written outside the directory")
	}
}
