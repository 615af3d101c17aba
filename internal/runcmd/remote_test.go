package runcmd

import (
	"io"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestSpoolLeavesNoName: the copy of standard input a batch run elsewhere
// reads twice has no name in the temporary directory once made (not on
// Windows, which cannot take an open file's name away): it is made before
// the batch handles stop signals, and a Ctrl-C or a kill then left the
// person's items there. What it holds reads back whole, at two offsets
// at once.
func TestSpoolLeavesNoName(t *testing.T) {
	if goruntime.GOOS == "windows" {
		t.Skip("an open file keeps its name on Windows")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	items := "{\"id\":1}\n{\"id\":2}\n"
	f, size, err := spoolInput(strings.NewReader(items))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	left, err := os.ReadDir(tmp)
	if err != nil || len(left) != 0 {
		t.Errorf("the temporary directory holds %v (%v), want nothing", left, err)
	}
	a, b := io.NewSectionReader(f, 0, size), io.NewSectionReader(f, 0, size)
	first, _ := io.ReadAll(io.LimitReader(a, 5))
	all, _ := io.ReadAll(b)
	rest, _ := io.ReadAll(a)
	if size != int64(len(items)) || string(all) != items || string(first)+string(rest) != items {
		t.Errorf("size %d, read %q and %q+%q, want %q", size, all, first, rest, items)
	}
}
