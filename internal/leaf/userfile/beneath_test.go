package userfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenBeneath(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	must(t, os.MkdirAll(filepath.Join(root, "dir"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "f.pdf"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(top, "secret"), []byte("outside"), 0o644))
	for link, target := range map[string]string{
		"rel":    "f.pdf",
		"absin":  filepath.Join(root, "f.pdf"),
		"out":    "../secret",
		"absout": filepath.Join(top, "secret"),
		"dangle": "../absent",
	} {
		must(t, os.Symlink(target, filepath.Join(root, link)))
	}
	fifo := mkfifo(t, filepath.Join(root, "fifo"))
	for _, c := range []struct {
		name string
		want string // the content, or "outside", "not regular", "absent"
	}{
		{"f.pdf", "inside"},
		{"rel", "inside"},
		{"absin", "inside"},
		{"dir/../f.pdf", "inside"},
		{"out", "outside"},
		{"absout", "outside"},
		{"dangle", "outside"},
		{"../secret", "outside"},
		{"dir/../../secret", "outside"},
		{"dir", "not regular"},
		{"fifo", "not regular"},
		{"absent", "absent"},
	} {
		if c.name == "fifo" && !fifo {
			continue
		}
		f, err := OpenBeneath(root, c.name)
		var got string
		var out *OutsideError
		var nr *NotRegularError
		switch {
		case err == nil:
			b, _ := io.ReadAll(f)
			f.Close()
			got = string(b)
		case errors.As(err, &out):
			got = "outside"
		case errors.As(err, &nr):
			got = "not regular"
		case errors.Is(err, fs.ErrNotExist):
			got = "absent"
		default:
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("OpenBeneath(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOpenBeneathSwapped swaps a link in after the path was checked, as
// someone who can write the directory may while agentc runs: the open
// does not follow it out.
func TestOpenBeneathSwapped(t *testing.T) {
	for _, c := range []struct {
		what, name, swap, target string
	}{
		{"the file, for a relative link out", "doc.pdf", "doc.pdf", "../secret"},
		{"the file, for an absolute link out", "doc.pdf", "doc.pdf", "SECRET"},
		{"a directory on the way, for a link out", "sub/doc.pdf", "sub", "../outdir"},
		{"a directory on the way, for an absolute link", "sub/doc.pdf", "sub", "OUTDIR"},
		{"the directory itself", "doc.pdf", ".", "OUTDIR"},
	} {
		t.Run(c.what, func(t *testing.T) {
			top := t.TempDir()
			root := filepath.Join(top, "root")
			must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
			must(t, os.MkdirAll(filepath.Join(top, "outdir"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "doc.pdf"), []byte("inside"), 0o644))
			must(t, os.WriteFile(filepath.Join(root, "sub", "doc.pdf"), []byte("inside"), 0o644))
			must(t, os.WriteFile(filepath.Join(top, "secret"), []byte("outside"), 0o644))
			must(t, os.WriteFile(filepath.Join(top, "outdir", "doc.pdf"), []byte("outside"), 0o644))
			target := c.target
			switch target {
			case "SECRET":
				target = filepath.Join(top, "secret")
			case "OUTDIR":
				target = filepath.Join(top, "outdir")
			}
			swapped := false
			afterResolve = func() {
				p := filepath.Join(root, c.swap)
				if c.swap == "." {
					p = root
					must(t, os.Rename(root, root+".was"))
				} else {
					must(t, os.RemoveAll(p))
				}
				must(t, os.Symlink(target, p))
				swapped = true
			}
			defer func() { afterResolve = func() {} }()
			f, err := OpenBeneath(root, c.name)
			if !swapped {
				t.Fatal("the link was not swapped in")
			}
			if c.swap == "." {
				// The directory opened is the one there before: the file
				// read is its own, never the other directory's.
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(f)
				f.Close()
				if string(b) != "inside" {
					t.Fatalf("OpenBeneath(%s) read %q", c.name, b)
				}
				return
			}
			if err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				t.Fatalf("OpenBeneath(%s) opened %q through the swapped link", c.name, b)
			}
			var out *OutsideError
			if !errors.As(err, &out) {
				t.Errorf("OpenBeneath(%s): %v, want an *OutsideError", c.name, err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenDirBeneath(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	must(t, os.MkdirAll(filepath.Join(root, "testdata", "agent"), 0o755))
	must(t, os.MkdirAll(filepath.Join(top, "out"), 0o755))
	must(t, os.Symlink("testdata", filepath.Join(root, "inside")))
	must(t, os.Symlink("../out", filepath.Join(root, "away")))
	for _, c := range []struct {
		dir string
		ok  bool
	}{
		{"testdata/agent", true},
		{"inside/agent", true},
		{"away", false},
		{"..", false},
	} {
		r, err := OpenDirBeneath(root, filepath.Join(root, c.dir))
		if (err == nil) != c.ok {
			t.Errorf("OpenDirBeneath(%s) = %v, want ok %v", c.dir, err, c.ok)
		}
		if err != nil {
			continue
		}
		// What is written through it lands in the directory opened, even
		// once a link out stands where it was.
		d := filepath.Join(root, c.dir)
		must(t, os.Rename(d, d+".was"))
		must(t, os.Symlink(filepath.Join(top, "out"), d))
		must(t, r.WriteFile("one.jsonl", []byte("{}\n"), 0o600))
		r.Close()
		if _, err := os.Stat(filepath.Join(d+".was", "one.jsonl")); err != nil {
			t.Errorf("%s: the file is not in the directory opened: %v", c.dir, err)
		}
		if _, err := os.Stat(filepath.Join(top, "out", "one.jsonl")); err == nil {
			t.Errorf("%s: the file was written through the link", c.dir)
		}
		must(t, os.Remove(d))
		must(t, os.Rename(d+".was", d))
	}
}
