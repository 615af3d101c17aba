package userfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/internal/leaf/userfile"
)

// fsName returns the fs.FS name of a host path in f.
func fsName(t testing.TB, f *userfile.FS, host string) string {
	p, ok := f.FSPath(host)
	if !ok {
		t.Fatalf("%s is not in the FS rooted at %s", host, f.Root)
	}
	return strings.TrimPrefix(p, "/")
}

func TestFS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, big := write("small", "0123456789"), write("big", "0123456789A")
	f := &userfile.FS{Root: userfile.RootOf(dir), PerFile: 10, Total: 25, What: "a test file"}
	if got := f.HostPath("/" + fsName(t, f, small)); got != small {
		t.Errorf("HostPath(FSPath(%s)) = %s", small, got)
	}
	if b, err := f.ReadFile(fsName(t, f, small)); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile at the bound: %q, %v", b, err)
	}
	var tl *userfile.TooLargeError
	if _, err := f.ReadFile(fsName(t, f, big)); !errors.As(err, &tl) || tl.Name != big {
		t.Errorf("ReadFile past the bound: %v", err)
	}
	if _, err := f.Open(fsName(t, f, big)); !errors.As(err, &tl) || tl.Name != big {
		t.Errorf("Open past the bound: %v", err)
	}
	file, err := f.Open(fsName(t, f, small))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(file); err != nil || string(b) != "0123456789" {
		t.Errorf("reading an opened file at the bound: %q, %v", b, err)
	}
	file.Close()
	// 20 bytes read so far: the next 10 pass the 25 in all.
	var be *userfile.BudgetError
	if _, err := f.ReadFile(fsName(t, f, small)); !errors.As(err, &be) || be.Name != small || !strings.Contains(err.Error(), "past 25 bytes in all") {
		t.Errorf("ReadFile past the total: %v", err)
	}
	if entries, err := fs.ReadDir(f, fsName(t, f, dir)); err != nil || len(entries) != 2 {
		t.Errorf("ReadDir: %v, %v", entries, err)
	}

	// Contents given are served, not read.
	g := &userfile.FS{Root: userfile.RootOf(dir), PerFile: 10, Total: 100, What: "a test file", Files: map[string][]byte{big: []byte("given")}}
	if b, err := fs.ReadFile(g, fsName(t, g, big)); err != nil || string(b) != "given" {
		t.Errorf("ReadFile of a given file: %q, %v", b, err)
	}

	// A link to a device, a directory and a FIFO are not read.
	var nr *userfile.NotRegularError
	if _, err := os.Stat("/dev/zero"); err == nil {
		zero := filepath.Join(dir, "zero.cue")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		for _, read := range []func(string) error{
			func(n string) error { _, err := g.ReadFile(n); return err },
			func(n string) error { _, err := g.Open(n); return err },
		} {
			if err := read(fsName(t, g, zero)); !errors.As(err, &nr) || nr.Path != zero || !strings.Contains(err.Error(), "character device") {
				t.Errorf("reading a link to /dev/zero: %v", err)
			}
		}
	}
	if _, err := g.ReadFile(fsName(t, g, dir)); !errors.As(err, &nr) {
		t.Errorf("ReadFile of a directory: %v", err)
	}
	if _, err := g.Open("../x"); err == nil {
		t.Error("Open of an invalid name succeeded")
	}
}

// TestFSWithin: an FS kept to a directory opens, reads, lists and
// describes nothing a link leads to outside it, and says so; what is not
// there is not there, and links inside it are followed.
// TestFSCheck holds every file an FS hands its reader, opened or read,
// from the host or from Files, to its Check: one refused is never handed
// over, and its refusal is the FS's.
func TestFSCheck(t *testing.T) {
	dir := t.TempDir()
	good, bad, held := filepath.Join(dir, "good"), filepath.Join(dir, "bad"), filepath.Join(dir, "held")
	for _, p := range []string{good, bad} {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("refused")
	f := &userfile.FS{Root: userfile.RootOf(dir), PerFile: 10, Total: 100, What: "a test file", Files: map[string][]byte{held: []byte("bad")},
		Check: func(path string, data []byte) error {
			if string(data) == "bad" {
				return refused
			}
			return nil
		}}
	for _, p := range []string{bad, held} {
		if _, err := f.ReadFile(fsName(t, f, p)); !errors.Is(err, refused) {
			t.Errorf("ReadFile(%s): %v, want refused", p, err)
		}
		if _, err := f.Open(fsName(t, f, p)); !errors.Is(err, refused) {
			t.Errorf("Open(%s): %v, want refused", p, err)
		}
	}
	if !errors.Is(f.Refused(), refused) {
		t.Errorf("Refused() = %v", f.Refused())
	}
	file, err := f.Open(fsName(t, f, good))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if b, err := io.ReadAll(file); err != nil || string(b) != "good" {
		t.Errorf("reading a file checked: %q, %v", b, err)
	}
}

func TestFSWithin(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	for _, d := range []string{"root/pkg", "outside"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"root/pkg/a.cue": "a: 1", "outside/secret": "S3CRET"} {
		if err := os.WriteFile(filepath.Join(top, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"root/pkg/out.txt": filepath.Join(top, "outside", "secret"),
		"root/pkg/rel.txt": "../../outside/secret",
		"root/pkg/in.cue":  "a.cue",
		"root/ext":         filepath.Join(top, "outside"),
		"root/inner":       "pkg",
	} {
		if err := os.Symlink(target, filepath.Join(top, link)); err != nil {
			t.Fatal(err)
		}
	}
	within := userfile.Resolve(root)
	ops := map[string]func(f *userfile.FS, name string) error{
		"Open":     func(f *userfile.FS, n string) error { _, err := f.Open(n); return err },
		"ReadFile": func(f *userfile.FS, n string) error { _, err := f.ReadFile(n); return err },
		"ReadDir":  func(f *userfile.FS, n string) error { _, err := f.ReadDir(n); return err },
		"Stat":     func(f *userfile.FS, n string) error { _, err := f.Stat(n); return err },
	}
	for op, do := range ops {
		for _, c := range []struct {
			name    string
			outside bool
		}{
			{"root/pkg/out.txt", true},
			{"root/pkg/rel.txt", true},
			{"root/ext", true},
			{"root/ext/secret", true},
			{"outside/secret", true},
			{"root/pkg/absent.cue", false},
			{"root/pkg/in.cue", false},
			{"root/inner/a.cue", false},
			{"root/pkg", false},
		} {
			f := &userfile.FS{Root: userfile.RootOf(top), PerFile: 100, Total: 1000, What: "a test file", Within: within}
			host := filepath.Join(top, c.name)
			err := do(f, fsName(t, f, host))
			var oe *userfile.OutsideError
			if got := errors.As(err, &oe); got != c.outside {
				t.Errorf("%s(%s): %v, want outside %v", op, c.name, err, c.outside)
				continue
			}
			if c.outside && (oe.Name != host || !errors.Is(f.Refused(), err)) {
				t.Errorf("%s(%s): %v names %s; refused %v", op, c.name, err, oe.Name, f.Refused())
			}
			if !c.outside && errors.As(f.Refused(), &oe) {
				t.Errorf("%s(%s): refused %v", op, c.name, f.Refused())
			}
		}
	}
}
