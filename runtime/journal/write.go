package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/flock"
)

// Writer appends effects to a journal file. It is safe for concurrent use.
// Once a write fails, every later Append returns that first error: what
// the file holds after a failed write is known only up to the last
// completed line. A Writer holds the journal's Lock until Close.
type Writer struct {
	mu     sync.Mutex
	f      file
	lock   *Lock
	values map[string]bool // digests of the value lines in the file
	keys   map[Key]bool
	err    error
	buf    []byte
	size   int64 // the bytes of the file, up to its last complete line
	noSync bool  // for tests and benchmarks of everything but the disk
	header Header
}

// Header returns the journal's header, as the writer wrote it or, resumed,
// read it.
func (w *Writer) Header() Header { return w.header }

var errClosed = errors.New("journal: writer is closed")

// FullError is an effect a journal cannot take: with it the file would
// pass MaxFile, the most a journal is read back at, and could never be
// read back. The effect is not written, nor is any after it: the journal
// holds every effect before it, and a replay, or a resume, ends at it, as
// at the end of any journal cut short (the journal lacks the effect).
type FullError struct {
	Key  Key
	Size int64 // the journal's bytes
	Line int64 // what the effect would add
}

func (e *FullError) Error() string {
	return fmt.Sprintf("journal: effect %s would take the journal from %d bytes past %d MiB, the most a journal is read back at: it is not written, and the journal ends before it", e.Key, e.Size, MaxFile>>20)
}

// file is what a Writer needs of an *os.File.
type file interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

// onDisk is the writer's one seam with the file system: every file it
// writes or syncs, a journal's directory included, goes through it. Tests
// replace it with one that keeps only what was synced when they simulate
// a crash.
var onDisk = func(f *os.File) file { return f }

// Create creates or replaces a journal file, writes its header and syncs
// it, under the journal's lock (see Lock), which it fails at once with a
// *LockedError if another process holds. The header is written to a new
// file beside it that is then renamed into place, so a crash never leaves
// a journal without its header. The file is readable by its owner only:
// it holds whole conversations and tool results.
func Create(path string, h Header) (*Writer, error) {
	l, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	w, err := l.Create(h)
	if err != nil {
		l.Release()
		return nil, err
	}
	return w, nil
}

func create(l *Lock, h Header, sync bool) (*Writer, error) {
	if !l.held() {
		return nil, errReleased
	}
	path := l.real
	line, err := encodeHeader(h)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f := onDisk(tmp)
	// The new journal is locked before it takes the name, so that every
	// name it gets meets the lock (see Lock).
	held, err := flock.Try(tmp, flock.Exclusive)
	if err == nil && !held {
		err = &LockedError{Path: l.path}
	}
	if err == nil {
		_, err = f.Write(line)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("journal: %w", err)
	}
	if sync {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("journal: %w", err)
		}
	}
	w := newWriter(f)
	w.noSync = !sync
	w.lock = l
	w.size = int64(len(line))
	w.header = h
	return w, nil
}

// syncDir makes the entries of a directory, such as a file renamed into
// it, durable. A file system that cannot sync a directory (dirSyncRefused)
// or a directory that cannot be opened to sync is not an error: the
// file's own sync has succeeded. A sync that fails is.
func syncDir(dir string) error {
	od, err := os.Open(dir)
	if err != nil {
		return nil
	}
	d := onDisk(od)
	err = d.Sync()
	d.Close()
	if err != nil && !dirSyncRefused(err) {
		return err
	}
	return nil
}

func newWriter(f file) *Writer {
	return &Writer{f: f, values: map[string]bool{}, keys: map[Key]bool{}}
}

// Resume reopens a journal to continue its run, under its lock (see
// Lock), which it fails at once with a *LockedError if another process
// holds: it reads the file, cuts off a final line a crash left incomplete
// (Journal.Truncated), and returns a Writer that appends after the last
// complete line without writing again the values the file holds.
func Resume(path string) (*Journal, *Writer, error) {
	l, err := Acquire(path)
	if err != nil {
		return nil, nil, err
	}
	j, w, err := l.Resume()
	if err != nil {
		l.Release()
		return nil, nil, err
	}
	return j, w, nil
}

// resume reads and reopens the journal the lock holds: the file locked,
// never another put at its name since (a link swapped in while the
// journal was read would otherwise have another file cut and written).
func resume(l *Lock) (*Journal, *Writer, error) {
	l.mu.Lock()
	jf := l.jf
	l.mu.Unlock()
	if jf == nil {
		// None was there when the lock was taken.
		return nil, nil, fmt.Errorf("journal: %w", &fs.PathError{Op: "open", Path: l.path, Err: fs.ErrNotExist})
	}
	if _, err := jf.Seek(0, io.SeekStart); err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	j, err := read(jf, l.path)
	if err != nil {
		return nil, nil, err
	}
	of, err := os.OpenFile(l.real, os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	held, herr := jf.Stat()
	here, err := of.Stat()
	if herr != nil || err != nil || !os.SameFile(held, here) {
		of.Close()
		return nil, nil, fmt.Errorf("journal: %s is no longer the file locked (replaced while it was read): not resumed", l.path)
	}
	f := onDisk(of)
	if err = f.Truncate(j.ValidBytes); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	w := newWriter(f)
	w.lock = l
	w.size = j.ValidBytes
	w.header = j.Header
	j.store.file = l.path
	for d := range j.store.values {
		w.values[d] = true
	}
	for k, i := range j.index {
		w.keys[k] = !supersedable(&j.Entries[i])
	}
	return j, w, nil
}

// Append writes an effect: first the value lines of the parts of its
// request not yet in the journal, then the entry line, in one write, then
// syncs the file. It fills in an empty Fingerprint and checks everything
// else, so that whatever it writes reads back; an entry it rejects leaves
// the Writer usable.
func (w *Writer) Append(e Entry) error {
	line, parts, err := encodeEntry(e)
	if err != nil {
		return fmt.Errorf("journal: effect %s: %w", e.Key, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.keys[e.Key] {
		return fmt.Errorf("journal: effect %s is already in the journal", e.Key)
	}
	// A failed effect may be made again; the next entry supersedes it.
	buf := w.buf[:0]
	var added []string
	for _, p := range parts {
		if w.values[p.digest] || slices.Contains(added, p.digest) {
			continue
		}
		added = append(added, p.digest)
		buf = append(buf, `{"value":"`...)
		buf = append(buf, p.digest...)
		buf = append(buf, `","json":`...)
		buf = append(buf, p.json...)
		buf = append(buf, "}\n"...)
	}
	buf = append(buf, line...)
	if cap(buf) <= 1<<20 {
		w.buf = buf
	}
	if w.size+int64(len(buf)) > MaxFile {
		// A journal past MaxFile is refused when read back: one written
		// so could never be replayed or resumed.
		w.err = &FullError{Key: e.Key, Size: w.size, Line: int64(len(buf))}
		return w.err
	}
	for _, d := range added {
		w.values[d] = true
	}
	w.size += int64(len(buf))
	if _, err := w.f.Write(buf); err != nil {
		w.err = fmt.Errorf("journal: %w", err)
		return w.err
	}
	if !w.noSync {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("journal: %w", err)
			return w.err
		}
	}
	w.keys[e.Key] = e.Error == ""
	return nil
}

// Close closes the file and releases the journal's lock. Appends after
// Close fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if w.err == nil {
		w.err = errClosed
	}
	if err != nil {
		err = fmt.Errorf("journal: %w", err)
	}
	if w.lock != nil {
		if lerr := w.lock.Release(); err == nil {
			err = lerr
		}
	}
	return err
}

type headerLine struct {
	Journal      string          `json:"journal"`
	Plan         string          `json:"plan"`
	Run          string          `json:"run"`
	OutputSuffix string          `json:"output_suffix"`
	Agent        string          `json:"agent"`
	Started      string          `json:"started"`
	Tools        json.RawMessage `json:"tools,omitempty"`
	CalleeBudget bool            `json:"callee_budget,omitempty"`
	ExactUsage   bool            `json:"exact_usage,omitempty"`
}

func encodeHeader(h Header) ([]byte, error) {
	if _, err := digest.Parse(h.Plan); err != nil {
		return nil, fmt.Errorf("journal: header: plan: %v", err)
	}
	started, err := formatTime(h.Started)
	if err != nil {
		return nil, fmt.Errorf("journal: header: started: %v", err)
	}
	hl := headerLine{Format, h.Plan, h.Run, h.OutputSuffix, h.Agent, started, nil, h.CalleeBudget, h.ExactUsage}
	if len(h.Tools) > 0 {
		if hl.Tools, err = compact(h.Tools); err != nil {
			return nil, fmt.Errorf("journal: header: tools: %v", err)
		}
	}
	// Without HTML escapes, the tools are written as given.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(hl); err != nil {
		return nil, fmt.Errorf("journal: header: %v", err)
	}
	return b.Bytes(), nil
}

func compact(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeEntry checks an entry and returns its line, with the request
// shredded, and the parts the request refers to.
func encodeEntry(e Entry) ([]byte, []part, error) {
	if err := e.Key.check(); err != nil {
		return nil, nil, err
	}
	if err := checkKind(e.Key, e.Kind); err != nil {
		return nil, nil, err
	}
	request := e.Request
	if request == nil && e.stored != nil { // an entry read back
		var err error
		if request, err = e.ExpandRequest(nil); err != nil {
			return nil, nil, err
		}
	}
	c, err := digest.CanonicalExact(request)
	if err != nil {
		return nil, nil, fmt.Errorf("request: %v", err)
	}
	if c[0] != '{' {
		return nil, nil, fmt.Errorf("request: want a JSON object")
	}
	fp := e.Fingerprint
	if fp == "" {
		fp = sum(fingerprintHash, c)
	} else if _, err := digest.Parse(fp); err != nil {
		return nil, nil, fmt.Errorf("fingerprint: %v", err)
	}
	var resp, usage, errText []byte
	if len(e.Response) > 0 {
		if resp, err = compact(e.Response); err != nil {
			return nil, nil, fmt.Errorf("response: %v", err)
		}
	} else if e.Error == "" {
		return nil, nil, errors.New("neither a response nor an error")
	}
	if len(e.Usage) > 0 {
		if usage, err = compact(e.Usage); err != nil {
			return nil, nil, fmt.Errorf("usage: %v", err)
		}
	}
	if e.Error != "" {
		errText, _ = json.Marshal(e.Error)
	}
	started, err := formatTime(e.Started)
	if err != nil {
		return nil, nil, fmt.Errorf("started: %v", err)
	}
	if e.DurationMS < 0 {
		return nil, nil, fmt.Errorf("negative duration %d ms", e.DurationMS)
	}
	request, parts := shred(c)

	b := make([]byte, 0, 160+len(request)+len(resp)+len(usage)+len(errText))
	b = append(b, `{"effect":"`...)
	b = append(b, e.Key.String()...)
	b = append(b, `","kind":"`...)
	b = append(b, e.Kind...)
	b = append(b, `","fingerprint":"`...)
	b = append(b, fp...)
	b = append(b, `","request":`...)
	b = append(b, request...)
	if resp != nil {
		b = append(b, `,"response":`...)
		b = append(b, resp...)
	}
	if errText != nil {
		b = append(b, `,"error":`...)
		b = append(b, errText...)
	}
	if usage != nil {
		b = append(b, `,"usage":`...)
		b = append(b, usage...)
	}
	b = append(b, `,"started":"`...)
	b = append(b, started...)
	b = append(b, `","duration_ms":`...)
	b = strconv.AppendInt(b, e.DurationMS, 10)
	for i, a := range e.Lost {
		if a.Attempt < 1 {
			return nil, nil, fmt.Errorf("lost attempt %d: its number is below 1", a.Attempt)
		}
		t, err := formatTime(a.Started)
		if err != nil {
			return nil, nil, fmt.Errorf("lost attempt %d: started: %v", a.Attempt, err)
		}
		if i == 0 {
			b = append(b, `,"lost":[`...)
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"attempt":`...)
		b = strconv.AppendInt(b, int64(a.Attempt), 10)
		b = append(b, `,"started":"`...)
		b = append(b, t...)
		b = append(b, `"}`...)
		if i == len(e.Lost)-1 {
			b = append(b, ']')
		}
	}
	return append(b, "}\n"...), parts, nil
}
