//go:build unix && !aix && !solaris

package flock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// open opens path afresh: flock(2) locks belong to an open file, so two
// opens in one process exclude each other as two processes would.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func try(t *testing.T, f *os.File, mode Mode) bool {
	t.Helper()
	ok, err := Try(f, mode)
	if err != nil {
		t.Fatalf("Try: %v", err)
	}
	return ok
}

// TestTry: an exclusive lock excludes every other, shared locks exclude
// only exclusive ones, and a lock goes with the file it was taken on.
func TestTry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	a, b, c := open(t, path), open(t, path), open(t, path)

	if !try(t, a, Exclusive) {
		t.Fatal("an exclusive lock on a file no one holds was refused")
	}
	if try(t, b, Shared) || try(t, b, Exclusive) {
		t.Fatal("a lock was granted beside an exclusive one")
	}
	a.Close()
	if !try(t, b, Shared) || !try(t, c, Shared) {
		t.Fatal("a shared lock was refused beside a shared one, or after the exclusive holder closed")
	}
	if try(t, open(t, path), Exclusive) {
		t.Fatal("an exclusive lock was granted beside shared ones")
	}
	// The holder of a shared lock turns it into an exclusive one only
	// when no other file shares it.
	if try(t, b, Exclusive) {
		t.Fatal("a shared lock became exclusive while another file shared it")
	}
	c.Close()
	if !try(t, b, Exclusive) {
		t.Fatal("the only shared lock could not become exclusive")
	}
}

// TestTryClosed: a lock on a file that is not open is an error naming the
// file, not a refusal.
func TestTryClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f := open(t, path)
	f.Close()
	ok, err := Try(f, Exclusive)
	var pe *os.PathError
	if ok || !errors.As(err, &pe) || pe.Op != "flock" {
		t.Fatalf("Try on a closed file = %v, %v; want a flock *os.PathError", ok, err)
	}
	if !Supported {
		t.Fatal("Supported is false on a system with flock")
	}
}
