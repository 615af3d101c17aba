package userfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FS is the host's file system, read-only, for a reader that opens files
// itself (CUE's loader, through its Config.FS): every file it opens is
// read as Read reads one, from a regular file only and within PerFile
// bytes, and what it reads in all within Total bytes. A directory may be
// opened and listed; a FIFO, a device or a socket is refused without
// waiting on it, named by its host path. Links are followed, as the host
// would follow them, but not out of Within.
//
// Names are fs.FS names: slash-separated and relative to Root, the host
// directory the FS is rooted at. HostPath and FSPath turn one into the
// other, for the reader's configuration and for showing the reader's
// names (in positions and messages) as host paths.
//
// An FS is safe for concurrent use.
type FS struct {
	// Root is the host directory names are relative to: "/" on Unix; on
	// Windows, a volume's root (see RootOf).
	Root string
	// PerFile bounds each file read; Total the bytes read through the FS
	// in all, every read of a file counting.
	PerFile, Total int64
	// What says what each file is read as, for messages: "a manifest
	// file".
	What string
	// Files are contents already read, by host path: they are served
	// from memory (and count toward Total), not read again.
	Files map[string][]byte

	// Kept, when not nil, is where ReadFile keeps what it read, by host
	// path, for a caller that hands the contents on.
	Kept map[string][]byte

	// Within, when not "", is a host directory, its links resolved,
	// that every file and directory the FS opens, reads, lists or
	// describes must lie beneath once its links are followed (the
	// files of Files excepted): one that leads out is refused, an
	// *OutsideError, and one that is not there is not there. A reader
	// that finds files by itself in a tree someone else wrote (CUE's
	// loader in a pull request's module) is kept to that tree, so a
	// link there cannot have it read, and quote, a file of the machine
	// that checks it.
	Within string

	// Check, when not nil, is asked of each file's contents, by host
	// path, before the reader gets them (those of Files too): one it
	// returns an error for is refused with that error. A regular file is
	// then read whole when it is opened, within PerFile, to be checked.
	Check func(path string, data []byte) error

	mu   sync.Mutex
	read int64
	// refused is the first file refused for a bound, a kind or the total.
	refused error
}

// Refused returns the first refusal of a file for its kind or a bound,
// or nil: a reader that turns errors into its own may lose which.
func (f *FS) Refused() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

func (f *FS) refuse(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refused == nil {
		f.refused = err
	}
	return err
}

// RootOf returns the root an FS needs for a host path to lie in it: the
// path's volume's root ("/" on Unix).
func RootOf(path string) string {
	return filepath.VolumeName(path) + string(filepath.Separator)
}

// HostPath returns the host path of an fs.FS name, or of a reader's
// slash-separated path that starts with "/" (as CUE's loader writes the
// names it is given and shows).
func (f *FS) HostPath(name string) string {
	return filepath.Join(f.Root, filepath.FromSlash(strings.TrimPrefix(name, "/")))
}

// FSPath returns the reader's path of an absolute host path under Root:
// slash-separated, starting with "/". ok is false for a path outside
// Root (on another volume).
func (f *FS) FSPath(host string) (path string, ok bool) {
	rel, err := filepath.Rel(f.Root, host)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	if rel == "." {
		return "/", true
	}
	return "/" + filepath.ToSlash(rel), true
}

// BudgetError is a read that would take an FS past its Total.
type BudgetError struct {
	Name  string // the host path of the file whose read passed it
	What  string
	Limit int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s: reading it takes the files read for %s past %s in all", e.Name, e.What, Size(e.Limit))
}

func (f *FS) hostPath(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return f.HostPath(name), nil
}

// charge counts n bytes read from the file at path, failing once they
// take the FS past Total.
func (f *FS) charge(path string, n int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.read+n > f.Total {
		f.read = f.Total + 1 // later reads fail too
		err := &BudgetError{Name: path, What: f.What, Limit: f.Total}
		if f.refused == nil {
			f.refused = err
		}
		return err
	}
	f.read += n
	return nil
}

// Open opens a regular file, bounded, or a directory.
func (f *FS) Open(name string) (fs.File, error) {
	path, err := f.hostPath("open", name)
	if err != nil {
		return nil, err
	}
	if data, ok := f.Files[path]; ok {
		if err := f.charge(path, int64(len(data))); err != nil {
			return nil, err
		}
		if f.Check != nil {
			if err := f.Check(path, data); err != nil {
				return nil, f.refuse(err)
			}
		}
		return &memFile{name: name, data: data, r: bytes.NewReader(data)}, nil
	}
	if err := f.inside(path); err != nil {
		return nil, err
	}
	file, fi, err := openStat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return file, nil
	case f.Check != nil && fi.Mode().IsRegular():
		file.Close()
		data, err := f.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return &memFile{name: name, data: data, r: bytes.NewReader(data)}, nil
	case !fi.Mode().IsRegular():
		file.Close()
		return nil, f.refuse(&NotRegularError{Path: path, Mode: fi.Mode()})
	case fi.Size() > f.PerFile:
		file.Close()
		return nil, f.refuse(&TooLargeError{Name: path, What: f.What, Limit: f.PerFile})
	}
	return &boundedFile{File: file, fs: f, path: path, left: f.PerFile}, nil
}

// inside refuses a path that leads out of Within, its links followed.
// What is not there is let through, for the caller's open or stat to
// say so. Like ReadBeneath, it resolves by name: what checks a tree is
// read while no one swaps its links.
func (f *FS) inside(path string) error {
	if f.Within == "" {
		return nil
	}
	if rel, err := filepath.Rel(f.Within, Resolve(path)); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		// Named outside, or below a link that leads out.
		return f.refuse(&OutsideError{Root: f.Within, Name: path})
	}
	what := "a file CUE's loader found"
	if filepath.Base(path) == "module.cue" && filepath.Base(filepath.Dir(path)) == "cue.mod" {
		what = "a module file"
	}
	return f.refuse(&OutsideError{Root: f.Within, Name: path, What: what})
}

// ReadFile reads a regular file whole, within the bounds.
func (f *FS) ReadFile(name string) ([]byte, error) {
	path, err := f.hostPath("read", name)
	if err != nil {
		return nil, err
	}
	data, ok := f.Files[path]
	if !ok {
		if err := f.inside(path); err != nil {
			return nil, err
		}
		if data, err = Read(path, f.PerFile, f.What); err != nil {
			var nr *NotRegularError
			var tl *TooLargeError
			if errors.As(err, &nr) || errors.As(err, &tl) {
				f.refuse(err)
			}
			return nil, err
		}
	}
	if err := f.charge(path, int64(len(data))); err != nil {
		return nil, err
	}
	if f.Check != nil {
		if err := f.Check(path, data); err != nil {
			return nil, f.refuse(err)
		}
	}
	if f.Kept != nil {
		f.mu.Lock()
		f.Kept[path] = data
		f.mu.Unlock()
	}
	return data, nil
}

// ReadDir lists a directory.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	path, err := f.hostPath("readdir", name)
	if err != nil {
		return nil, err
	}
	if err := f.inside(path); err != nil {
		return nil, err
	}
	return os.ReadDir(path)
}

// Stat describes a file, following links, without opening it.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	path, err := f.hostPath("stat", name)
	if err != nil {
		return nil, err
	}
	if err := f.inside(path); err != nil {
		return nil, err
	}
	return os.Stat(path)
}

// Lstat describes a file, not following a final link.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	path, err := f.hostPath("lstat", name)
	if err != nil {
		return nil, err
	}
	return os.Lstat(path)
}

// ReadLink returns a link's target.
func (f *FS) ReadLink(name string) (string, error) {
	path, err := f.hostPath("readlink", name)
	if err != nil {
		return "", err
	}
	return os.Readlink(path)
}

// boundedFile is a regular file whose reads stop PerFile bytes in and
// count toward the FS's Total.
type boundedFile struct {
	*os.File
	fs   *FS
	path string
	left int64 // bytes it may still give
}

func (b *boundedFile) Read(p []byte) (int, error) {
	// One byte past the bound is asked for, to tell a file that ends at
	// it from one that goes on (it grew since Open's stat).
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.File.Read(p)
	if int64(n) > b.left {
		return 0, b.fs.refuse(&TooLargeError{Name: b.path, What: b.fs.What, Limit: b.fs.PerFile})
	}
	b.left -= int64(n)
	if cerr := b.fs.charge(b.path, int64(n)); cerr != nil {
		return 0, cerr
	}
	return n, err
}

// memFile is a file of FS.Files, read from memory.
type memFile struct {
	name string
	data []byte
	r    *bytes.Reader
}

func (m *memFile) Read(p []byte) (int, error) { return m.r.Read(p) }
func (m *memFile) Close() error               { return nil }
func (m *memFile) Stat() (fs.FileInfo, error) { return memInfo{m}, nil }

type memInfo struct{ m *memFile }

func (i memInfo) Name() string       { return path.Base(i.m.name) }
func (i memInfo) Size() int64        { return int64(len(i.m.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

var _ interface {
	fs.ReadFileFS
	fs.ReadDirFS
	fs.StatFS
	fs.ReadLinkFS
} = (*FS)(nil)

var _ io.Reader = (*boundedFile)(nil)
