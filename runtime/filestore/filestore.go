// Package filestore keeps the files a run is given, once each, by content:
// a directory of blobs named by the blake3 digest of their bytes (plain
// blake3, as b3sum prints it). Journals refer to files by digest and never
// copy them; every journal of a batch shares one store, so a file named by
// a thousand items is stored once.
//
// A blob is written whole or not at all (a temporary file, synced, then
// renamed), and read back through a check of its digest: a blob changed on
// disk fails its reader at the end rather than pass as the file it claims
// to be. A temporary file its process left behind, killed outright while it
// wrote, is removed by the next process that stages a file in the store,
// and, when it was too recent then, by a later stage of a process that
// holds the store on (sweepDue). Digests are checked for form before they name a path, so a
// journal or a host cannot reach outside the directory through one.
//
// The directory is opened once, when it is first used, and every name is
// resolved in it from then on (an os.Root): a link put at the
// directory's name while a run uses the store leads nothing elsewhere,
// and no link inside it leads out of it. On Windows a directory held open
// cannot be removed or renamed until the store is closed.
package filestore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

// Prefix begins every digest.
const Prefix = "blake3:"

// Store is a directory of blobs. It is safe for concurrent use, by one
// process or several: blobs are only ever added, each by a rename.
type Store struct {
	dir    string
	noLink bool        // a link at dir is refused (OpenOwn)
	mode   os.FileMode // of the directory, when the store makes it
	under  *Store      // read where this one does not hold a blob (Over)

	mu     sync.Mutex
	root   *os.Root        // dir, once opened: every name is resolved in it
	closed bool            // Close was called
	temps  map[string]bool // base names of files being staged, or staged and not yet committed or discarded
	swept  time.Time       // when a stage last swept the directory (sweep)
}

// Open returns the store in dir. The directory is made when the first
// file is put in it: a run that is given none leaves none. A link at
// dir's name is followed, once, when the store first uses it.
func Open(dir string) (*Store, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("file store: %s is not a directory", dir)
	}
	return &Store{dir: dir, mode: 0o755}, nil
}

// OpenOwn returns the store in dir, a name agentc chose beside a journal
// (FILE.files, DIR/files), where a symbolic link can only have been put
// by someone else: one there is refused, now and when the store first
// uses the directory (making it, if it was not there), so that the files
// a run is given and those its tools return never go where the link
// leads. A directory it makes is its owner's alone (mode 0700), as the
// journal beside it is: the files are the run's as much as its
// conversation. (A store Open names, such as the one workers share, is
// made readable by all.)
func OpenOwn(dir string) (*Store, error) {
	s := &Store{dir: dir, noLink: true, mode: 0o700}
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return nil, s.linkError()
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("file store: %s is not a directory", dir)
	}
	return s, nil
}

func (s *Store) linkError() error {
	return fmt.Errorf("the file store %s is a symbolic link, which agentc does not follow: remove it", s.dir)
}

// errClosed is the error of a store used after Close.
var errClosed = errors.New("file store: used after it was closed")

// dirRoot returns the store's directory, opened when first asked for and
// held until Close. With mk, a directory not there is made first; without
// it, one not there is (nil, nil): nothing is stored yet.
func (s *Store) dirRoot(mk bool) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, errClosed
	case s.root != nil:
		return s.root, nil
	}
	if mk {
		if err := os.MkdirAll(s.dir, s.mode); err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
	}
	r, err := os.OpenRoot(s.dir)
	if !mk && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	if s.noLink {
		// The directory opened must be the one at the name itself: a link
		// put there, before or after the open, shows as another file.
		li, lerr := os.Lstat(s.dir)
		ri, rerr := r.Stat(".")
		if lerr != nil || rerr != nil || !os.SameFile(li, ri) {
			r.Close()
			return nil, s.linkError()
		}
	}
	s.root = r
	return r, nil
}

// renew lets go of old, the directory held, when it is still the one
// held, and returns the directory at the store's name, made again if it
// is not there and mk is set (else nil, nil).
func (s *Store) renew(old *os.Root, mk bool) (*os.Root, error) {
	s.mu.Lock()
	if s.root == old {
		// A file staged in it and not yet committed can no longer be:
		// its directory is gone.
		s.root = nil
		old.Close()
	}
	s.mu.Unlock()
	return s.dirRoot(mk)
}

// stale reports whether root, the directory held, is no longer the one
// at the store's name: removed, and perhaps made again, by another
// process, whose blobs this store would otherwise never see.
func (s *Store) stale(root *os.Root) bool {
	held, err := root.Stat(".")
	if err != nil {
		return true
	}
	there, err := os.Stat(s.dir)
	return err != nil || !os.SameFile(held, there)
}

// Close lets go of the store's directory; the store may not be used
// after it. Files staged and not yet committed are removed first.
func (s *Store) Close() error {
	s.DiscardStaged()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Over makes s read the blobs it does not hold from under, and returns
// s: files are put in s alone, and under is only read. A replay reads the
// files its journal names from the store beside the journal, where the
// files it is given go to a store of its own: a run that only reads a
// journal writes nothing beside it (the person's files into a checkout),
// nor where a link at the store's name would lead. Close does not close
// under.
func (s *Store) Over(under *Store) *Store {
	s.under = under
	return s
}

// Blob is a file in the store.
type Blob struct {
	Digest string
	Size   int64
	// MediaType is what the bytes are, by plan.Sniffer: "" when
	// none agentc recognises.
	MediaType string
}

// TooLargeError is a file past the bound it was put under.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s", userfile.Size(e.Limit))
}

// Put stores what r holds, up to limit bytes: more is a *TooLargeError
// and stores nothing. Memory stays a buffer's, whatever the size.
func (s *Store) Put(r io.Reader, limit int64) (Blob, error) {
	return committed(s.Stage(r, limit))
}

// committed commits what staging gave, when it gave a file.
func committed(st *Staged, err error) (Blob, error) {
	if err == nil {
		err = st.Commit()
	}
	if err != nil {
		return Blob{}, err
	}
	return st.Blob, nil
}

// Staged is a file written beside the store and not yet in it: its Blob
// (digest, size, media type) is known, so that a caller can check it, and
// those of the other files it is given with, before the store holds any.
// Commit stores it; Discard drops it. Until one of them is called a
// staged file holds a temporary file in the store's directory.
type Staged struct {
	Blob
	s    *Store
	root *os.Root // the store's directory
	temp string   // its name there, "" once committed or discarded
	f    *os.File // open, and so locked, until then (where holdsOpen)
}

// Stage writes what r holds, up to limit bytes, beside the store: more is
// a *TooLargeError and leaves nothing. Memory stays a buffer's, whatever
// the size.
func (s *Store) Stage(r io.Reader, limit int64) (*Staged, error) {
	root, err := s.dirRoot(true)
	if err != nil {
		return nil, err
	}
	if s.sweepDue() {
		s.sweep(root)
	}
	tmp, name, err := createStaging(root)
	if errors.Is(err, fs.ErrNotExist) {
		// The directory held was removed (a person cleaning up while a
		// server runs): the one at the name now is taken, as at first use.
		if root, err = s.renew(root, true); err != nil {
			return nil, err
		}
		tmp, name, err = createStaging(root)
	}
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	s.track(name, true)
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			root.Remove(name)
			s.track(name, false)
		}
	}()
	if holdsOpen {
		if err := holdStaging(tmp); err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
		// Read-only from the start, so that whoever sweeps the store can
		// open it, even if this process dies part way; writes go through
		// the open file.
		if err := tmp.Chmod(0o444); err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
	}
	h := blake3.New()
	sniff := &plan.Sniffer{}
	n, err := io.Copy(io.MultiWriter(tmp, h, sniff), io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	st := &Staged{
		Blob: Blob{Digest: Prefix + hex.EncodeToString(h.Sum(nil)), Size: n, MediaType: sniff.MediaType()},
		s:    s,
		root: root,
		temp: name,
	}
	if holdsOpen {
		// The file stays open, and so locked, until it is committed or
		// discarded: a sweep leaves it alone however long that takes.
		st.f = tmp
	} else {
		// Closed, so that it can be renamed and removed where an open
		// file cannot be.
		if err := tmp.Close(); err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
		if err := root.Chmod(name, 0o444); err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
	}
	keep = true
	return st, nil
}

// now is the store's clock (a test's, in tests).
var now = time.Now

// stagingPrefix begins the name of every file being staged.
const stagingPrefix = ".put-"

// createStaging makes a new staging file in root, readable and writable
// by its owner alone, and returns it and its name.
func createStaging(root *os.Root) (*os.File, string, error) {
	for range 100 {
		name := stagingPrefix + rand.Text()
		f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("no new name for a staging file")
}

// sweepDue reports whether a stage is to sweep the directory, and notes
// that it does: the first, and then one once abandonedAfter has passed
// since the last. A process that holds the store for days (a server, a
// worker) would otherwise never remove what a process killed in the hour
// before it started left, too recent for its first sweep; and reading a
// store of many blobs at every stage would cost a directory's listing.
func (s *Store) sweepDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := now()
	if !s.swept.IsZero() && t.Sub(s.swept) < abandonedAfter {
		return false
	}
	s.swept = t
	return true
}

// sweep removes the staging files of processes that are gone: a process
// killed outright (SIGKILL, the OOM killer, a lost machine) while it
// staged leaves its temporary file, which nothing else would ever remove.
// A file counts as left behind once no process holds its lock and it has
// not changed for abandonedAfter (sweepOne); this process's own are never
// looked at. The directory is read in batches, unsorted: a store may hold
// many blobs. A store that cannot be read is left to Stage's own errors.
func (s *Store) sweep(root *os.Root) {
	d, err := root.Open(".")
	if err != nil {
		return
	}
	defer d.Close()
	now := now()
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), stagingPrefix) || !e.Type().IsRegular() || ownStaging(e.Name()) {
				continue
			}
			sweepOne(root, e.Name(), now)
		}
		if err != nil {
			return
		}
	}
}

// StageOpen stages the rest of the file f, opened by the caller (a
// regular file, as userfile's opens make sure), up to limit bytes; a file
// whose size is already past limit is refused before it is read.
func (s *Store) StageOpen(f *os.File, limit int64) (*Staged, error) {
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return s.Stage(f, limit)
}

// Commit puts the staged file in the store, under its digest.
func (st *Staged) Commit() error {
	if st.temp == "" {
		return errors.New("file store: a staged file committed after it was committed or discarded")
	}
	name := st.temp
	st.temp = ""
	defer st.s.track(name, false)
	// Renamed while still locked; its bytes were synced when staged, so
	// closing it afterwards has nothing left to report.
	if st.f != nil {
		defer st.f.Close()
	}
	if err := st.root.Rename(name, st.Digest[len(Prefix):]); err != nil {
		st.root.Remove(name)
		return fmt.Errorf("file store: %w", err)
	}
	return nil
}

// Discard drops the staged file; after Commit it does nothing.
func (st *Staged) Discard() {
	if st != nil && st.temp != "" {
		if st.f != nil {
			st.f.Close()
		}
		st.root.Remove(st.temp)
		st.s.track(st.temp, false)
		st.temp = ""
	}
}

// staging holds the base names of the temporary files this process is
// staging, in any store: a sweep leaves them alone whatever their locks
// say (a file system that keeps flock as POSIX locks grants a process's
// own file to it, and closing it there would drop the lock).
var staging struct {
	sync.Mutex
	names map[string]bool
}

func ownStaging(name string) bool {
	staging.Lock()
	defer staging.Unlock()
	return staging.names[name]
}

// track notes that the temporary file name (in the store's directory) is
// in use by staging, or no longer.
func (s *Store) track(name string, on bool) {
	staging.Lock()
	if on {
		if staging.names == nil {
			staging.names = map[string]bool{}
		}
		staging.names[name] = true
	} else {
		delete(staging.names, name)
	}
	staging.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !on {
		delete(s.temps, name)
		return
	}
	if s.temps == nil {
		s.temps = map[string]bool{}
	}
	s.temps[name] = true
}

// DiscardStaged removes the temporary files of every file being staged
// now, or staged and not yet committed or discarded: for a process about
// to exit on a signal, which would otherwise leave them in the store's
// directory. Files committed stay. A stage still writing its file fails
// (or, done, leaves its caller a staged file whose Commit fails).
func (s *Store) DiscardStaged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == nil {
		return
	}
	for name := range s.temps {
		s.root.Remove(name)
	}
	clear(s.temps)
}

// PutFile stores the regular file at path (following links; a FIFO, a
// device, a socket or a directory is refused without waiting on it), up
// to limit bytes.
func (s *Store) PutFile(path string, limit int64) (Blob, error) {
	f, err := userfile.Open(path)
	if err != nil {
		return Blob{}, err
	}
	defer f.Close()
	return s.PutOpen(f, limit)
}

// PutOpen stores the rest of the file f, opened by the caller (a regular
// file, as userfile's opens make sure), up to limit bytes; a file whose
// size is already past limit is refused before it is read.
func (s *Store) PutOpen(f *os.File, limit int64) (Blob, error) {
	return committed(s.StageOpen(f, limit))
}

// CheckDigest fails unless d is a digest in the store's form.
func CheckDigest(d string) error {
	hexPart, ok := strings.CutPrefix(d, Prefix)
	if !ok || len(hexPart) != 64 || strings.ToLower(hexPart) != hexPart {
		return fmt.Errorf("%q is not a file digest (blake3: and 64 lower-case hexadecimal digits)", d)
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return fmt.Errorf("%q is not a file digest (blake3: and 64 lower-case hexadecimal digits)", d)
	}
	return nil
}

// ErrNotStored is the error of Open and Stat for a digest the store does
// not hold.
var ErrNotStored = errors.New("not in the file store")

// Stat returns the blob of a digest the store holds, of at most limit
// bytes, its media type sniffed from its bytes: the first ones for a
// signature, all of them, through the check of the digest, for text. A
// larger blob is a *TooLargeError, with the blob's Digest and Size, and
// none of its bytes is read: whoever may write the store could otherwise
// have a check read a file as large as the disk holds (a sparse one
// larger).
func (s *Store) Stat(digest string, limit int64) (Blob, error) {
	r, size, err := s.Open(digest)
	if err != nil {
		return Blob{}, err
	}
	defer r.Close()
	if size > limit {
		return Blob{Digest: digest, Size: size}, &TooLargeError{Limit: limit}
	}
	sniff := &plan.Sniffer{}
	if _, err := io.CopyN(sniff, r, plan.SniffLen); err != nil && err != io.EOF {
		return Blob{}, err
	}
	if sniff.Head() == "text/plain" {
		// A byte past the size to reach the end, where the digest is
		// checked, and no more, whatever is appended meanwhile.
		if _, err := io.Copy(sniff, io.LimitReader(r, size+1-sniff.Size())); err != nil {
			return Blob{}, err
		}
		if sniff.Size() != size {
			return Blob{}, fmt.Errorf("file %s: the stored file changed as it was read", digest)
		}
	}
	return Blob{Digest: digest, Size: size, MediaType: sniff.MediaType()}, nil
}

// Path returns the path of a blob the store holds, a regular file that
// is read-only, for a program to read (an exec tool's argument). The
// program reads it without the check of its digest Open makes.
//
// The path is resolved by name, by the program: a link put at the
// store's name after this check leads the program elsewhere, where Open's
// reader stays in the directory the store holds.
func (s *Store) Path(digest string) (string, error) {
	r, _, err := s.open(digest)
	if s.under != nil && errors.Is(err, ErrNotStored) {
		return s.under.Path(digest)
	}
	if err != nil {
		return "", err
	}
	r.Close()
	abs, err := filepath.Abs(filepath.Join(s.dir, digest[len(Prefix):]))
	if err != nil {
		return "", err
	}
	return abs, nil
}

// Open returns a reader of a blob and its size. The reader fails at its
// end if the bytes are not the digest's.
func (s *Store) Open(digest string) (io.ReadCloser, int64, error) {
	r, size, err := s.open(digest)
	if s.under != nil && errors.Is(err, ErrNotStored) {
		return s.under.Open(digest)
	}
	return r, size, err
}

// open opens a blob of s itself.
func (s *Store) open(digest string) (io.ReadCloser, int64, error) {
	if err := CheckDigest(digest); err != nil {
		return nil, 0, err
	}
	name := digest[len(Prefix):]
	root, err := s.dirRoot(false)
	if err != nil {
		return nil, 0, err
	}
	if root == nil {
		return nil, 0, fmt.Errorf("file %s: %w (%s)", digest, ErrNotStored, s.dir)
	}
	// A blob is a regular file the store wrote: a link, a FIFO or a
	// device in its place is refused, never followed or waited on. (The
	// directory follows a link within itself whatever the flags say, and
	// none out of it: one at the name is refused after the open. The
	// file opened is not held to the one at the name now: the same file
	// committed again by another stage replaces it, whole, by a rename.)
	f, err := root.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) && s.stale(root) {
		if root, err = s.renew(root, false); err != nil {
			return nil, 0, err
		}
		if root == nil {
			return nil, 0, fmt.Errorf("file %s: %w (%s)", digest, ErrNotStored, s.dir)
		}
		f, err = root.OpenFile(name, os.O_RDONLY|noFollow, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("file %s: %w (%s)", digest, ErrNotStored, s.dir)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("file %s: not a file the store wrote: %w", digest, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("file %s: not a file the store wrote (%s)", digest, fi.Mode().Type())
	}
	if li, err := root.Lstat(name); err == nil && li.Mode()&os.ModeSymlink != 0 {
		f.Close()
		return nil, 0, fmt.Errorf("file %s: not a file the store wrote (%s)", digest, li.Mode().Type())
	}
	return &checked{f: f, h: blake3.New(), want: digest}, fi.Size(), nil
}

// checked reads a blob and checks its digest at the end.
type checked struct {
	f    *os.File
	h    hash.Hash
	want string
}

func (c *checked) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF {
		if got := Prefix + hex.EncodeToString(c.h.Sum(nil)); got != c.want {
			return n, fmt.Errorf("file %s: the stored bytes are not the file's (their digest is %s): the store was changed", c.want, got)
		}
	}
	return n, err
}

func (c *checked) Close() error { return c.f.Close() }
