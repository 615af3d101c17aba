package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"
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
type tasks struct {
	keep  int
	files []string // the agent's file inputs

	mu    sync.Mutex
	byID  map[a2a.TaskID][]byte
	ended []a2a.TaskID // oldest first
	done  map[a2a.TaskID]bool
}

func newTasks(keep int, files []string) *tasks {
	return &tasks{keep: keep, files: files, byID: map[a2a.TaskID][]byte{}, done: map[a2a.TaskID]bool{}}
}

// Save keeps task, in place of what was kept under its id.
func (s *tasks) Save(_ context.Context, task *a2a.Task) error {
	if task == nil || task.ID == "" {
		return fmt.Errorf("a task without an id")
	}
	ended := task.Status.State.Terminal()
	if ended {
		t := *task
		t.History = withoutFileBytes(t.History, s.files)
		if t.Status.Message != nil {
			t.Status.Message = withoutFileBytes([]*a2a.Message{t.Status.Message}, s.files)[0]
		}
		task = &t
	}
	b, err := json.Marshal(task)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[task.ID] = b
	if ended && !s.done[task.ID] {
		s.done[task.ID] = true
		s.ended = append(s.ended, task.ID)
		for len(s.ended) > s.keep {
			delete(s.byID, s.ended[0])
			delete(s.done, s.ended[0])
			s.ended = s.ended[1:]
		}
	}
	return nil
}

// Get returns a copy of the task kept under id, or a2a.ErrTaskNotFound.
func (s *tasks) Get(_ context.Context, id a2a.TaskID) (*a2a.Task, error) {
	s.mu.Lock()
	b, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		return nil, a2a.ErrTaskNotFound
	}
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
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
