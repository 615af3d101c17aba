package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/serve"
)

// MetaBytesDropped marks the text part that stands, in an ended task's
// history, for a file part whose bytes the server no longer keeps: the
// text names the file and its media type, and the metadata is the file
// part's.
const MetaBytesDropped = "agentc/bytes_dropped"

// tasks keeps one agent's A2A tasks, for tasks/get, tasks/cancel and a
// task's next message: every task in flight, and the last keep that have
// ended (completed, failed, canceled, rejected), at most keepBytes of them
// as JSON, the oldest ended dropped first (a message refused before any
// run is kept as sent, and a client may send many). An ended task keeps no file's bytes: a file part of its history
// or status is kept as a text part naming the file and its media type
// (the protocol has no file part without its bytes or a URI), and a
// file's base64 text in a data part, or in a text part's JSON, as a note;
// each part changed is marked MetaBytesDropped. So what a server holds of the
// tasks its clients made stays bounded over its life, as the records of
// its runs do (serve.DefaultKeep), and a file a client sent is held only
// while its run runs. Each task is held as its JSON, so what is saved or
// got is a copy: the SDK's own task, which it goes on changing, is never
// held. Its methods are safe for concurrent use.
//
// With a directory (the server's journal directory's a2a/AGENT), every
// task whose run has started is also kept there, past the server's life:
// a file a task, named by a digest of its id (a client chooses no path),
// holding the task without any file's bytes and the id of the run it
// made. A task refused before its run started leaves nothing there, as a
// refused run leaves no journal. A task a client asks for that memory no
// longer holds is read back from there; one that had not ended when its
// server stopped, or ended because the stop interrupted its run, is
// settled by its run (settle), which a server started again on the
// directory resumes. Keeping a task there is best effort: a failure is
// told to logErr, and the task is kept in memory all the same.
type tasks struct {
	keep      int
	keepBytes int64
	files     []string // the agent's file inputs
	dir       string   // "" keeps the tasks in memory only
	// settle returns a task read back from dir that had not ended, or
	// had ended because the stop interrupted its run, as its run has it
	// now; whether that changed it; and whether it ended because its
	// run is interrupted still (so that it is settled again later).
	// The request asking for it (ctx's) reads the run's record within
	// the bound on reading; an error is its going while it waited.
	settle func(ctx context.Context, t *a2a.Task, run string) (settled *a2a.Task, changed, interrupted bool, err error)
	// logErr hears what could not be kept in dir.
	logErr func(error)

	// stripes order the saves of each task (the stripe of its id's
	// digest), so that dir ends with its latest state; saves of other
	// tasks mostly go on at once.
	stripes [64]sync.Mutex

	mu      sync.Mutex
	byID    map[a2a.TaskID][]byte
	runOf   map[a2a.TaskID]string // the run each task made
	stopped map[a2a.TaskID]bool   // the tasks whose runs the server's stop interrupted
	ended   []a2a.TaskID          // oldest first
	done    map[a2a.TaskID]bool
	held    int64 // the ended tasks' JSON, in bytes
}

func newTasks(keep int, files []string) *tasks {
	return &tasks{keep: keep, keepBytes: serve.DefaultKeepBytes, files: files, byID: map[a2a.TaskID][]byte{}, runOf: map[a2a.TaskID]string{}, stopped: map[a2a.TaskID]bool{}, done: map[a2a.TaskID]bool{}}
}

// kept is a task as its directory holds it.
type kept struct {
	Run string `json:"run"`
	// Interrupted says the task ended failed because the server's stop
	// interrupted its run, which a server started again on the journal
	// directory resumes: the task is settled again by the run.
	Interrupted bool      `json:"interrupted,omitempty"`
	Task        *a2a.Task `json:"task"`
}

// maxKeptBytes bounds a task kept in the directory, written or read.
const maxKeptBytes = 64 << 20

// sum is the digest of a task's id: its file's name, and its stripe.
func sum(id a2a.TaskID) [sha256.Size]byte { return sha256.Sum256([]byte(id)) }

// path is where the directory keeps task id.
func (s *tasks) path(id a2a.TaskID) string {
	d := sum(id)
	return filepath.Join(s.dir, hex.EncodeToString(d[:])+".json")
}

func (s *tasks) stripe(id a2a.TaskID) *sync.Mutex {
	d := sum(id)
	return &s.stripes[int(d[0])%len(s.stripes)]
}

// RunOf is the run task id made, "" when none is known.
func (s *tasks) RunOf(id a2a.TaskID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runOf[id]
}

// SetRun notes the run task id made, in memory and in the directory.
func (s *tasks) SetRun(id a2a.TaskID, run string) {
	l := s.stripe(id)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	s.runOf[id] = run
	b, ok := s.byID[id]
	s.mu.Unlock()
	if !ok || s.dir == "" {
		return
	}
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		s.logFailure(err)
		return
	}
	s.write(&t, run, false)
}

// ClearRun forgets the run task id made, and what the directory keeps of
// the task: for a run that never ran (its input or its configuration
// refused), which leaves no record, so that its task leaves nothing
// either.
func (s *tasks) ClearRun(id a2a.TaskID) {
	l := s.stripe(id)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	delete(s.runOf, id)
	s.mu.Unlock()
	if s.dir != "" {
		if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logFailure(fmt.Errorf("dropping A2A task %s: %w", id, err))
		}
	}
}

// SetInterrupted notes that the server's stop interrupted task id's
// run, or that its run is another server's, before the task ends for it:
// the task is settled again by its run when next asked for.
func (s *tasks) SetInterrupted(id a2a.TaskID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped[id] = true
}

func (s *tasks) logFailure(err error) {
	if s.logErr != nil {
		s.logErr(err)
	}
}

// write keeps task, made by run, in the directory, without any file's
// bytes, readable by the owner alone, and reports whether it did; a
// failure is logged.
func (s *tasks) write(task *a2a.Task, run string, interrupted bool) bool {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a task's text is kept as it is, never six bytes for a <
	if err := enc.Encode(kept{Run: run, Interrupted: interrupted, Task: withoutBytesTask(task, s.files)}); err != nil {
		s.logFailure(fmt.Errorf("keeping A2A task %s: %w", task.ID, err))
		return false
	}
	if b.Len() > maxKeptBytes {
		s.logFailure(fmt.Errorf("keeping A2A task %s: it is larger than the %d bytes a kept task may be; it is kept in memory alone", task.ID, maxKeptBytes))
		return false
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.logFailure(fmt.Errorf("keeping A2A task %s: %w", task.ID, err))
		return false
	}
	if err := atomicfile.Write(s.path(task.ID), []byte(b.String()), 0o600); err != nil {
		s.logFailure(fmt.Errorf("keeping A2A task %s: %w", task.ID, err))
		return false
	}
	return true
}

// withoutBytesTask returns task with no file's bytes in its history or
// its status message; task is not changed.
func withoutBytesTask(task *a2a.Task, files []string) *a2a.Task {
	t := *task
	t.History = withoutFileBytes(t.History, files)
	if t.Status.Message != nil {
		t.Status.Message = withoutFileBytes([]*a2a.Message{t.Status.Message}, files)[0]
	}
	return &t
}

// Save keeps task, in place of what was kept under its id: in memory,
// and, once its run has started, in the directory; the messages of its
// history kept before are kept as they were (asSent). A task memory does
// not know the run of (one read back, to which a message came) keeps
// the run the directory names.
func (s *tasks) Save(_ context.Context, task *a2a.Task) error {
	if task == nil || task.ID == "" {
		return fmt.Errorf("a task without an id")
	}
	l := s.stripe(task.ID)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	run, known := s.runOf[task.ID]
	interrupted := s.stopped[task.ID]
	prev, had := s.byID[task.ID]
	s.mu.Unlock()
	var sent []*a2a.Message
	if had {
		var h struct {
			History []*a2a.Message `json:"history"`
		}
		if err := json.Unmarshal(prev, &h); err != nil {
			return err
		}
		sent = h.History
	}
	if !known && s.dir != "" {
		if k, err := readKept(s.path(task.ID), nil); err == nil && k.Task != nil && k.Task.ID == task.ID {
			run = k.Run
			if !had {
				sent = k.Task.History
			}
		}
	}
	return s.save(asSent(task, sent), run, interrupted)
}

// asSent returns task with each message of its history that sent (the
// history as kept before) holds, by id, as kept: as it was first saved,
// which is as it was sent. The SDK saves a copy of the task at each of
// its status changes, made by a gob round trip, which makes an empty
// array or object null. task is not changed.
func asSent(task *a2a.Task, sent []*a2a.Message) *a2a.Task {
	if len(sent) == 0 || len(task.History) == 0 {
		return task
	}
	byID := map[string]*a2a.Message{}
	for _, m := range sent {
		if m != nil && m.ID != "" {
			byID[m.ID] = m
		}
	}
	c := *task
	c.History = slices.Clone(task.History)
	for i, m := range c.History {
		if m == nil {
			continue
		}
		if kept, ok := byID[m.ID]; ok {
			c.History[i] = kept
		}
	}
	return &c
}

// save keeps task, made by run, under its stripe. A task that ended
// because its run was interrupted (interrupted), once the directory
// keeps it, is not kept in memory, where it would stand for good: it is
// read back, and settled again by its run, each time it is asked for.
func (s *tasks) save(task *a2a.Task, run string, interrupted bool) error {
	ended := task.Status.State.Terminal()
	interrupted = interrupted && ended
	if ended {
		task = withoutBytesTask(task, s.files)
	}
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	written := s.dir != "" && run != "" && s.write(task, run, interrupted)
	s.mu.Lock()
	defer s.mu.Unlock()
	if interrupted && written {
		s.forgetLocked(task.ID)
		return nil
	}
	s.remember(task.ID, b, ended)
	if run != "" {
		s.runOf[task.ID] = run
	}
	return nil
}

// remember keeps task id's JSON b in memory, among the last keep ended
// (at most keepBytes of them) when it has ended, the oldest of those
// dropped; the one that ended last is kept whatever its size. Called with
// mu held.
func (s *tasks) remember(id a2a.TaskID, b []byte, ended bool) {
	if s.done[id] {
		s.held += int64(len(b) - len(s.byID[id]))
	}
	s.byID[id] = b
	if ended && !s.done[id] {
		s.done[id] = true
		s.ended = append(s.ended, id)
		s.held += int64(len(b))
	}
	for len(s.ended) > s.keep || len(s.ended) > 1 && s.held > s.keepBytes {
		s.forgetLocked(s.ended[0])
	}
}

// forgetLocked drops task id from memory. Called with mu held.
func (s *tasks) forgetLocked(id a2a.TaskID) {
	if s.done[id] {
		s.held -= int64(len(s.byID[id]))
	}
	delete(s.byID, id)
	delete(s.runOf, id)
	delete(s.stopped, id)
	if s.done[id] {
		delete(s.done, id)
		if i := slices.Index(s.ended, id); i >= 0 {
			s.ended = slices.Delete(s.ended, i, i+1)
		}
	}
}

// Get returns a copy of the task kept under id, or a2a.ErrTaskNotFound.
// The request asking for it (ctx's) holds the task's weight on the bound
// on reading until it ends: decoding a task, and the SDK's encoding of
// it, cost many times its bytes.
func (s *tasks) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	b, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		return s.readBack(ctx, id)
	}
	if err := holdOf(ctx).take(ctx, serve.Weight(b)); err != nil {
		return nil, err
	}
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// readBack returns the task the directory keeps under id. Memory holds
// every task in flight in this server, so one read back that has not
// ended was in flight when an earlier server stopped (or died): it is
// settled by its run, and kept again when that changed it; so is one
// that ended because its run was interrupted, which a later server
// resumes. A task that has ended for good is kept in memory again, among
// the last ended. A task saved meanwhile (a message to it) is newer than
// what the directory held, and stands.
func (s *tasks) readBack(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	if s.dir == "" {
		return nil, a2a.ErrTaskNotFound
	}
	k, err := readKept(s.path(id), func(b []byte) error { return holdOf(ctx).take(ctx, serve.Weight(b)) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	if k.Task == nil || k.Task.ID != id {
		return nil, a2a.ErrTaskNotFound
	}
	t, changed, interrupted := k.Task, false, k.Interrupted
	final := !interrupted && t.Status.State.Terminal()
	if !final && s.settle != nil {
		if t, changed, interrupted, err = s.settle(ctx, t, k.Run); err != nil {
			return nil, err
		}
		final = !interrupted && t.Status.State.Terminal()
	}
	l := s.stripe(id)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	b, ok := s.byID[id]
	s.mu.Unlock()
	switch {
	case ok:
		var newer a2a.Task
		if err := json.Unmarshal(b, &newer); err != nil {
			return nil, err
		}
		return &newer, nil
	case changed:
		if err := s.save(t, k.Run, interrupted); err != nil {
			return nil, err
		}
	case final:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.remember(id, b, true)
		s.runOf[id] = k.Run
		s.mu.Unlock()
	}
	return t, nil
}

// readKept reads a task the directory keeps: a regular file (a FIFO is
// refused without waiting on it), bounded, and weighed (when weigh is not
// nil) before it is decoded. Its errors name no path: the client that
// asked for the task may be told them.
func readKept(path string, weigh func([]byte) error) (*kept, error) {
	b, err := userfile.Read(path, maxKeptBytes, "a kept task")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("a kept task does not read: %s", userfile.Reason(err))
	}
	if weigh != nil {
		if err := weigh(b); err != nil {
			return nil, err
		}
	}
	var k kept
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("a kept task does not read: %v", err)
	}
	return &k, nil
}

// withoutFileBytes returns msgs with the bytes of each file they give
// dropped: a file part given by its bytes is replaced by a text part that
// names it, and the base64 text at a file input (files) of a data part,
// or of a text part that holds a JSON object, by a note; each part
// changed is marked MetaBytesDropped. The messages and parts given are
// not changed: those that change are copies.
func withoutFileBytes(msgs []*a2a.Message, files []string) []*a2a.Message {
	out, copied := msgs, false
	for i, m := range msgs {
		if m == nil {
			continue
		}
		var parts a2a.ContentParts
		for j, p := range m.Parts {
			q, ok := withoutBytes(p, files)
			if !ok {
				continue
			}
			if parts == nil {
				parts = append(a2a.ContentParts(nil), m.Parts...)
			}
			parts[j] = q
		}
		if parts == nil {
			continue
		}
		if !copied {
			out, copied = append([]*a2a.Message(nil), msgs...), true
		}
		c := *m
		c.Parts = parts
		out[i] = &c
	}
	return out
}

// droppedNote stands for a file's base64 text in a data part, or in a
// text part's JSON, of an ended task.
const droppedNote = "[a file: its bytes are not kept once the task has ended]"

// withoutBytes returns part p without the bytes of the files it gives,
// and whether it gave any.
func withoutBytes(p a2a.Part, files []string) (a2a.Part, bool) {
	marked := func(meta map[string]any) map[string]any {
		m := maps.Clone(meta)
		if m == nil {
			m = map[string]any{}
		}
		m[MetaBytesDropped] = true
		return m
	}
	switch p := p.(type) {
	case a2a.FilePart:
		fb, ok := p.File.(a2a.FileBytes)
		if !ok {
			return p, false
		}
		return a2a.TextPart{Text: droppedText(fb.FileMeta), Metadata: marked(p.Metadata)}, true
	case a2a.DataPart:
		data, ok := withoutFileValues(p.Data, files)
		if !ok {
			return p, false
		}
		return a2a.DataPart{Data: data, Metadata: marked(p.Metadata)}, true
	case a2a.TextPart:
		if len(files) == 0 {
			return p, false
		}
		// Its members are kept as their text: a text part may hold a
		// large input of millions of values (it is one string to the
		// bound on a request's values), and decoding them, as each save
		// did, cost hundreds of bytes a value outside the bound on
		// reading.
		var obj map[string]json.RawMessage
		if json.NewDecoder(strings.NewReader(p.Text)).Decode(&obj) != nil {
			return p, false
		}
		data, ok := withoutFileText(obj, files)
		if !ok {
			return p, false
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the client's < stays one byte, never six
		if enc.Encode(data) != nil {
			return p, false
		}
		return a2a.TextPart{Text: strings.TrimSuffix(b.String(), "\n"), Metadata: marked(p.Metadata)}, true
	}
	return p, false
}

// withoutFileText is withoutFileValues for an object whose members are
// kept as their JSON text.
func withoutFileText(obj map[string]json.RawMessage, files []string) (map[string]json.RawMessage, bool) {
	note, _ := json.Marshal(droppedNote)
	var out map[string]json.RawMessage
	for _, name := range files {
		var s string
		if v, ok := obj[name]; ok && len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s != droppedNote {
			if out == nil {
				out = maps.Clone(obj)
			}
			out[name] = note
		}
	}
	return out, out != nil
}

// withoutFileValues returns obj with each file input's text replaced by
// droppedNote, and whether it held any; obj is not changed.
func withoutFileValues(obj map[string]any, files []string) (map[string]any, bool) {
	var out map[string]any
	for _, name := range files {
		if s, ok := obj[name].(string); ok && s != droppedNote {
			if out == nil {
				out = maps.Clone(obj)
			}
			out[name] = droppedNote
		}
	}
	return out, out != nil
}

// droppedText is the text that stands for a file whose bytes are dropped.
func droppedText(m a2a.FileMeta) string {
	name, mt := m.Name, m.MimeType
	if name == "" {
		name = "without a name"
	}
	if mt == "" {
		mt = "no media type given"
	}
	return fmt.Sprintf("[a file, %s (%s): its bytes are not kept once the task has ended]", name, mt)
}
