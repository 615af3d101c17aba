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

// TestWriteInPlace: a device or a FIFO at the name itself, and a path
// naming one of the process's descriptors, are written where they are;
// a FIFO no process reads is refused at once, not waited on; a link is
// replaced, never followed, even to /dev/null.
func TestWriteInPlace(t *testing.T) {
	dir := t.TempDir()

	// A link to /dev/null is replaced: /dev/null is left the device it is.
	null := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, null); err != nil {
		t.Fatal(err)
	}
	if err := Write(null, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(null); err != nil || string(b) != "kept" {
		t.Errorf("the link to %s: %q, %v; want a file in its place", os.DevNull, b, err)
	}
	if fi, err := os.Lstat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s: %v, %v", os.DevNull, fi, err)
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
	// A link to the FIFO is replaced, not followed.
	toFifo := filepath.Join(dir, "to-fifo")
	if err := os.Symlink(fifo, toFifo); err != nil {
		t.Fatal(err)
	}
	if err := Write(toFifo, []byte("file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(toFifo); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link to the FIFO: %v, %v; want a file in its place", fi, err)
	}

	// A descriptor named as such (/dev/fd/N, as /dev/stdout is fd 1):
	// written through, at its offset, so what is written after follows.
	out := filepath.Join(dir, "out")
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := f.Stat()
	f.WriteString("header\n")
	for _, name := range []string{fmt.Sprintf("/dev/fd/%d", f.Fd()), fmt.Sprintf("/proc/self/fd/%d", f.Fd())} {
		if err := Write(name, []byte("plan\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.WriteString("after\n")
	if b, err := os.ReadFile(out); err != nil || string(b) != "header\nplan\nplan\nafter\n" {
		t.Errorf("the file behind the descriptor holds %q (%v), want the header, the plan twice and what came after", b, err)
	}
	if after, err := os.Stat(out); err != nil || !os.SameFile(before, after) {
		t.Errorf("the file behind the descriptor was replaced")
	}
	if err := Write("/dev/fd/999", []byte("x"), 0o644); err == nil {
		t.Errorf("a descriptor not open: written")
	}
}
