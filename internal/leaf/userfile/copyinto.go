package userfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CopyInto copies the regular file at src, which agentc made in a
// directory of its own, into root as name, whole or not at all: a
// temporary name is created there (never over a file), written, synced
// and renamed to name, replacing what had it. Every step goes through
// root (os.Root), so a link put in its way cannot lead the write out of
// the directory root was opened on; the file keeps src's permissions.
func CopyInto(root *os.Root, src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: src, Mode: fi.Mode()}
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+hex.EncodeToString(suffix[:])+".tmp")
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return syncDir(root, filepath.Dir(name))
}

// syncDir syncs the directory name in root, so that what was renamed
// into it is there after a crash.
func syncDir(root *os.Root, name string) error {
	d, err := root.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// CopyDirInto copies the regular files directly in the directory src
// (which agentc made), but for those whose names begin with a dot, into
// the directory name in root, made if missing; a file of the same name
// and size that is there already, a regular file, is kept, as in a store
// of blobs named by their content (one of another size, damaged, is
// replaced). Each goes through root, as CopyInto's does. A src that does
// not exist copies nothing.
func CopyDirInto(root *os.Root, src, name string) error {
	ents, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	made := false
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		if !made {
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
			made = true
		}
		dst := filepath.Join(name, e.Name())
		if fi, err := root.Lstat(dst); err == nil && fi.Mode().IsRegular() {
			if si, err := e.Info(); err == nil && si.Size() == fi.Size() {
				continue
			}
		}
		if err := CopyInto(root, filepath.Join(src, e.Name()), dst); err != nil {
			return fmt.Errorf("copying %s: %w", e.Name(), err)
		}
	}
	return nil
}
