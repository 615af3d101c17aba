package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestWrite: the file holds the new content with the mode asked for, and
// nothing else is left beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("the file holds %q (%v), want new", got, err)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the one", len(ents))
	}
}

// TestWriteFails: a write that cannot be made leaves the old content and
// no temporary file, and its error names the path.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	// A directory where the file should go: the rename fails.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, []byte("new"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), "writing "+path+": ") || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("Write over a directory: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d entries after a failed write, want 1", len(ents))
	}
	missing := filepath.Join(dir, "missing")
	err = Write(filepath.Join(missing, "f"), nil, 0o644)
	if want := "writing " + filepath.Join(missing, "f") + ": cannot create a file in " + missing + ": "; err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("Write into a directory that does not exist: %v, want %q and no temporary file's name", err, want)
	}
}

// TestWriteReplacesLink: a link to a regular file is replaced by the file
// written, not followed: its target is as it was.
func TestWriteReplacesLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs symbolic links")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "plan.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("the link's target holds %q, want it as it was", b)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, %v; want a regular file", link, fi, err)
	}
}
