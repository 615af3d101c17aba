package userfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CopyInto and CopyDirInto write through the os.Root: whole files, with
// their permissions, never through a link that leads out of it.
func TestCopyInto(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges there")
	}
	src, dst, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name, text string, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	j := write(src, "one.jsonl", "journal\n", 0o600)
	// A link at the name, leading out, is replaced, not written through.
	if err := os.Symlink(filepath.Join(outside, "planted"), filepath.Join(dst, "one.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := CopyInto(root, j, "one.jsonl"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dst, "one.jsonl"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the journal copied: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "one.jsonl")); string(b) != "journal\n" {
		t.Errorf("the journal copied holds %q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted")); err == nil {
		t.Error("the copy went through the link")
	}

	// A directory of blobs: read-only ones stay so, a dot file is left,
	// one there already is kept, unless its size says it is damaged.
	blobs := filepath.Join(src, "one.jsonl.files")
	if err := os.Mkdir(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	write(blobs, "aaaa", "new a", 0o444)
	write(blobs, "bbbb", "new b", 0o444)
	write(blobs, ".put-123", "half", 0o600)
	if err := os.Mkdir(filepath.Join(dst, "one.jsonl.files"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dst, "one.jsonl.files"), "bbbb", "old b", 0o444)
	write(blobs, "cccc", "new c", 0o444)
	write(filepath.Join(dst, "one.jsonl.files"), "cccc", "damaged", 0o444)
	if err := CopyDirInto(root, blobs, "one.jsonl.files"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join(dst, "one.jsonl.files"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dst, "one.jsonl.files", e.Name()))
		got[e.Name()] = string(b)
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o444 {
			t.Errorf("%s is %v, not read-only", e.Name(), fi.Mode())
		}
	}
	if len(got) != 3 || got["aaaa"] != "new a" || got["bbbb"] != "old b" || got["cccc"] != "new c" {
		t.Errorf("the blobs copied: %v", got)
	}
	// None where the source has none.
	if err := CopyDirInto(root, filepath.Join(src, "none"), "two.jsonl.files"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "two.jsonl.files")); err == nil {
		t.Error("a directory was made for no files")
	}

	// The blobs' directory swapped for a link that leads out: refused,
	// nothing written outside.
	if err := os.Symlink(outside, filepath.Join(dst, "three.jsonl.files")); err != nil {
		t.Fatal(err)
	}
	if err := CopyDirInto(root, blobs, "three.jsonl.files"); err == nil {
		t.Error("the blobs were copied through a link that leads out")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside: %v", ents)
	}
}

// WriteBeneath makes the directories and writes the file through the
// os.Root; a link on the way that leads out is refused, named, and
// nothing is made where it leads. One inside is followed.
func TestWriteBeneath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges there")
	}
	dir, outside := t.TempDir(), t.TempDir()
	name := filepath.Join("a", "b", "f.txt")
	for _, link := range []string{"a", filepath.Join("a", "b"), name} {
		if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
		err := WriteBeneath(dir, name, []byte("x"), 0o644)
		if err == nil || !strings.HasPrefix(err.Error(), link+" is a symbolic link leading out of "+dir) {
			t.Errorf("a link out at %s: %v", link, err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("a link out at %s: %s made outside", link, ents[0].Name())
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in", filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBeneath(dir, name, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, "in", "b", "f.txt"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 {
		t.Errorf("written through the link inside: %v %v", fi, err)
	}
}
