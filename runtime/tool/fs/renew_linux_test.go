package fs

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"agentc.dev/agentc/plan"
)

// TestRootRenewedNotLedAway: a root removed and made again is renewed
// only through a lookup that follows no link, so a directory above the
// root swapped again and again with a link to elsewhere (another tool
// that may write there, racing the calls) never makes a call read what
// the link leads to. It did, within a few hundred calls, when the root
// was looked up by name and checked after.
func TestRootRenewedNotLedAway(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	for _, d := range []string{"base/data/root", "elsewhere/root"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "elsewhere/root/secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	tool, err := New("files", plan.Tool{Kind: "fs", Description: "The files.", Root: "data/root"}, base)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	// The root removed and made again, so that the tool renews it; then
	// data swapped, atomically, with a link to elsewhere, over and over.
	root := filepath.Join(base, "data/root")
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(base, "data.alt")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var swaps sync.WaitGroup
	swaps.Go(func() {
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(base, "data"), unix.AT_FDCWD, filepath.Join(base, "data.alt"), unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swapping: %v", err)
				return
			}
		}
	})
	defer swaps.Wait()
	defer stop.Store(true)
	for i := range 20000 {
		if got, err := call(tool, "read", "secret.txt"); strings.Contains(got, secret) || err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("call %d read past the root: %q, %v", i+1, got, err)
		}
	}
}

// TestRenewedRootsClosed: a root replaced is closed once no call reads
// it, so a root made again many times (by a tool that may write beside
// it, once a call) costs no more descriptors than one.
func TestRenewedRootsClosed(t *testing.T) {
	dir := tree(t, t.TempDir())
	tool := newTool(t, dir, plan.Tool{})
	root := filepath.Join(dir, "root")
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	remake := func() {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("again"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remake()
	if got, err := call(tool, "read", "a.txt"); err != nil || got != "again" {
		t.Fatalf("after the root was made again: %q, %v", got, err)
	}
	before := open()
	for range 50 {
		remake()
		if got, err := call(tool, "read", "a.txt"); err != nil || got != "again" {
			t.Fatalf("after the root was made again: %q, %v", got, err)
		}
	}
	if after := open(); after > before {
		t.Errorf("%d descriptors open after 50 roots made again, %d before", after, before)
	}
}
