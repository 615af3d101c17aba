package files

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
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
	if got := spliced(t, s, sdkBody); string(got) != want {
		t.Errorf("body %.200s…\nwant %.200s…", got, want)
	}
}

// spliced is the body s's middleware sends for the SDK's body, checked to
// be its Content-Length, and the same when sent again (GetBody).
func spliced(t *testing.T, s *Splice, sdkBody string) []byte {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(sdkBody))
	var got []byte
	_, err := s.Middleware(req, func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		got = b
		if r.ContentLength != int64(len(b)) {
			t.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(b))
		}
		again, _ := r.GetBody()
		if b2, err := io.ReadAll(again); err != nil || !bytes.Equal(b, b2) {
			t.Errorf("GetBody gives another body: %v", err)
		}
		return &http.Response{StatusCode: 200}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
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

// TestSpliceSizeFirst: a blob whose size is not the file's is refused by
// its size before it is read, as a text file or not: whoever may write the
// store could put a sparse file in a blob's place (a rename over it), and
// the splice read all of it, to fail on its digest at the end, before the
// request was built.
func TestSpliceSizeFirst(t *testing.T) {
	for _, data := range []string{"%PDF-1.4 the file", "the notes\n"} {
		store, fs := stored(t, []byte(data))
		path := filepath.Join(store.Dir(), fs[0].Digest[len(filestore.Prefix):])
		os.Chmod(path, 0o644)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(data)
		if err := f.Truncate(64 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = NewSplice(store).Base64(fs[0])
		if err == nil || !strings.Contains(err.Error(), "the store holds 67108864 bytes under") {
			t.Errorf("%q, its blob past its size: %v", data, err)
		}
	}
}

// jsonContents is s as an encoding/json Encoder writes it with HTML
// escaping off (the SDKs' way), without the quotes.
func jsonContents(t testing.TB, s []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(s)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()[1 : b.Len()-2]
}

// A text file is spliced into the body as the contents of the JSON string
// its placeholder was, escaped as encoding/json escapes it, whatever the
// chunks it is read in cut; a byte order mark at its start is dropped; the
// length announced is the body's.
func TestTextSpliced(t *testing.T) {
	// Characters of 2, 3 and 4 bytes, shifted so that the chunks cut
	// each of them somewhere; escapes of 2 and 6 bytes between.
	var text bytes.Buffer
	for i := 0; text.Len() < 200_000; i++ {
		text.WriteString(strings.Repeat("x", i%4) + "é€𝄞\"\\\t\n\r\f<&>\u2028\x7f")
	}
	body := append([]byte("\ufeff"), text.Bytes()...)
	store, fs := stored(t, body, []byte("\ufeff"), []byte{})
	for i, f := range fs {
		if f.MediaType != "text/plain" {
			t.Fatalf("file %d is %q", i, f.MediaType)
		}
	}
	s := NewSplice(store)
	var phs []string
	for _, f := range fs {
		ph, err := s.Text(f)
		if err != nil {
			t.Fatal(err)
		}
		phs = append(phs, ph)
	}
	sdkBody := `{"a":"` + phs[0] + `","b":"` + phs[1] + `","c":"` + phs[2] + `"}`
	want := `{"a":"` + string(jsonContents(t, text.Bytes())) + `","b":"","c":""}`
	got := spliced(t, s, sdkBody)
	if string(got) != want {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("the bodies part at byte %d: got %.80q, want %.80q", i, got[i:], want[i:])
	}
}

// A file the request calls text that is not text to its end (a blob put
// in the store before the store checked that, or a journal naming one) is
// refused before anything is sent.
func TestTextNotText(t *testing.T) {
	store, fs := stored(t, []byte(strings.Repeat("text ", 200)+"\x1b[2J"), []byte("ab\xff"))
	for _, f := range fs {
		f.MediaType = "text/plain"
		if _, err := NewSplice(store).Text(f); err == nil || !strings.Contains(err.Error(), "is not text: byte") {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

// FuzzJSONString: appendJSONString writes any bytes as encoding/json's
// Encoder writes them as a string with HTML escaping off.
func FuzzJSONString(f *testing.F) {
	for _, seed := range []string{"plain", "\"\\\b\f\n\r\t\x00\x1f\x7f", "<>&\u2028\u2029", "é€𝄞", "\xff\xe2\x82", "\xed\xa0\x80"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := appendJSONString(nil, data), jsonContents(t, data); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", data, got, want)
		}
	})
}

// A body past MaxBody is not sent, whether or not the request holds a
// file: one whose length is known is refused before it is sent, one whose
// length is not fails as it is read.
func TestBodyBound(t *testing.T) {
	s := NewSplice(nil)
	big := strings.Repeat("x", MaxBody+1)
	req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(big))
	sent := false
	if _, err := s.Middleware(req, func(*http.Request) (*http.Response, error) { sent = true; return nil, nil }); err != ErrBodyTooLarge || sent {
		t.Errorf("a known length past the bound: sent %v, error %v", sent, err)
	}
	req, _ = http.NewRequest("POST", "http://x/", io.NopCloser(strings.NewReader(big)))
	req.ContentLength = 0 // unknown
	_, err := s.Middleware(req, func(r *http.Request) (*http.Response, error) {
		_, err := io.Copy(io.Discard, r.Body)
		return nil, err
	})
	if err != ErrBodyTooLarge {
		t.Errorf("an unknown length past the bound: %v", err)
	}
	req, _ = http.NewRequest("POST", "http://x/", strings.NewReader(big[:MaxBody]))
	if _, err := s.Middleware(req, func(r *http.Request) (*http.Response, error) {
		n, err := io.Copy(io.Discard, r.Body)
		if n != MaxBody {
			t.Errorf("sent %d bytes", n)
		}
		return nil, err
	}); err != nil {
		t.Errorf("a body at the bound: %v", err)
	}
}
