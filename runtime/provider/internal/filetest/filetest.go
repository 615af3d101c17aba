// Package filetest holds what the providers' tests of files share: small
// real files of each media type, and a file store to put them in.
package filetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
)

// Image is a small picture with a few colours, so the encoders have
// something to encode.
func Image() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for x := range 4 {
		for y := range 3 {
			img.Set(x, y, color.RGBA{uint8(60 * x), uint8(80 * y), 200, 255})
		}
	}
	return img
}

func PNG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, Image()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func JPEG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, Image(), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PDF is a one-page PDF with a line of text, its cross-reference
// table at the offsets its objects are at.
func PDF() []byte {
	stream := "BT /F1 12 Tf 72 720 Td (Invoice 42) Tj ET"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

const (
	PlainText = "Grüße aus Köln — naïve café, 東京 ✓\nsecond line\n"
	BOMBody   = "Ünïcödé after a byte order mark\n"
)

// EscapedText is a text file of about 150 KB, past the chunks a text is
// spliced in, that holds every character a JSON string escapes or a
// splice could cut (a quote, a backslash, tab, line feed, carriage return,
// form feed, U+2028, U+2029, characters of two, three and four bytes at
// every offset), and <, > and &, which the SDKs leave as they are; it
// begins with a byte order mark, which is not sent.
func EscapedText() []byte {
	var b bytes.Buffer
	b.WriteString("\ufeff")
	for i := 0; b.Len() < 150_000; i++ {
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString("\"quoted\" back\\slash\ttab\r\n\fform <tag> & \u2028\u2029 é € 𝄞 Grüße 東京\x7f\n")
	}
	return b.Bytes()
}

// JSONText is text as the contents of a JSON string (no quotes), a byte
// order mark at its start dropped, as encoding/json's Encoder writes it
// with HTML escaping off, as the SDKs do.
func JSONText(t testing.TB, text []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(bytes.TrimPrefix(text, []byte("\ufeff")))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()[1 : b.Len()-2]
}

// Store is a file store in the test's temporary directory.
func Store(t testing.TB) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	// Before the directory is removed: a store holds it open, which
	// Windows does not let be removed.
	t.Cleanup(func() { s.Close() })
	return s
}

// Put stores data and returns it as a file of the media type its bytes
// are sniffed as, which must be want.
func Put(t testing.TB, s *filestore.Store, name, fileName string, data []byte, want string) *agentrt.File {
	t.Helper()
	return PutReader(t, s, name, fileName, bytes.NewReader(data), want)
}

func PutReader(t testing.TB, s *filestore.Store, name, fileName string, r io.Reader, want string) *agentrt.File {
	t.Helper()
	b, err := s.Put(r, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if b.MediaType != want {
		t.Fatalf("%s is sniffed as %q, want %q", name, b.MediaType, want)
	}
	return &agentrt.File{Name: name, FileName: fileName, MediaType: b.MediaType, Size: b.Size, Digest: b.Digest}
}

// Tamper overwrites a stored blob's bytes in place, its size kept.
func Tamper(t testing.TB, s *filestore.Store, f *agentrt.File) {
	t.Helper()
	path := filepath.Join(s.Dir(), strings.TrimPrefix(f.Digest, filestore.Prefix))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= 0x01 // a byte near the end, after the sniffed head
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// NotText stores blobs that are not text and labels them text/plain, as
// a journal or a host may label a blob: a terminal's escapes and a NUL
// past the first bytes sniffed, and a byte that is not UTF-8. Each must
// be refused before anything is sent, its name ("esc", "latin1") and
// the offset of its first byte that is not text in the error.
func NotText(t testing.TB, s *filestore.Store) []*agentrt.File {
	t.Helper()
	var fs []*agentrt.File
	for _, c := range []struct{ name, data string }{
		{"esc", strings.Repeat("text ", 200) + "\x1b[2J\x1b]0;owned\x07\x00binary"},
		{"latin1", "caf\xe9"},
	} {
		f := Put(t, s, c.name, c.name+".txt", []byte(c.data), "")
		f.MediaType = "text/plain"
		fs = append(fs, f)
	}
	return fs
}

// NotTextError reports whether err refuses f, one of NotText's files.
func NotTextError(err error, f *agentrt.File) bool {
	at := map[string]string{"esc": "byte 1000", "latin1": "byte 3"}[f.Name]
	return err != nil && strings.Contains(err.Error(), "file "+f.Name+": it is labelled text/plain but is not text: "+at)
}
