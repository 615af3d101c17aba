package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"agentc.dev/agentc/runtime/journal"
)

// crashEntries are the effects of a run to crash: model calls that write
// value lines before their entry, tool calls that do not, and a failure.
func crashEntries(t *testing.T) []journal.Entry {
	failed := toolEntry(t, journal.Key{Round: 2, Ordinal: 1}, `{"q":"a query long enough to be stored once, as a value line of its own"}`)
	failed.Response, failed.Error = nil, "exit status 2"
	return []journal.Entry{
		modelEntry(t, journal.Key{Round: 1}, modelRequest(5, 2)),
		toolEntry(t, journal.Key{Round: 1, Ordinal: 1}, `{"q":"crash"}`),
		modelEntry(t, journal.Key{Round: 2}, modelRequest(5, 4)),
		failed,
		modelEntry(t, journal.Key{Round: 3}, modelRequest(5, 6)),
	}
}

// TestCrashAfterCreate: once Create returned, the journal is on the disk,
// its directory entry included, header and all.
func TestCrashAfterCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	d := journal.UseCrashDisk(t, dir)
	w := create(t, path)
	d.Crash(0)
	w.Close()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatalf("a journal Create returned is lost in a crash: %v", err)
	}
	if j.Header.Run != "run-7" || j.Header.Plan != testPlan || len(j.Entries) != 0 || j.Truncated {
		t.Errorf("after the crash: header %+v, %d entries, Truncated %v", j.Header, len(j.Entries), j.Truncated)
	}
}

// crashRun records entries on a disk that stops at its crashAt-th sync
// (Create makes two: the header's, then its directory's) and keeps keep
// bytes of what was written after the last sync. It returns how many
// effects Append acknowledged (-1 for none, Create not having returned)
// and what was not synced.
func crashRun(t *testing.T, dir string, entries []journal.Entry, crashAt, keep int) (acked int, unsynced []byte) {
	d := journal.UseCrashDisk(t, dir)
	d.CrashAt = crashAt
	w, err := journal.Create(filepath.Join(dir, "run.journal"), testHeader())
	acked = -1
	// Create syncs the directory for what it is worth: a machine that
	// stopped there never saw Create return.
	if err == nil && !d.Down() {
		for acked = 0; acked < len(entries); acked++ {
			if err = w.Append(entries[acked]); err != nil {
				break
			}
		}
	}
	if err != nil && !errors.Is(err, journal.ErrCrashed) {
		t.Fatalf("crash at sync %d: %v", crashAt, err)
	}
	if want := max(crashAt-3, -1); d.Down() && acked != want {
		t.Fatalf("the machine stopped at sync %d with %d effects acknowledged, want %d: a Create or Append returned before syncing", crashAt, acked, want)
	}
	unsynced = d.Unsynced()
	d.Crash(keep)
	if w != nil {
		w.Close() // releases the lock, as the end of the process would
	}
	return acked, unsynced
}

// tornKeeps returns the lengths of a torn write to try: nothing, the whole
// write, and each line of it with and without its newline.
func tornKeeps(unsynced []byte) []int {
	keeps := []int{0, 1, len(unsynced) - 1, len(unsynced)}
	for i, c := range unsynced {
		if c == '\n' {
			keeps = append(keeps, i, i+1)
		}
	}
	slices.Sort(keeps)
	return slices.Compact(slices.DeleteFunc(keeps, func(k int) bool { return k < 0 || k > len(unsynced) }))
}

// TestCrashKeepsAcknowledged crashes a run at each of its syncs, with the
// write being synced lost whole, in part or kept: every effect Append
// acknowledged survives, the one being written is there only if all of
// it reached the disk, and the journal reads, a torn last line left out.
// Resume then cuts that line off for good, and the run goes on.
func TestCrashKeepsAcknowledged(t *testing.T) {
	entries := crashEntries(t)
	for crashAt := 1; crashAt <= len(entries)+3; crashAt++ {
		_, unsynced := crashRun(t, t.TempDir(), entries, crashAt, 0)
		for _, keep := range tornKeeps(unsynced) {
			t.Run(fmt.Sprintf("sync%d/keep%d", crashAt, keep), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "run.journal")
				acked, unsynced := crashRun(t, dir, entries, crashAt, keep)
				if acked < 0 {
					// The header was never acknowledged: nothing is left, not
					// even the file it was written to.
					if names := dirNames(t, dir); len(names) > 0 {
						t.Fatalf("after a crash in Create, the directory holds %q", names)
					}
					return
				}
				kept := unsynced[:keep]
				torn := keep > 0 && kept[keep-1] != '\n'
				want := acked
				if keep == len(unsynced) && keep > 0 {
					want++ // written whole, though never acknowledged
				}
				j, err := journal.Open(path)
				if err != nil {
					t.Fatalf("after the crash: %v", err)
				}
				if len(j.Entries) != want || j.Truncated != torn {
					t.Fatalf("after the crash: %d entries, Truncated %v; want %d (%d acknowledged), %v", len(j.Entries), j.Truncated, want, acked, torn)
				}
				for i, e := range j.Entries {
					sameEntry(t, e, entries[i])
				}

				// Resume cuts the torn line off, and a crash straight after
				// does not bring it back.
				d := journal.UseCrashDisk(t, dir)
				j, w, err := journal.Resume(path)
				if err != nil {
					t.Fatal(err)
				}
				if j.Truncated != torn || len(j.Entries) != want {
					t.Fatalf("Resume: %d entries, Truncated %v; want %d, %v", len(j.Entries), j.Truncated, want, torn)
				}
				d.Crash(0)
				w.Close()
				if j, err = journal.Open(path); err != nil || j.Truncated || len(j.Entries) != want {
					t.Fatalf("after Resume and a crash: %v; want %d entries, not truncated", err, want)
				}

				journal.UseCrashDisk(t, dir)
				j, w, err = journal.Resume(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries[len(j.Entries):] {
					if err := w.Append(e); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				data := readFile(t, path)
				if j, err = journal.Read(bytes.NewReader(data)); err != nil || j.Truncated || len(j.Entries) != len(entries) {
					t.Fatalf("the run resumed: %v, %d entries, want %d", err, len(j.Entries), len(entries))
				}
				for i, e := range j.Entries {
					sameEntry(t, e, entries[i])
				}
				checkValuesOnce(t, data)
			})
		}
	}
}

// dirNames returns the names in dir but lock files, which a crash leaves.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestSyncFails: a disk that fails to sync fails Create and Append, with
// its error; Create leaves no file behind, and a Writer whose sync failed
// writes nothing more.
func TestSyncFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	d := journal.UseCrashDisk(t, dir)
	eio := &fs.PathError{Op: "sync", Path: path, Err: syscall.EIO}
	d.SyncErr = eio

	if w, err := journal.Create(path, testHeader()); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Create on a disk that fails to sync: %v, %v; want %v", w, err, eio)
	}
	if names := dirNames(t, dir); len(names) > 0 {
		t.Errorf("a failed Create left %q", names)
	}

	d.SyncErr = nil
	w := create(t, path)
	defer w.Close()
	if err := w.Append(toolEntry(t, journal.Key{Round: 1}, `{"q":"x"}`)); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	d.SyncErr = eio
	err := w.Append(toolEntry(t, journal.Key{Round: 2}, `{"q":"y"}`))
	if !errors.Is(err, syscall.EIO) || !strings.HasPrefix(err.Error(), "journal: ") {
		t.Fatalf("Append on a disk that fails to sync: %v, want %v", err, eio)
	}
	written := readFile(t, path)
	if !bytes.HasPrefix(written, before) || len(written) == len(before) {
		t.Fatalf("the failed Append wrote nothing: the test does not test a sync")
	}
	d.SyncErr = nil
	if again := w.Append(toolEntry(t, journal.Key{Round: 3}, `{"q":"z"}`)); again != err {
		t.Errorf("Append after a failed sync: %v, want the first error %v", again, err)
	}
	if after := readFile(t, path); !bytes.Equal(after, written) {
		t.Errorf("Append after a failed sync wrote to the journal:\n%s", after[len(written):])
	}
}

// TestDirSyncFails: a directory sync that fails to write fails Create,
// leaving no file; one the file system refuses (EINVAL, as some network
// file systems answer) does not.
func TestDirSyncFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	d := journal.UseCrashDisk(t, dir)
	d.DirSyncErr = &fs.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
	if w, err := journal.Create(path, testHeader()); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Create with a directory that fails to sync: %v, %v; want EIO", w, err)
	}
	if names := dirNames(t, dir); len(names) > 0 {
		t.Errorf("a failed Create left %q", names)
	}
	d.DirSyncErr = &fs.PathError{Op: "sync", Path: dir, Err: syscall.EINVAL}
	w, err := journal.Create(path, testHeader())
	if err != nil {
		t.Fatalf("Create with a directory the file system will not sync: %v", err)
	}
	w.Close()
	if _, err := journal.Open(path); err != nil {
		t.Errorf("the journal Create wrote does not read: %v", err)
	}
}
