// Package atomicfile writes a file whole or not at all: what a reader
// finds at the path is the new content or the old, never a part.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write writes data to a temporary file beside path, with mode perm,
// synced, then renames it over path. On failure the temporary file is
// removed and path is as it was; the error names path, never the
// temporary file, which the person did not ask for.
//
// A path that leads, itself or through links, to a device, a FIFO or a
// socket (/dev/null, /dev/stdout on a pipe or a terminal), or to a file
// through a process's descriptor (/dev/stdout, /dev/fd/N: a standard
// output sent to a file), is written where it leads instead, appended
// to, never replaced. Any other link at path is replaced by the file, not
// followed: a link someone else planted where the person writes cannot
// lead the write elsewhere.
func Write(path string, data []byte, perm os.FileMode) error {
	if InPlace(path) {
		return Append(path, bytes.NewReader(data))
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: cannot create a file in %s: %w", path, dir, cause(err))
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	return nil
}

// InPlace says whether path is written where it leads rather than
// replaced (see Write): Append writes it.
func InPlace(path string) bool {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.IsDir():
		return false
	case !fi.Mode().IsRegular():
		return true
	}
	return throughDescriptor(path)
}

// throughDescriptor says whether path, or the links from it, reach a
// process's descriptor (/proc/PID/fd/N, /dev/fd/N), whose file is open
// already, by a pipe or a redirection, and is to be written in, not
// replaced.
func throughDescriptor(path string) bool {
	for range 40 {
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return false
		}
		if dir == "/dev/fd" || filepath.Base(dir) == "fd" && strings.HasPrefix(dir, "/proc/") {
			return true
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return false
		}
		target, err := os.Readlink(path)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		path = target
	}
	return false
}

// Append writes what r reads at the end of what path leads to, for a
// path that InPlace says is written where it leads. It does not wait for
// a FIFO's reader to come: a FIFO no process reads is refused.
func Append(path string, r io.Reader) error {
	f, err := openInPlace(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	return nil
}

// cause is the system's error within an error that names a file.
func cause(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Err
	}
	return err
}
