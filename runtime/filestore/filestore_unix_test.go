//go:build unix

package filestore_test

import (
	"errors"
	"os"
	"path/filepath"
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
