//go:build unix

package project

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDirsOwner: the search for a project's files stops below a directory
// the user does not own, even where a project root lies above it; with
// no root reached, only the agent's own directory counts.
func TestDirsOwner(t *testing.T) {
	top := t.TempDir()
	proj := filepath.Join(top, "proj")
	shared := filepath.Join(proj, "shared")
	mine := filepath.Join(shared, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module example.com/p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Dirs(mine); !slices.Equal(got, []string{mine, shared, proj}) {
		t.Fatalf("owned all the way: %v", got)
	}
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	if err := os.Chown(shared, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if got := Dirs(mine); !slices.Equal(got, []string{mine}) {
		t.Errorf("past a directory another user owns: %v, want only %s", got, mine)
	}
	if got := Dirs(shared); !slices.Equal(got, []string{shared, proj}) {
		t.Errorf("from the other user's directory itself: %v", got)
	}
}
