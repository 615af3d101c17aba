package files

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

func stored(t *testing.T, data ...[]byte) (*filestore.Store, []*agentrt.File) {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	var fs []*agentrt.File
	for i, d := range data {
		b, err := s.Put(bytes.NewReader(d), int64(len(d)))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, &agentrt.File{Name: string(rune('a' + i)), MediaType: b.MediaType, Size: b.Size, Digest: b.Digest})
	}
	return s, fs
}

// The body sent is the SDK's with each placeholder replaced by its file
// in base64, whatever the file's length; its length is announced, and
// GetBody gives it again.
func TestSpliced(t *testing.T) {
	big := bytes.Repeat([]byte("%PDF-0123456789"), 20000) // past one chunk, not a multiple of 3 bytes
	store, fs := stored(t, big, []byte("\x89PNG\r\n\x1a\nxy"), []byte{})
	s := NewSplice(store)
	p0, err := s.DataURL(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.Base64(fs[1])
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s.Base64(fs[2])
	if err != nil {
		t.Fatal(err)
	}
	sdkBody := `{"a":"` + p1 + `","b":[{"url":"` + p0 + `"}],"c":"` + p2 + `","d":"` + p0[:10] + `"}`
	want := `{"a":"` + base64.StdEncoding.EncodeToString(fs1(t, store, fs[1])) + `","b":[{"url":"data:application/pdf;base64,` + base64.StdEncoding.EncodeToString(big) + `"}],"c":"","d":"` + p0[:10] + `"}`
	req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(sdkBody))
	var got []byte
	_, err = s.Middleware(req, func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		got = b
		if r.ContentLength != int64(len(b)) {
			t.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(b))
		}
		again, _ := r.GetBody()
		b2, err := io.ReadAll(again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Errorf("GetBody gives another body: %v", err)
		}
		return &http.Response{StatusCode: 200}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("body %.200s…\nwant %.200s…", got, want)
	}
}

func fs1(t *testing.T, s *filestore.Store, f *agentrt.File) []byte {
	r, _, err := s.Open(f.Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file changed in the store after its placeholder was given fails the
// body as it is read; a placeholder the body does not hold once is an
// error before anything is sent.
func TestSpliceRefused(t *testing.T) {
	store, fs := stored(t, []byte("%PDF-1.4 the file"))
	s := NewSplice(store)
	ph, err := s.Base64(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(store.Dir(), fs[0].Digest[len(filestore.Prefix):])
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, []byte("%PDF-1.4 the fill"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(`{"f":"`+ph+`"}`))
	_, err = s.Middleware(req, func(r *http.Request) (*http.Response, error) {
		_, err := io.ReadAll(r.Body)
		return nil, err
	})
	if err == nil || !strings.Contains(err.Error(), "store was changed") {
		t.Errorf("a changed file: %v", err)
	}
	for _, body := range []string{`{}`, `{"f":"` + ph + `","g":"` + ph + `"}`} {
		sent := false
		req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(body))
		_, err := s.Middleware(req, func(r *http.Request) (*http.Response, error) { sent = true; return nil, nil })
		if err == nil || sent {
			t.Errorf("%s: sent %v, error %v", body, sent, err)
		}
	}
	// Before a placeholder is given, the file is read through the check.
	if _, err := NewSplice(store).Base64(fs[0]); err == nil || !strings.Contains(err.Error(), "store was changed") {
		t.Errorf("a changed file given a placeholder: %v", err)
	}
}
