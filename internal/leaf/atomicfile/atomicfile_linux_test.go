package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestWriteInPlace: a path that leads to a device, a FIFO or a process's
// descriptor is written where it leads, appended to, and stays what it
// was; a FIFO no process reads is refused at once, not waited on.
func TestWriteInPlace(t *testing.T) {
	dir := t.TempDir()

	// A link to /dev/null is written through, and kept.
	null := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, null); err != nil {
		t.Fatal(err)
	}
	if err := Write(null, []byte("discarded"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to %s: %v, %v; want it kept", os.DevNull, fi, err)
	}

	// A FIFO: its reader gets the bytes; it stays a FIFO.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Write(fifo, []byte("x"), 0o644)
	if want := "writing " + fifo + ": it is a FIFO that no process reads"; err == nil || err.Error() != want {
		t.Errorf("a FIFO no process reads: %v, want %q", err, want)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // waits for the writer
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	// The reader may not have opened yet: Write is refused until it has.
	for {
		err := Write(fifo, []byte("through the fifo"), 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, errNoReader) {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if s := <-got; s != "through the fifo" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO: %v, %v; want it kept", fi, err)
	}

	// A standard output sent to a file (/dev/fd/N, /dev/stdout's form):
	// appended to, the file the descriptor holds.
	out := filepath.Join(dir, "out")
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := f.Stat()
	f.WriteString("header\n")
	if err := Write(fmt.Sprintf("/dev/fd/%d", f.Fd()), []byte("plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "header\nplan\n" {
		t.Errorf("the file behind the descriptor holds %q (%v), want the header and the plan", b, err)
	}
	if after, err := os.Stat(out); err != nil || !os.SameFile(before, after) {
		t.Errorf("the file behind the descriptor was replaced")
	}
}
