package userfile_test

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"

	"agentc.dev/agentc/internal/userfile"
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
