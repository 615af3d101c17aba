// Package userfile reads and writes the files a user names on agentc's
// command line or in a manifest: each read is whole but within a bound
// checked as the bytes arrive (a file may grow, or be a device that never
// ends), only from a regular file unless the caller takes a stream; and
// no output is the same file as an input.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// TooLargeError is a file or stream longer than its bound.
type TooLargeError struct {
	Name  string // the path, or what the stream is
	What  string // what it is read as: "a manifest", "a lock file"
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the %s %s may be", e.Name, Size(e.Limit), e.What)
}

// Size writes a number of bytes as people read it: 8 MiB, 512 KiB, 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// About writes a number of bytes as people read it where it need not be
// exact: bytes, or KiB, MiB, GiB or TiB to one decimal (1.6 KiB, 36.7 GiB).
func About(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v, prefix := float64(n)/unit, "KiB"
	for _, p := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, prefix = v/unit, p
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + prefix
}

// NotRegularError is a path that names a directory, a FIFO, a device or a
// socket where a file is read.
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, Kind(e.Mode))
}

// Kind names what a file that is not a regular one is: "a directory",
// "a FIFO", "a symbolic link", ...
func Kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Open opens the regular file at path for reading, following links. A
// FIFO, device, socket or directory is refused without blocking: the
// file is opened without waiting for a FIFO's writer, then checked.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// OutsideError says a path named beneath a directory leads out of it,
// by ".." or through a link.
type OutsideError struct {
	Root, Name string
	// What is what the file is read as (ReadBeneath's "a lock file"), for
	// a file agentc found rather than one the person named; "" for none.
	What string
}

func (e *OutsideError) Error() string {
	if e.What != "" {
		return e.Name + ": " + e.reason()
	}
	return fmt.Sprintf("%s leads out of %s", e.Name, e.Root)
}

// reason is the error of a file agentc found (What set), not naming it.
func (e *OutsideError) reason() string {
	return fmt.Sprintf("%s that is a symbolic link leading out of %s: agentc reads no file it finds from outside the project", e.What, e.Root)
}

// DeniedError is ReadBeneath's error for a file agentc found but may not
// read: the person did not name it, so the error says what it is and
// where a permission may be missing, the usual place being the confine
// block of the tool that runs this agentc.
type DeniedError struct {
	Name, What string
	Err        error // the *fs.PathError
}

func (e *DeniedError) Error() string { return e.Name + ": " + e.reason() }

func (e *DeniedError) Unwrap() error { return e.Err }

func (e *DeniedError) reason() string {
	return fmt.Sprintf("permission denied: it is %s agentc found beside or above the agent and reads to check it; make it readable, or, where this agentc runs as a tool of another agent, add it to that tool's confine.read", e.What)
}

// afterResolve runs between OpenBeneath's check and its open: a test
// swaps links there.
var afterResolve = func() {}

// OpenBeneath opens the regular file at name, a path relative to the
// directory root, as Open does, if it lies beneath root, its links
// followed (else an *OutsideError). The directory is opened first (links
// in root itself are followed, as the person named it), the path is then
// resolved, and opened through the directory by what it resolved to
// (os.Root), which follows no absolute link and no relative one that
// leads out: a link swapped in meanwhile, at root, at the file or at a
// directory on its way, cannot lead the read out of the directory
// opened.
func OpenBeneath(root, name string) (*os.File, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	resolved := func() (string, bool) {
		r := Resolve(root)
		rel, err := filepath.Rel(r, Resolve(filepath.Join(r, name)))
		return rel, err == nil && filepath.IsLocal(rel)
	}
	rel, ok := resolved()
	if !ok {
		return nil, &OutsideError{Root: root, Name: name}
	}
	afterResolve()
	f, err := dir.OpenFile(rel, os.O_RDONLY|nonblock, 0)
	if err != nil {
		// A link put in since the path was resolved, leading out, is
		// refused by the open; say so, as for one there before.
		if _, ok := resolved(); !ok {
			return nil, &OutsideError{Root: root, Name: name}
		}
		return nil, err
	}
	return regular(f, filepath.Join(root, name))
}

// OpenDirBeneath opens the directory d, which must lie beneath root, its
// links followed (else Beneath's error), for writing in it by name
// (os.Root). d is resolved, then opened through root by what it resolved
// to, which follows no absolute link and no relative one that leads out:
// a link swapped in meanwhile cannot pass a directory elsewhere for it,
// and one swapped in after leads nothing written through the os.Root
// astray.
func OpenDirBeneath(root, d string) (*os.Root, error) {
	top, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer top.Close()
	if err := Beneath(root, d); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(Resolve(root), Resolve(d))
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, fmt.Errorf("%s leads out of %s through a symbolic link: agentc does not write there", d, root)
	}
	dir, err := top.OpenRoot(rel)
	if err != nil {
		if berr := Beneath(root, d); berr != nil {
			return nil, berr
		}
		return nil, err
	}
	return dir, nil
}

// regular returns f if it is a regular file, and else closes it.
func regular(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// openStat opens path for reading without waiting for a FIFO's writer,
// and says what it opened: the caller refuses what it must not read.
func openStat(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Read reads the regular file at path whole, failing with a
// *TooLargeError, having read no more than limit+1 bytes, when it holds
// more than limit; what says what it is read as, for the message ("a
// manifest").
func Read(path string, limit int64, what string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	return readOpened(f, path, limit, what)
}

// readOpened reads the regular file f, opened at path, whole, as Read
// does, and closes it.
func readOpened(f *os.File, path string, limit int64, what string) ([]byte, error) {
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	if size > limit {
		return nil, &TooLargeError{Name: path, What: what, Limit: limit}
	}
	return readAll(f, limit, path, what, size)
}

// ReadBeneath is Read for a file agentc found in a project (a
// configuration or lock file beside or above an agent) rather than one
// the person named: it must lie beneath root, the project's root, its
// links followed (else an *OutsideError), so that a link a pull request
// put there cannot have agentc read a file of the machine that checks it
// and quote it in an error.
func ReadBeneath(root, path string, limit int64, what string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// Resolved by name, as Beneath resolves (a confined program, such as
	// agentc serving an MCP tool, may not open the project's directory
	// itself): what checks a project is read while no one swaps its links.
	r := Resolve(root)
	if rel, err := filepath.Rel(r, Resolve(abs)); err != nil || !filepath.IsLocal(rel) {
		return nil, &OutsideError{Root: root, Name: path, What: what}
	}
	data, err := Read(path, limit, what)
	if errors.Is(err, fs.ErrPermission) {
		return nil, &DeniedError{Name: path, What: what, Err: err}
	}
	return data, err
}

// ReadFrom reads r to its end, as io.ReadAll does, failing with a
// *TooLargeError named name once more than limit bytes arrive. A regular
// file is read into a buffer of its size, taken once.
func ReadFrom(r io.Reader, limit int64, name, what string) ([]byte, error) {
	hint := int64(512)
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > hint {
			hint = fi.Size()
		}
	}
	return readAll(r, limit, name, what, hint)
}

func readAll(r io.Reader, limit int64, name, what string, hint int64) ([]byte, error) {
	// The file may have grown since its size was taken: the bound is on
	// what is read, not on what stat said.
	data := make([]byte, 0, min(hint, limit)+1)
	data, err := appendAll(data, io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, What: what, Limit: limit}
	}
	return data, nil
}

func appendAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
	}
}

// Named is a file a command was given, and the flag or argument that
// named it, for messages.
type Named struct {
	What string // "--events", "the journal", "the manifest"
	Path string
	// Shown is the name in messages, when not Path: the name on the
	// command line of a path made absolute.
	Shown string
	// Dir says Path is a directory of agentc's own files (a batch's
	// --record DIR, which it writes, or --replay DIR, which it reads): an
	// output may not go in it either.
	Dir bool
}

// CheckOutputs fails when an output is the same file as an input or as
// another output: the same file, through symbolic links, hard links,
// bind mounts and any spelling of its path, for those that exist; the
// same path with its directory's links resolved, for those that do not
// yet. An empty path is skipped, and "-" (standard output or input) too.
// An input may also be a directory agentc writes in (Named.Dir): then an
// output in it is refused too.
func CheckOutputs(outputs, inputs []Named) error {
	for i, o := range outputs {
		if o.Path == "" || o.Path == "-" {
			continue
		}
		for _, in := range append(inputs, outputs[:i]...) {
			if in.Path == "" || in.Path == "-" {
				continue
			}
			if Same(o.Path, in.Path) {
				return fmt.Errorf("%s %s is the same file as %s %s: writing it would overwrite it", o.What, o.shown(), in.What, in.shown())
			}
			if in.Dir && Same(filepath.Dir(o.Path), in.Path) {
				return fmt.Errorf("%s %s is in %s %s, which agentc keeps its own files in: writing it there could overwrite one of them", o.What, o.shown(), in.What, in.shown())
			}
		}
	}
	return nil
}

func (n Named) shown() string {
	if n.Shown != "" {
		return n.Shown
	}
	return n.Path
}

// Same reports whether two paths name one file: the same file (device
// and inode), when both exist, following links; else the same path once
// made absolute and clean, with its links resolved as far as they exist.
func Same(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib)
	}
	if errA == nil || errB == nil {
		return false // one exists, the other not
	}
	return Resolve(a) == Resolve(b)
}

// Resolve returns path absolute, clean and with its symbolic links
// resolved, a link that names a file not there yet (a dangling link)
// included; what does not exist is kept as written.
func Resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	for range 40 {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r
		}
		fi, err := os.Lstat(abs)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(abs)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		abs = filepath.Clean(target)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}

// Rename gives the errors of this package, and a *fs.PathError, the name a
// file has on the command line in place of the path it was opened by.
func Rename(err error, name string) error {
	var tl *TooLargeError
	var nr *NotRegularError
	var pe *fs.PathError
	switch {
	case errors.As(err, &tl):
		tl.Name = name
	case errors.As(err, &nr):
		nr.Path = name
	case errors.As(err, &pe):
		pe.Path = name
	}
	return err
}

// Reason is the message of an error of this package, or of a
// *fs.PathError, without the file's name, for a message that names it
// already ("agentc.yaml: ...").
func Reason(err error) string {
	var tl *TooLargeError
	var nr *NotRegularError
	var pe *fs.PathError
	var oe *OutsideError
	var de *DeniedError
	switch {
	case errors.As(err, &oe) && oe.What != "":
		return oe.reason()
	case errors.As(err, &de):
		return de.reason()
	case errors.As(err, &tl):
		return fmt.Sprintf("larger than the %s %s may be", Size(tl.Limit), tl.What)
	case errors.As(err, &nr):
		return "not a regular file (" + Kind(nr.Mode) + ")"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// Beneath fails when writing path would write outside root: path, with
// the links of the part of it that exists resolved (a link at path itself
// too, dangling or not), must lie beneath root resolved. For files agentc
// names itself inside a tree someone else may have written (a test case's
// journal under testdata), where a planted link must not lead a write out.
func Beneath(root, path string) error {
	r := Resolve(root)
	p := Resolve(path)
	// Resolve keeps what does not exist as written: resolve the deepest
	// directory above p that does.
	rest := ""
	for d := p; ; {
		if _, err := os.Lstat(d); err == nil {
			if e, err := filepath.EvalSymlinks(d); err == nil {
				p = filepath.Join(e, rest)
			}
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = parent
	}
	if rel, err := filepath.Rel(r, p); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s leads out of %s through a symbolic link, which agentc does not follow out of it", path, root)
	}
	return nil
}
