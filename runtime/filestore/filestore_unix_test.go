//go:build unix

package filestore_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/runtime/filestore"
)

func TestPutFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, dir} {
		_, err := s.PutFile(p, 1<<20)
		var nr *userfile.NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("%s: got %v, want a refusal without waiting", p, err)
		}
	}
	// A link to a regular file is followed.
	real := filepath.Join(dir, "real.txt")
	if err := os.WriteFile(real, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "tolink")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.PutFile(filepath.Join(dir, "tolink"), 10); err != nil || b.MediaType != "text/plain" {
		t.Errorf("a link to a file: %+v, %v", b, err)
	}
}

// A link in a blob's place is never followed, even to the right bytes;
// a FIFO there is refused without waiting.
func TestOpenRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.PutFile(writeFile(t, dir, "a.txt", "text"), 10)
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(s.Dir(), b.Digest[len(filestore.Prefix):])
	if err := os.Rename(blob, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "moved"), blob); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(b.Digest); err == nil {
		t.Error("a link in a blob's place was followed")
	}
	os.Remove(blob)
	if err := syscall.Mkfifo(blob, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if _, _, err := s.Open(b.Digest); err == nil {
		t.Error("a FIFO in a blob's place was opened")
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStoreHeld: a store holds the directory it first used, so a link put
// at its name afterwards leads neither its writes nor its reads
// elsewhere; a store agentc named (OpenOwn) refuses a link at its name,
// at open and at first use, when it makes the directory.
func TestStoreHeld(t *testing.T) {
	base := t.TempDir()
	dir, held, victim := filepath.Join(base, "files"), filepath.Join(base, "held"), filepath.Join(base, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.OpenOwn(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.Put(strings.NewReader("first"), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	// The directory moved away, a link to another put in its place.
	if err := os.Rename(dir, held); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, dir); err != nil {
		t.Fatal(err)
	}
	second, err := s.Put(strings.NewReader("second"), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("the link's target got %d files", len(ents))
	}
	for _, b := range []filestore.Blob{first, second} {
		if _, err := os.Stat(filepath.Join(held, b.Digest[len(filestore.Prefix):])); err != nil {
			t.Errorf("the held directory lacks a blob: %v", err)
		}
		r, _, err := s.Open(b.Digest)
		if err != nil {
			t.Fatalf("Open after the swap: %v", err)
		}
		if _, err := io.ReadAll(r); err != nil {
			t.Error(err)
		}
		r.Close()
	}

	// At open, and at first use when the directory was not there yet.
	if _, err := filestore.OpenOwn(dir); err == nil || !strings.Contains(err.Error(), "is a symbolic link, which agentc does not follow") {
		t.Errorf("OpenOwn of a link: %v", err)
	}
	later := filepath.Join(base, "later")
	s2, err := filestore.OpenOwn(later)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := os.Symlink(victim, later); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Put(strings.NewReader("x"), 1<<10); err == nil || !strings.Contains(err.Error(), "is a symbolic link, which agentc does not follow") {
		t.Errorf("a link put before first use: %v", err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("the link's target got %d files", len(ents))
	}
	// Open follows a link at its name, once.
	s3, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if _, err := s3.Put(strings.NewReader("third"), 1<<10); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 1 {
		t.Errorf("Open's store through a link: %d files where it leads, want 1", len(ents))
	}
	// After Close, nothing.
	s3.Close()
	if _, err := s3.Put(strings.NewReader("fourth"), 1<<10); err == nil {
		t.Error("Put after Close")
	}
}

// TestStoreRemovedRenewed: a store whose directory is removed while it is
// held (a person cleaning up while a server runs) takes the one at its
// name again, made anew, rather than fail every file after.
func TestStoreRemovedRenewed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	s, err := filestore.OpenOwn(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(strings.NewReader("first"), 1<<10); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	b, err := s.Put(strings.NewReader("second"), 1<<10)
	if err != nil {
		t.Fatalf("a file put after the directory was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, b.Digest[len(filestore.Prefix):])); err != nil {
		t.Error(err)
	}
}

// TestStoreRenewedForReading: a store that only reads (a worker's) sees
// the blobs of a directory another process removed and made again at its
// name.
func TestStoreRenewedForReading(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	reader, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	put := func(text string) filestore.Blob {
		t.Helper()
		w, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		b, err := w.Put(strings.NewReader(text), 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := put("first")
	if _, err := reader.Stat(first.Digest, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Stat(first.Digest, 1<<20); !errors.Is(err, filestore.ErrNotStored) {
		t.Errorf("a blob removed with its directory: %v", err)
	}
	second := put("second")
	if _, err := reader.Stat(second.Digest, 1<<20); err != nil {
		t.Errorf("a blob of the directory made again: %v", err)
	}
}

// TestOwnStoreMode: the directory of a store beside a journal is its
// owner's alone, as the journal is; a store others read (workers') is
// readable by all.
func TestOwnStoreMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, c := range []struct {
		open func(string) (*filestore.Store, error)
		want os.FileMode
	}{{filestore.OpenOwn, 0o700}, {filestore.Open, 0o755}} {
		dir := filepath.Join(t.TempDir(), "run.jsonl.files")
		s, err := c.open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(strings.NewReader("hello\n"), 100); err != nil {
			t.Fatal(err)
		}
		s.Close()
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("the store's directory has mode %v, want %v", fi.Mode().Perm(), c.want)
		}
	}
}
