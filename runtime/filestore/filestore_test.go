package filestore_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/runtime/filestore"
)

func digestOf(b []byte) string {
	h := blake3.Sum256(b)
	return filestore.Prefix + hex.EncodeToString(h[:])
}

func TestPutOpen(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("%PDF-1.4\n" + strings.Repeat("x", 100000))
	b, err := s.Put(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest != digestOf(data) || b.Size != int64(len(data)) || b.MediaType != "application/pdf" {
		t.Fatalf("got %+v", b)
	}
	// The same bytes again are the same blob: one file in the store.
	if b2, err := s.Put(bytes.NewReader(data), int64(len(data))); err != nil || b2 != b {
		t.Fatalf("again: %+v, %v", b2, err)
	}
	ents, _ := os.ReadDir(s.Dir())
	if len(ents) != 1 || ents[0].Name() != b.Digest[len(filestore.Prefix):] {
		t.Fatalf("the store holds %v", ents)
	}
	r, size, err := s.Open(b.Digest)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || size != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (size %d), %v", len(got), size, err)
	}
	st, err := s.Stat(b.Digest, 1<<20)
	if err != nil || st != b {
		t.Fatalf("Stat: %+v, %v", st, err)
	}
}

// TestTextThroughout: a file is text when all of it is, not its first
// bytes alone, as it is staged and as Stat reads it back.
func TestTextThroughout(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("text ", 200)
	for _, c := range []struct{ data, want string }{
		{head + "and more text\n", "text/plain"},
		{head + "\x00binary", ""},
		{head + "\x1b[31mred", ""},
		{head + "\xff", ""},
		{"%PDF-1.4\n" + head + "\x00", "application/pdf"},
	} {
		b, err := s.Put(strings.NewReader(c.data), 1<<20)
		if err != nil || b.MediaType != c.want {
			t.Errorf("%.20q…%.20q: Put: %q, %v; want %q", c.data, c.data[len(head):], b.MediaType, err, c.want)
			continue
		}
		if st, err := s.Stat(b.Digest, 1<<20); err != nil || st != b {
			t.Errorf("%.20q…%.20q: Stat: %+v, %v; want %+v", c.data, c.data[len(head):], st, err, b)
		}
	}
}

func TestPutTooLarge(t *testing.T) {
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(strings.NewReader("12345"), 4)
	var tl *filestore.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 4 {
		t.Fatalf("got %v", err)
	}
	// An endless input stops at the bound, and leaves nothing behind.
	_, err = s.Put(endless{}, 1<<20)
	if !errors.As(err, &tl) {
		t.Fatalf("endless: got %v", err)
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 0 {
		t.Fatalf("a refused file left %v", ents)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestOpenChecksBytes(t *testing.T) {
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Put(strings.NewReader("Invoice 2041"), 100)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), b.Digest[len(filestore.Prefix):])
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("Invoice 9999"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, err := s.Open(b.Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); err == nil || !strings.Contains(err.Error(), "store was changed") {
		t.Fatalf("a changed blob read without error: %v", err)
	}
}

func TestDigestsNameNoPath(t *testing.T) {
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{
		"", "blake3:", "sha256:" + strings.Repeat("a", 64), "blake3:../../etc/passwd",
		"blake3:" + strings.Repeat("A", 64), "blake3:" + strings.Repeat("g", 64), "blake3:" + strings.Repeat("a", 63) + "/",
	} {
		if _, _, err := s.Open(d); err == nil || !strings.Contains(err.Error(), "not a file digest") {
			t.Errorf("%q: got %v", d, err)
		}
	}
	if _, _, err := s.Open(digestOf([]byte("absent"))); !errors.Is(err, filestore.ErrNotStored) {
		t.Errorf("an absent blob: got %v", err)
	}
}

// A staged file is known (digest, size, media type) and not in the store
// until committed; discarded, it leaves nothing behind.
func TestStage(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	entries := func() []string {
		ents, _ := os.ReadDir(s.Dir())
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	kept, dropped := []byte("%PDF-1.7\nkept"), []byte("\x89PNG\r\n\x1a\ndropped")
	a, err := s.Stage(bytes.NewReader(kept), 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Stage(bytes.NewReader(dropped), 100)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != digestOf(kept) || a.Size != int64(len(kept)) || a.MediaType != "application/pdf" || b.MediaType != "image/png" {
		t.Fatalf("staged %+v and %+v", a.Blob, b.Blob)
	}
	if _, err := s.Stat(a.Digest, 1<<20); !errors.Is(err, filestore.ErrNotStored) {
		t.Fatalf("a staged file is in the store before it is committed: %v", err)
	}
	b.Discard()
	b.Discard() // twice does nothing
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	a.Discard() // after Commit does nothing
	if err := a.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	if got := entries(); len(got) != 1 || got[0] != a.Digest[len(filestore.Prefix):] {
		t.Fatalf("the store holds %v, want only the committed file", got)
	}
	if st, err := s.Stat(a.Digest, 1<<20); err != nil || st != a.Blob {
		t.Fatalf("Stat: %+v, %v", st, err)
	}
	// Past its bound, nothing is staged, nor left.
	if _, err := s.Stage(bytes.NewReader(kept), 4); err == nil {
		t.Fatal("a file past its bound was staged")
	}
	if got := entries(); len(got) != 1 {
		t.Fatalf("the store holds %v after a refused file", got)
	}
}

// gate is a reader that gives its bytes, then signals that it was read
// and blocks until released, then ends: a file still being written.
type gate struct {
	head    []byte
	read    chan struct{}
	release chan struct{}
}

func (g *gate) Read(p []byte) (int, error) {
	if len(g.head) > 0 {
		n := copy(p, g.head)
		g.head = g.head[n:]
		return n, nil
	}
	close(g.read)
	<-g.release
	return 0, io.EOF
}

// TestDiscardStaged: a process stopping drops every file staged and not
// committed, and the one being written, and keeps those committed.
func TestDiscardStaged(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := s.Stage(strings.NewReader("%PDF-1.7\ncommitted"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := committed.Commit(); err != nil {
		t.Fatal(err)
	}
	staged, err := s.Stage(strings.NewReader("%PDF-1.7\nstaged"), 100)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{head: []byte("%PDF-1.7\nbeing written"), read: make(chan struct{}), release: make(chan struct{})}
	writing := make(chan error, 1)
	go func() {
		st, err := s.Stage(g, 100)
		if err == nil {
			err = st.Commit()
		}
		writing <- err
	}()
	<-g.read
	ents, err := os.ReadDir(s.Dir())
	if err != nil || len(ents) != 3 {
		t.Fatalf("before: the store's directory holds %v (%v), want a blob and two temporary files", ents, err)
	}
	s.DiscardStaged()
	close(g.release)
	if err := <-writing; err == nil {
		t.Error("a file being written when its stage was discarded was stored")
	}
	if err := staged.Commit(); err == nil {
		t.Error("a staged file discarded by DiscardStaged was committed")
	}
	ents, err = os.ReadDir(s.Dir())
	if err != nil || len(ents) != 1 || ents[0].Name() != committed.Digest[len(filestore.Prefix):] {
		t.Fatalf("after: the store's directory holds %v (%v), want the committed blob alone", ents, err)
	}
}

// TestPutOpenConcurrent: the same file put by many stages at once, each
// committing it again by a rename, reads back through Open whichever
// copy the name holds (a batch's items naming one file failed, one in a
// thousand, when Open held the file opened to the one at the name).
func TestPutOpenConcurrent(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	content := strings.Repeat("the same document ", 1000)
	var wg sync.WaitGroup
	errs := make(chan error, 8*100)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b, err := s.Put(strings.NewReader(content), 1<<20)
				if err == nil {
					var r io.ReadCloser
					if r, _, err = s.Open(b.Digest); err == nil {
						_, err = io.ReadAll(r)
						r.Close()
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestOver: a store over another reads the blobs it does not hold from
// it, and puts what it is given in itself alone.
func TestOver(t *testing.T) {
	dir := t.TempDir()
	under, err := filestore.Open(filepath.Join(dir, "under"))
	if err != nil {
		t.Fatal(err)
	}
	defer under.Close()
	old := []byte("recorded\n")
	b, err := under.Put(bytes.NewReader(old), 100)
	if err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(filepath.Join(dir, "own"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Over(under)
	r, size, err := s.Open(b.Digest)
	if err != nil {
		t.Fatalf("a blob of the store under: %v", err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, old) || size != int64(len(old)) {
		t.Fatalf("read %q (%d), %v", got, size, err)
	}
	if p, err := s.Path(b.Digest); err != nil || filepath.Dir(p) != filepath.Join(dir, "under") {
		t.Fatalf("path %q, %v", p, err)
	}
	given := []byte("given\n")
	nb, err := s.Put(bytes.NewReader(given), 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := under.Open(nb.Digest); !errors.Is(err, filestore.ErrNotStored) {
		t.Fatalf("a blob put over the store is in it: %v", err)
	}
	if _, err := s.Stat(nb.Digest, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(digestOf([]byte("neither"))); !errors.Is(err, filestore.ErrNotStored) {
		t.Fatalf("a blob neither holds: %v", err)
	}
}

// TestSweepAgain: a store a process holds for long (a server's, a
// worker's) is swept again as time passes, not only when it first stages
// a file: a process killed just before it started (and restarted at
// once, as a service is) leaves a staging file too recent for that first
// sweep, which nothing else would remove while the process lives.
func TestSweepAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(what string) {
		t.Helper()
		if _, err := s.Put(strings.NewReader(what), 1<<10); err != nil {
			t.Fatal(err)
		}
	}
	put("the first file, which sweeps the store")
	// The staging file of a process killed a moment ago.
	dead := filepath.Join(dir, ".put-dead")
	if err := os.WriteFile(dead, []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	put("a file staged at once, which leaves it: its process may be writing it")
	if _, err := os.Stat(dead); err != nil {
		t.Fatalf("a recent staging file was swept: %v", err)
	}
	// Days later, the same process stages another file.
	later := time.Now().Add(72 * time.Hour)
	defer filestore.SetNow(func() time.Time { return later })()
	put("a file staged days later")
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the staging file left days before is still in the store (%v)", err)
	}
}

// TestStatBound: Stat refuses a blob past its bound by the blob's size,
// reading none of it (a sparse file of a terabyte, text at its start,
// whose name a digest, read whole, would have taken a quarter of an hour
// to refuse), and says the size.
func TestStatBound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := s.Put(strings.NewReader("some text\n"), 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(b.Digest, 9); !errors.As(err, new(*filestore.TooLargeError)) {
		t.Errorf("a blob of 10 bytes under a bound of 9: %v", err)
	}
	if st, err := s.Stat(b.Digest, 10); err != nil || st != b {
		t.Errorf("a blob of 10 bytes under a bound of 10: %+v, %v", st, err)
	}
	digest := filestore.Prefix + strings.Repeat("cd", 32)
	f, err := os.Create(filepath.Join(dir, digest[len(filestore.Prefix):]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Repeat("Some text.\n", 100)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse file of a terabyte here: %v", err)
	}
	f.Close()
	st, err := s.Stat(digest, 20<<20)
	var tl *filestore.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 20<<20 || st.Size != 1<<40 {
		t.Errorf("a sparse terabyte: %+v, %v", st, err)
	}
}
