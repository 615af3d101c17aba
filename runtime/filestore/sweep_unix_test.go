//go:build unix && !aix && !solaris

package filestore_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/internal/await"
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
	if err := os.Chtimes(filepath.Join(dir, ".put-dir"), old, old); err != nil {
		t.Fatal(err)
	}
	// A link, old, to an old file outside the store: neither is removed.
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("not the store's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(outside, old, old); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".put-link")
	if err := os.Symlink(outside, link); err != nil {
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
	for path, want := range map[string]bool{dead: false, recent: true, held: true, filepath.Join(dir, liveName): true, filepath.Join(dir, ".put-dir"): true, link: true, outside: true} {
		if _, err := os.Lstat(path); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if err := live.Commit(); err != nil {
		t.Fatalf("the other store's staged file: %v", err)
	}
	if _, err := s.Stat(live.Digest, 1<<20); err != nil {
		t.Error(err)
	}
	// Committed, the blob is no longer held: its lock went with its file.
	path, err := s.Path(live.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if !lockable(t, path) {
		t.Error("a committed blob is still locked: its staging file was left open")
	}
}

// lockable reports whether an exclusive lock on the file at path is free.
func lockable(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// TestStagingFileHeld: while a file is staged its temporary file is
// read-only (whoever sweeps can open it, even if the writer dies part
// way) and locked; once discarded it is gone and its lock with it.
func TestStagingFileHeld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	type result struct {
		st  *filestore.Staged
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := s.Stage(r, 1<<10)
		done <- result{st, err}
	}()
	if _, err := w.Write([]byte("part of a file")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	temp, err := await.Glob(filepath.Join(dir, ".put-*"), func(b []byte) bool { return len(b) > 0 }, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(temp)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("a file being staged has mode %v, want read-only", fi.Mode().Perm())
	}
	if lockable(t, temp) {
		t.Error("a file being staged is not locked")
	}
	w.Close()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if lockable(t, temp) {
		t.Error("a staged file is not locked")
	}
	res.st.Discard()
	if _, err := os.Lstat(temp); err == nil {
		t.Error("a discarded staging file is still there")
	}
}
