//go:build unix && !aix

package filestore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/runtime/filestore"
)

// TestSweepLeavesWhatIsHeld: staging removes the temporary files of
// processes that are gone (unlocked, untouched for an hour), and leaves a
// recent one, one another process holds however old, and a file staged by
// another store of the same directory, which then commits.
func TestSweepLeavesWhatIsHeld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	other, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Another process's staging, not yet committed.
	live, err := other.Stage(strings.NewReader("staged by another process"), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	var liveName string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".put-") {
			liveName = e.Name()
		}
	}
	if liveName == "" {
		t.Fatal("no staging file for the staged file")
	}
	put := func(name string, mtime time.Time) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(name), 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dead := put(".put-dead", old)
	recent := put(".put-recent", time.Now())
	held := put(".put-held", old)
	if err := os.Chtimes(filepath.Join(dir, liveName), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".put-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A lock taken through a file of its own, as another process's is.
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(bytes.NewReader([]byte("a new file")), 1<<10); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{dead: false, recent: true, held: true, filepath.Join(dir, liveName): true, filepath.Join(dir, ".put-dir"): true} {
		if _, err := os.Lstat(path); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if err := live.Commit(); err != nil {
		t.Fatalf("the other store's staged file: %v", err)
	}
	if _, err := s.Stat(live.Digest); err != nil {
		t.Error(err)
	}
}
