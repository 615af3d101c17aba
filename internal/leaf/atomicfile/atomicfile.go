// Package atomicfile writes a file whole or not at all: what a reader
// finds at the path is the new content or the old, never a part.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to a temporary file beside path, with mode perm,
// synced, then renames it over path. On failure the temporary file is
// removed and path is as it was; the error names path, never the
// temporary file, which the person did not ask for.
//
// Two kinds of path are written where they are instead (see OpenInPlace):
// one that names a descriptor agentc was given (/dev/stdout, /dev/fd/N),
// written through that descriptor, and a device or a FIFO at the name
// itself (/dev/null). A symbolic link at path is replaced by the file, not
// followed: a link someone else planted where the person writes cannot
// lead the write elsewhere.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := OpenInPlace(path)
	if err != nil {
		return err
	}
	if f != nil {
		_, err := f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, cause(err))
		}
		return nil
	}
	dir := filepath.Dir(path)
	f, err = os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
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

// OpenInPlace returns the file to write path's content into where path
// is written in place rather than replaced, or nil when it is to be
// replaced (Write's rename): a regular file, a symbolic link, nothing.
//
//   - A path that names one of this process's descriptors as written
//     (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N)
//     is that descriptor, whatever it is: a standard output sent to a
//     file, a pipe, a terminal, a socket. It is written through a copy of
//     it, so that what the shell writes after agentc follows what agentc
//     wrote, as with any program that writes its standard output.
//   - A device or a FIFO at the name itself (/dev/null) is written into.
//     The decision is made on the file opened, without following a link,
//     so nothing swapped in at the name between a check and the write
//     is written through. A FIFO that no process reads is refused at
//     once, not waited on.
func OpenInPlace(path string) (*os.File, error) {
	if fd, ok := descriptor(path); ok {
		f, err := dupDescriptor(fd, path)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return f, nil
	}
	f, err := openNoFollow(path)
	switch {
	case errors.Is(err, errNoReader):
		return nil, fmt.Errorf("writing %s: %w", path, err)
	case err != nil:
		return nil, nil // nothing there, a link, or one not to open: replaced
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		f.Close()
		return nil, nil
	}
	return f, nil
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
