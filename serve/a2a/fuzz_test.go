package a2a

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// FuzzMessage: whatever message a client sends (as the SDK decodes it),
// reading the agent's input from it gives one JSON value, an object
// where it holds a file, or an error; never a panic. Kept as an ended
// task, it holds no file's bytes, and the message it came from is not
// changed.
func FuzzMessage(f *testing.F) {
	for _, m := range []string{
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"title":"Lunch"}},{"kind":"file","file":{"name":"n.txt","mimeType":"text/plain","bytes":"THVuY2g="}}]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"{\"note\":\"THVuY2g=\",\"n\":1e400}"}]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"http://169.254.169.254/"}}]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"AA=="},"metadata":{"agentc/input":"photo"}},{"kind":"file","file":{"bytes":"AA=="},"metadata":{"agentc/input":"note"}}]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"[1,2]"},{"kind":"file","file":{"bytes":"AA=="}}]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[]}`,
		`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"null"},{"kind":"file","file":{"bytes":"AA=="},"metadata":{"agentc/input":"note"}}]}`,
	} {
		f.Add([]byte(m))
	}
	files := []string{"note", "photo"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m a2a.Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		for _, fs := range [][]string{files, files[:1], nil} {
			input, names, err := inputOf(&m, fs)
			if err == nil && !json.Valid(input) {
				t.Fatalf("input %q is not JSON", input)
			}
			for k := range names {
				if !slices.Contains(fs, k) {
					t.Fatalf("a name for %q, which is not a file input", k)
				}
			}
		}
		before, err := json.Marshal(&m)
		if err != nil {
			return
		}
		s := newTasks(1, files)
		ctx := context.Background()
		if err := s.Save(ctx, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, History: []*a2a.Message{&m}}); err != nil {
			return
		}
		after, _ := json.Marshal(&m)
		if string(before) != string(after) {
			t.Fatalf("saving the task changed its message:\n%s\n%s", before, after)
		}
		kept, err := s.Get(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range kept.History[0].Parts {
			switch p := p.(type) {
			case a2a.FilePart:
				if fb, ok := p.File.(a2a.FileBytes); ok {
					t.Fatalf("an ended task keeps a file's bytes: %q", fb.Bytes)
				}
			case a2a.DataPart:
				for _, name := range files {
					if v, ok := p.Data[name].(string); ok && v != droppedNote {
						t.Fatalf("an ended task keeps file %s's text %q", name, v)
					}
				}
			case a2a.TextPart:
				dec := json.NewDecoder(strings.NewReader(p.Text))
				dec.UseNumber()
				var obj map[string]any
				if dec.Decode(&obj) == nil {
					for _, name := range files {
						if v, ok := obj[name].(string); ok && v != droppedNote {
							t.Fatalf("an ended task keeps file %s's text %q in a text part", name, v)
						}
					}
				}
			}
		}
		if len(kept.History[0].Parts) != len(m.Parts) || !reflect.DeepEqual(kept.History[0].ID, m.ID) {
			t.Fatalf("the kept message has %d parts, the message %d", len(kept.History[0].Parts), len(m.Parts))
		}
	})
}
