package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// CrashDisk stands under every Writer of a test in place of the disk: it
// writes through to the real files, and remembers what a real disk would
// keep if the machine stopped, so that Crash can put the files back to
// that. A file keeps what its last Sync saw; a directory keeps the entries
// its last Sync saw, and a new or renamed file whose directory was not
// synced since is lost. It covers the files and directories the writer
// opens; the journal's lock file is left alone.
//
// Entries in place when the disk is installed count as synced. A file
// renamed over another whose entry was never synced is removed, where a
// real disk would bring the other back: the tests here do not do that.
type CrashDisk struct {
	t  testing.TB
	mu sync.Mutex
	// CrashAt is the Sync, of a file or a directory, counted from 1, at
	// which the machine stops: that Sync and every later write and Sync
	// fail, having done nothing. 0 is never.
	CrashAt int
	// SyncErr, if set, is what every Sync returns, having synced nothing,
	// as a disk that fails to write.
	SyncErr error
	// DirSyncErr, if set, is what a directory's Sync returns, having
	// synced nothing.
	DirSyncErr error
	syncs      int
	down       bool
	files      []*crashFile
	dirs       map[string]map[string]os.FileInfo // the synced entries of each directory
}

// ErrCrashed is what a CrashDisk's files return once the machine stopped.
var ErrCrashed = errors.New("crash disk: the machine stopped")

type crashFile struct {
	d      *CrashDisk
	f      *os.File
	dir    string // where it is; for a directory, itself
	id     os.FileInfo
	data   []byte // what the file holds, as written
	synced []byte // what the disk would keep of it
}

// UseCrashDisk puts a CrashDisk under every Writer until the test ends.
// The entries of dir, where the test's journals are, count as synced.
func UseCrashDisk(t testing.TB, dir string) *CrashDisk {
	d := &CrashDisk{t: t, dirs: map[string]map[string]os.FileInfo{}}
	d.dirs[dir] = d.entries(dir)
	saved := onDisk
	onDisk = d.file
	t.Cleanup(func() { onDisk = saved })
	return d
}

func (d *CrashDisk) file(f *os.File) file {
	d.mu.Lock()
	defer d.mu.Unlock()
	id, err := f.Stat()
	if err != nil {
		d.t.Fatal(err)
	}
	if id.IsDir() {
		return &crashFile{d: d, f: f, dir: f.Name(), id: id}
	}
	// What the file held before is on the disk: a journal to resume.
	data, err := os.ReadFile(f.Name())
	if err != nil {
		d.t.Fatal(err)
	}
	cf := &crashFile{d: d, f: f, dir: filepath.Dir(f.Name()), id: id, data: data, synced: slices.Clone(data)}
	d.files = append(d.files, cf)
	return cf
}

// entries returns the files in dir now.
func (d *CrashDisk) entries(dir string) map[string]os.FileInfo {
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.t.Fatal(err)
	}
	files := map[string]os.FileInfo{}
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			files[e.Name()] = fi
		}
	}
	return files
}

// Down reports whether the machine has stopped.
func (d *CrashDisk) Down() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down
}

// Unsynced returns what the files hold past what the disk would keep of
// them, one after another in the order they were opened.
func (d *CrashDisk) Unsynced() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b []byte
	for _, f := range d.files {
		if tail, ok := bytes.CutPrefix(f.data, f.synced); ok {
			b = append(b, tail...)
		}
	}
	return b
}

// Crash stops the machine, if it has not stopped already, and puts the
// files back to what the disk kept: each file's synced bytes and then the
// first keep bytes of what was appended after them (a write torn part
// way), and no entry a directory sync did not see. Call it once the
// writer has returned.
func (d *CrashDisk) Crash(keep int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = true
	for _, f := range d.files {
		name := f.name()
		if name == "" {
			continue
		}
		path := filepath.Join(f.dir, name)
		if was, ok := d.dirs[f.dir][name]; !ok || !os.SameFile(was, f.id) {
			if err := os.Remove(path); err != nil {
				d.t.Fatal(err)
			}
			continue
		}
		kept := slices.Clone(f.synced)
		if tail, ok := bytes.CutPrefix(f.data, f.synced); ok {
			kept = append(kept, tail[:min(keep, len(tail))]...)
		}
		if err := os.WriteFile(path, kept, 0o600); err != nil {
			d.t.Fatal(err)
		}
	}
}

// name returns the file's name in its directory now, "" if it has none.
func (f *crashFile) name() string {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		f.d.t.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(f.dir, e.Name())); err == nil && os.SameFile(fi, f.id) {
			return e.Name()
		}
	}
	return ""
}

func (f *crashFile) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if f.d.down {
		return 0, ErrCrashed
	}
	n, err := f.f.Write(p)
	f.data = append(f.data, p[:n]...)
	return n, err
}

func (f *crashFile) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if f.d.down {
		return ErrCrashed
	}
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	f.data = f.data[:size] // the writer only ever cuts a file short
	return nil
}

// Sync records what the disk keeps; it does not sync the real file or
// directory, whose fate is the model's.
func (f *crashFile) Sync() error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	f.d.syncs++
	if f.d.syncs == f.d.CrashAt {
		f.d.down = true
	}
	if f.d.down {
		return ErrCrashed
	}
	if f.d.SyncErr != nil {
		return f.d.SyncErr
	}
	if f.id.IsDir() && f.d.DirSyncErr != nil {
		return f.d.DirSyncErr
	}
	if f.id.IsDir() {
		f.d.dirs[f.dir] = f.d.entries(f.dir)
	} else {
		f.synced = slices.Clone(f.data)
	}
	return nil
}

func (f *crashFile) Close() error { return f.f.Close() }
