package journal

import (
	"bytes"
	"errors"
	"io"
)

// CreateNoSync is Create for tests and benchmarks of everything but the
// disk: its Writer never syncs.
func CreateNoSync(path string, h Header) (*Writer, error) {
	l, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	w, err := create(l, h, false)
	if err != nil {
		l.Release()
	}
	return w, err
}

// CloseFile closes w's file under it, so that its next write fails.
func CloseFile(w *Writer) error { return w.f.Close() }

type memFile struct{ io.Writer }

func (memFile) Truncate(int64) error { return errors.ErrUnsupported }
func (memFile) Sync() error          { return nil }
func (memFile) Close() error         { return nil }

// CreateMemory returns a Writer that writes a journal to b.
func CreateMemory(b *bytes.Buffer, h Header) (*Writer, error) {
	line, err := encodeHeader(h)
	if err != nil {
		return nil, err
	}
	b.Write(line)
	w := newWriter(memFile{b})
	w.header = h
	return w, nil
}
