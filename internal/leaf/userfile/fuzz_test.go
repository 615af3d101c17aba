package userfile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"agentc.dev/agentc/internal/leaf/userfile"
)

// FuzzReadFrom: ReadFrom returns the bytes whole when there are no more
// than the bound, else a *TooLargeError, and never reads more than one
// byte past the bound, whatever sizes the reader's reads come in.
func FuzzReadFrom(f *testing.F) {
	f.Add([]byte("12345"), int64(5), false)
	f.Add([]byte("123456"), int64(5), true)
	f.Add([]byte{}, int64(0), false)
	f.Add(bytes.Repeat([]byte("x"), 4096), int64(511), true)
	f.Fuzz(func(t *testing.T, data []byte, limit int64, oneByte bool) {
		if limit < 0 || limit > 1<<20 {
			t.Skip()
		}
		src := bytes.NewReader(data)
		r := iotestReader(src, oneByte)
		got, err := userfile.ReadFrom(r, limit, "input", "an input")
		if int64(len(data)) <= limit {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes within %d: %q, %v", len(data), limit, got, err)
			}
			return
		}
		var tl *userfile.TooLargeError
		if !errors.As(err, &tl) || tl.Limit != limit || got != nil {
			t.Fatalf("%d bytes past %d: %v", len(data), limit, err)
		}
		if read := int64(len(data)) - int64(src.Len()); read > limit+1 {
			t.Fatalf("read %d bytes with a bound of %d", read, limit)
		}
	})
}

func iotestReader(r *bytes.Reader, oneByte bool) interface{ Read([]byte) (int, error) } {
	if oneByte {
		return iotest.OneByteReader(r)
	}
	return r
}

// FuzzFS: a file read through an FS, opened and read or read whole, is
// its bytes whole when it holds no more than the file bound and, with
// what was read before, the total bound; else a *TooLargeError or a
// *BudgetError, never more bytes than the bound.
func FuzzFS(f *testing.F) {
	f.Add([]byte("12345"), int64(5), int64(10), false)
	f.Add([]byte("123456"), int64(5), int64(100), true)
	f.Add([]byte("12345"), int64(5), int64(7), true)
	f.Add([]byte{}, int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, limit, total int64, open bool) {
		if limit < 0 || limit > 1<<20 || total < 0 {
			t.Skip()
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fsys := &userfile.FS{Root: userfile.RootOf(dir), PerFile: limit, Total: total, What: "a test file"}
		name := fsName(t, fsys, p)
		for i := range 2 { // the second read counts the first
			var got []byte
			var err error
			if open {
				var file fs.File
				if file, err = fsys.Open(name); err == nil {
					got, err = io.ReadAll(file)
					file.Close()
				}
			} else {
				got, err = fsys.ReadFile(name)
			}
			n := int64(len(data))
			switch {
			case n > limit:
				var tl *userfile.TooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("read %d of %d bytes past %d: %v", i, n, limit, err)
				}
			case n*int64(i+1) > total:
				var be *userfile.BudgetError
				if !errors.As(err, &be) {
					t.Fatalf("read %d of %d bytes past %d in all: %v", i, n, total, err)
				}
			default:
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read %d of %d bytes within bounds: %q, %v", i, n, got, err)
				}
			}
			if int64(len(got)) > limit {
				t.Fatalf("got %d bytes with a bound of %d", len(got), limit)
			}
		}
	})
}
