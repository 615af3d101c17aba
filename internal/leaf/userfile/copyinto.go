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
	return writeInto(root, name, fi.Mode().Perm(), func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// WriteBeneath writes data to name, a path relative to the directory dir,
// whole or not at all, as CopyInto writes, with perm, making the
// directories on its way. For a file agentc writes into a tree someone
// else may have made (a pull request's checkout): every step goes through
// dir held open (os.Root), which follows no link out of it, and a link on
// the way that leads out is refused, named, before anything is made.
func WriteBeneath(dir, name string, data []byte, perm fs.FileMode) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := linkOut(dir, name); err != nil {
		return err
	}
	err = root.MkdirAll(filepath.Dir(name), 0o755)
	if err == nil {
		err = writeInto(root, name, perm, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
	}
	if err != nil {
		// A link put in meanwhile is refused by the os.Root: say which.
		if lerr := linkOut(dir, name); lerr != nil {
			return lerr
		}
	}
	return err
}

// linkOut refuses a symbolic link on the way from dir to name (name's
// own included) that leads out of dir, naming it. A link inside dir is
// followed, as the host follows it.
func linkOut(dir, name string) error {
	top := Resolve(dir)
	at := ""
	for _, part := range strings.Split(filepath.Clean(name), string(filepath.Separator)) {
		at = filepath.Join(at, part)
		p := filepath.Join(dir, at)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // not there: made through the os.Root
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		to := Resolve(p)
		if rel, err := filepath.Rel(top, to); err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("%s is a symbolic link leading out of %s (to %s): agentc writes nothing through it; remove the link", at, dir, to)
		}
	}
	return nil
}

// writeInto writes name in root, whole or not at all, with perm: write
// fills a temporary name created there (never over a file), which is
// synced and renamed to name, replacing what had it.
func writeInto(root *os.Root, name string, perm fs.FileMode, write func(io.Writer) error) error {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+hex.EncodeToString(suffix[:])+".tmp")
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return err
	}
	err = write(out)
	if err == nil {
		err = out.Chmod(perm)
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
