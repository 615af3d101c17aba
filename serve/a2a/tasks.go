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
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/userfile"
)

// MetaBytesDropped marks the text part that stands, in an ended task's
// history, for a file part whose bytes the server no longer keeps: the
// text names the file and its media type, and the metadata is the file
// part's.
const MetaBytesDropped = "agentc/bytes_dropped"

// tasks keeps one agent's A2A tasks, for tasks/get, tasks/cancel and a
// task's next message: every task in flight, and the last keep that have
// ended (completed, failed, canceled, rejected), the oldest ended dropped
// first. An ended task keeps no file's bytes: a file part of its history
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
// task is also kept there, past the server's life: a file a task, named
// by a digest of its id (a client chooses no path), holding the task
// without any file's bytes and the id of the run it made. A task a
// client asks for that memory no longer holds is read back from there;
// one that was in flight when its server stopped is settled by its run
// (settle), which a server started again on the directory resumed.
type tasks struct {
	keep  int
	files []string // the agent's file inputs
	dir   string   // "" keeps the tasks in memory only
	// settle returns a task read back from dir that had not ended, as
	// its run (run, "" when it never started) has it now, and whether
	// that changed it.
	settle func(t *a2a.Task, run string) (*a2a.Task, bool)

	// saving orders the saves, so that the directory and memory end
	// with the same, latest, state of a task.
	saving sync.Mutex

	mu      sync.Mutex
	byID    map[a2a.TaskID][]byte
	runOf   map[a2a.TaskID]string // the run each task made, while it is in memory
	stopped map[a2a.TaskID]bool   // the tasks whose runs the server's stop interrupted
	ended   []a2a.TaskID          // oldest first
	done    map[a2a.TaskID]bool
}

func newTasks(keep int, files []string) *tasks {
	return &tasks{keep: keep, files: files, byID: map[a2a.TaskID][]byte{}, runOf: map[a2a.TaskID]string{}, stopped: map[a2a.TaskID]bool{}, done: map[a2a.TaskID]bool{}}
}

// kept is a task as its directory holds it.
type kept struct {
	Run string `json:"run,omitempty"`
	// Interrupted says the task ended failed because the server's stop
	// interrupted its run, which a server started again on the journal
	// directory resumes: the task is settled again by the run.
	Interrupted bool      `json:"interrupted,omitempty"`
	Task        *a2a.Task `json:"task"`
}

// maxKeptBytes bounds a task read back from the directory.
const maxKeptBytes = 16 << 20

// path is where the directory keeps task id.
func (s *tasks) path(id a2a.TaskID) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+".json")
}

// SetRun notes the run task id made, in memory and in the directory.
func (s *tasks) SetRun(id a2a.TaskID, run string) error {
	s.saving.Lock()
	defer s.saving.Unlock()
	s.mu.Lock()
	s.runOf[id] = run
	b, ok := s.byID[id]
	s.mu.Unlock()
	if !ok || s.dir == "" {
		return nil
	}
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	return s.write(&t, run, false)
}

// SetInterrupted notes that the server's stop interrupted task id's
// run, before the task ends for it.
func (s *tasks) SetInterrupted(id a2a.TaskID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped[id] = true
}

// write keeps task, made by run, in the directory, without any file's
// bytes, readable by the owner alone.
func (s *tasks) write(task *a2a.Task, run string, interrupted bool) error {
	b, err := json.Marshal(kept{Run: run, Interrupted: interrupted, Task: withoutBytesTask(task, s.files)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("keeping task %s: %w", task.ID, err)
	}
	if err := atomicfile.Write(s.path(task.ID), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("keeping task %s: %w", task.ID, err)
	}
	return nil
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

// Save keeps task, in place of what was kept under its id.
func (s *tasks) Save(_ context.Context, task *a2a.Task) error {
	if task == nil || task.ID == "" {
		return fmt.Errorf("a task without an id")
	}
	ended := task.Status.State.Terminal()
	if ended {
		task = withoutBytesTask(task, s.files)
	}
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	s.saving.Lock()
	defer s.saving.Unlock()
	s.mu.Lock()
	run, interrupted := s.runOf[task.ID], ended && s.stopped[task.ID]
	s.mu.Unlock()
	if s.dir != "" {
		if err := s.write(task, run, interrupted); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[task.ID] = b
	if ended && !s.done[task.ID] {
		s.done[task.ID] = true
		s.ended = append(s.ended, task.ID)
		for len(s.ended) > s.keep {
			delete(s.byID, s.ended[0])
			delete(s.runOf, s.ended[0])
			delete(s.stopped, s.ended[0])
			delete(s.done, s.ended[0])
			s.ended = s.ended[1:]
		}
	}
	return nil
}

// Get returns a copy of the task kept under id, or a2a.ErrTaskNotFound.
func (s *tasks) Get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	b, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		return s.readBack(ctx, id)
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
// that ended because the server's stop interrupted its run, which a
// later server resumed.
func (s *tasks) readBack(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	if s.dir == "" {
		return nil, a2a.ErrTaskNotFound
	}
	k, err := readKept(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	if k.Task == nil || k.Task.ID != id {
		return nil, a2a.ErrTaskNotFound
	}
	t := k.Task
	if (!t.Status.State.Terminal() || k.Interrupted) && s.settle != nil {
		if settled, changed := s.settle(t, k.Run); changed {
			s.mu.Lock()
			s.runOf[id] = k.Run
			s.mu.Unlock()
			if err := s.Save(ctx, settled); err != nil {
				return nil, err
			}
			t = settled
		}
	}
	return t, nil
}

// readKept reads a task the directory keeps: a regular file (a FIFO is
// refused without waiting on it), bounded. Its errors name no path: the
// client that asked for the task may be told them.
func readKept(path string) (*kept, error) {
	f, err := userfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("a kept task does not open: %s", userfile.Reason(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxKeptBytes {
		return nil, fmt.Errorf("a kept task is not a regular file of at most %d bytes", maxKeptBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
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
		dec := json.NewDecoder(strings.NewReader(p.Text))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) != nil {
			return p, false
		}
		data, ok := withoutFileValues(obj, files)
		if !ok {
			return p, false
		}
		b, err := json.Marshal(data)
		if err != nil {
			return p, false
		}
		return a2a.TextPart{Text: string(b), Metadata: marked(p.Metadata)}, true
	}
	return p, false
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
