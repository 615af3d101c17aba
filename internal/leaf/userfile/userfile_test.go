package userfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/leaf/userfile"
)

func TestReadBound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := userfile.Read(p, 5, "a test file"); err != nil || string(b) != "12345" {
		t.Errorf("Read at the bound: %q, %v", b, err)
	}
	var tl *userfile.TooLargeError
	if _, err := userfile.Read(p, 4, "a test file"); !errors.As(err, &tl) || tl.Limit != 4 {
		t.Errorf("Read past the bound: %v", err)
	}
	if _, err := userfile.ReadFrom(strings.NewReader("123456"), 5, "standard input", "an input"); !errors.As(err, &tl) || tl.Name != "standard input" {
		t.Errorf("ReadFrom past the bound: %v", err)
	}
	var nr *userfile.NotRegularError
	if _, err := userfile.Read(dir, 10, "a test file"); !errors.As(err, &nr) {
		t.Errorf("Read of a directory: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := userfile.Read("/dev/zero", 10, "a test file"); !errors.As(err, &nr) || !strings.Contains(err.Error(), "character device") {
			t.Errorf("Read of /dev/zero: %v", err)
		}
	}
}

func TestSame(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(dir, "s")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := os.Link(a, filepath.Join(dir, "h")); err != nil {
		t.Skip("no hard links:", err)
	}
	if err := os.Symlink("missing", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"a", "s", true},
		{"a", "h", true},
		{"a", "./a", true},
		{"dangling", "missing", true},
		{"new", "./new", true},
		{"new", "other", false},
		{"a", "new", false},
	} {
		if got := userfile.Same(filepath.Join(dir, c.a), filepath.Join(dir, c.b)); got != c.same {
			t.Errorf("Same(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
	err := userfile.CheckOutputs([]userfile.Named{{What: "-o", Path: filepath.Join(dir, "h")}}, []userfile.Named{{What: "the journal", Path: a}})
	if err == nil || !strings.Contains(err.Error(), "is the same file as the journal") {
		t.Errorf("CheckOutputs of a hard link: %v", err)
	}
	if err := userfile.CheckOutputs([]userfile.Named{{What: "-o", Path: filepath.Join(dir, "b")}}, []userfile.Named{{What: "the journal", Path: a}}); err != nil {
		t.Errorf("CheckOutputs of another file: %v", err)
	}
}

func TestBeneath(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	out := filepath.Join(top, "out")
	for _, d := range []string{filepath.Join(root, "in"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"up":      "..",
		"outdir":  "../out",
		"abs":     out,
		"inside":  "in",
		"dangle":  "../out/new.txt",
		"in/back": "../in",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"a.jsonl", true},
		{"in/a.jsonl", true},
		{"new/deeper/a.jsonl", true},
		{"inside/a.jsonl", true},
		{"in/back/x/a.jsonl", true},
		{"up/a.jsonl", false},
		{"outdir/a.jsonl", false},
		{"outdir/new/a.jsonl", false},
		{"abs/a.jsonl", false},
		{"dangle", false},
		{"../a.jsonl", false},
	} {
		err := userfile.Beneath(root, filepath.Join(root, c.path))
		if (err == nil) != c.ok {
			t.Errorf("Beneath(%s) = %v, want ok %v", c.path, err, c.ok)
		}
	}
}

// TestAbout: sizes for reading, to one decimal.
func TestAbout(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1.0 KiB", 1658: "1.6 KiB",
		2 << 20: "2.0 MiB", 5<<30 + 1<<29: "5.5 GiB", 1000000 << 40: "1000000.0 TiB"} {
		if got := userfile.About(n); got != want {
			t.Errorf("About(%d) = %q, want %q", n, got, want)
		}
	}
}
