//go:build unix

package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRecordNotRegular: a record in the journal directory that is not a
// regular file (a FIFO, a directory) is no record, found at once: a read
// never waits on a FIFO's writer.
func TestRecordNotRegular(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	fifo, sub := strings.Repeat("a", 32), strings.Repeat("b", 32)
	if err := syscall.Mkfifo(filepath.Join(dir, fifo+".json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, sub+".json"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fifo, sub} {
		if rec := runs.Get(id); rec != nil {
			t.Errorf("%s: read a record %+v", id, rec)
		}
	}
}
