package a2a

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestTasks: the tasks in flight are kept, and the last keep ended ones,
// the oldest ended dropped first; an ended task keeps no file's bytes;
// what is saved and got is a copy.
func TestTasks(t *testing.T) {
	ctx := context.Background()
	s := newTasks(3, []string{"note"})
	task := func(id string, state a2a.TaskState, parts ...a2a.Part) *a2a.Task {
		return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state},
			History: []*a2a.Message{{ID: "m-" + id, Role: a2a.MessageRoleUser, Parts: parts}}}
	}
	file := a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: "note.txt", MimeType: "text/plain"}, Bytes: "THVuY2g="}, Metadata: map[string]any{MetaInput: "note"}}

	live := task("live", a2a.TaskStateWorking, file)
	if err := s.Save(ctx, live); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "live")
	if err != nil || got.History[0].Parts[0].(a2a.FilePart).File.(a2a.FileBytes).Bytes != "THVuY2g=" {
		t.Fatalf("a task in flight keeps its file's bytes: %v %+v", err, got)
	}
	// The SDK goes on changing its task; what was kept does not change.
	live.History[0].Parts[0] = a2a.TextPart{Text: "changed"}
	if got, _ := s.Get(ctx, "live"); got.History[0].Parts[0].(a2a.FilePart).Meta()[MetaInput] != "note" {
		t.Errorf("the kept task changed with the SDK's: %+v", got.History[0].Parts[0])
	}
	live.History[0].Parts[0] = file

	ended := task("t0", a2a.TaskStateCompleted, a2a.TextPart{Text: "hello"}, file)
	if err := s.Save(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if ended.History[0].Parts[1].(a2a.FilePart).File.(a2a.FileBytes).Bytes != "THVuY2g=" {
		t.Error("saving an ended task changed the task given")
	}
	got, err = s.Get(ctx, "t0")
	if err != nil {
		t.Fatal(err)
	}
	tp, ok := got.History[0].Parts[1].(a2a.TextPart)
	if !ok || tp.Text != "[a file, note.txt (text/plain): its bytes are not kept once the task has ended]" || tp.Metadata[MetaBytesDropped] != true || tp.Metadata[MetaInput] != "note" {
		t.Errorf("an ended task's file part: %#v", got.History[0].Parts[1])
	}
	if got.History[0].Parts[0].(a2a.TextPart).Text != "hello" {
		t.Errorf("an ended task's text part: %#v", got.History[0].Parts[0])
	}
	// A copy got is the caller's to change.
	got.History = nil
	if again, _ := s.Get(ctx, "t0"); len(again.History) != 1 {
		t.Error("changing a task got changed the one kept")
	}

	// A file's base64 in a data part, or in a text part's JSON, is
	// dropped too; other values and text are kept as they are (a < is
	// not written as the six bytes \u003c).
	inData := task("d", a2a.TaskStateRejected,
		a2a.DataPart{Data: map[string]any{"note": "THVuY2g=", "title": "Lunch"}},
		a2a.TextPart{Text: `{"note": "THVuY2g=", "n": 1.50, "t": "<a&b>"}`},
		a2a.TextPart{Text: "THVuY2g= is not JSON"})
	if err := s.Save(ctx, inData); err != nil {
		t.Fatal(err)
	}
	if inData.History[0].Parts[0].(a2a.DataPart).Data["note"] != "THVuY2g=" {
		t.Error("saving an ended task changed the data part given")
	}
	got, err = s.Get(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	dp := got.History[0].Parts[0].(a2a.DataPart)
	if dp.Data["note"] != droppedNote || dp.Data["title"] != "Lunch" || dp.Metadata[MetaBytesDropped] != true {
		t.Errorf("the data part kept: %#v", dp)
	}
	if tp := got.History[0].Parts[1].(a2a.TextPart); tp.Text != `{"n":1.50,"note":"`+droppedNote+`","t":"<a&b>"}` || tp.Metadata[MetaBytesDropped] != true {
		t.Errorf("the JSON text part kept: %#v", tp)
	}
	if tp := got.History[0].Parts[2].(a2a.TextPart); tp.Text != "THVuY2g= is not JSON" || tp.Metadata != nil {
		t.Errorf("the text part kept: %#v", tp)
	}

	// Saved again, an ended task counts once.
	if err := s.Save(ctx, ended); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if err := s.Save(ctx, task(fmt.Sprint("t", i), a2a.TaskStateFailed)); err != nil {
			t.Fatal(err)
		}
	}
	for id, kept := range map[a2a.TaskID]bool{"live": true, "t0": false, "d": false, "t1": false, "t2": true, "t3": true, "t4": true} {
		_, err := s.Get(ctx, id)
		if kept && err != nil || !kept && !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("task %s: %v, kept %v", id, err, kept)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) != 4 || len(s.ended) != 3 || len(s.done) != 3 {
		t.Errorf("held: %d tasks, %d ended, %d marked", len(s.byID), len(s.ended), len(s.done))
	}
}

// TestTasksKept: with a directory, every task whose run started is kept
// there too (one refused before its run leaves nothing), without any
// file's bytes, under a name of its own (never the client's id), for the
// owner alone; a store made afresh on the directory (a server started
// again) reads each back; a task that had not ended, or ended because
// the stop interrupted its run, is settled by its run and kept again once
// that changed it. What is not a kept task is not found or an error,
// never a panic, and an id reaches no other path.
func TestTasksKept(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a2a", "reader")
	task := func(id string, state a2a.TaskState, parts ...a2a.Part) *a2a.Task {
		return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state},
			History: []*a2a.Message{{ID: "m-" + id, Role: a2a.MessageRoleUser, Parts: parts}}}
	}
	file := a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: "note.txt", MimeType: "text/plain"}, Bytes: "THVuY2g="}}

	s := newTasks(1, []string{"note"})
	s.dir = dir
	for _, c := range []struct {
		id, run     string
		state       a2a.TaskState
		interrupted bool
	}{
		{"done", "r-done", a2a.TaskStateCompleted, false},
		{"live", "r-live", a2a.TaskStateWorking, false},
		{"died", "r-died", a2a.TaskStateWorking, false},
		{"stopped", "r-stopped", a2a.TaskStateFailed, true},
		{"refused", "", a2a.TaskStateRejected, false},
	} {
		if err := s.Save(ctx, task(c.id, a2a.TaskStateSubmitted, file)); err != nil {
			t.Fatal(err)
		}
		if c.run != "" {
			s.SetRun(a2a.TaskID(c.id), c.run)
		}
		if c.interrupted {
			s.SetInterrupted(a2a.TaskID(c.id))
		}
		if err := s.Save(ctx, task(c.id, c.state, file)); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 4 {
		t.Fatalf("the directory holds %v (%v), want the 4 tasks whose runs started", ents, err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fi, _ := e.Info()
		if strings.Contains(string(b), "THVuY2g=") || !strings.Contains(string(b), MetaBytesDropped) || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s (%v) holds a file's bytes, or is not the owner's alone: %s", e.Name(), fi.Mode(), b)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}\.json$`).MatchString(e.Name()) {
			t.Errorf("a kept task is named %s", e.Name())
		}
	}

	// A server started again: the runs as they stand now.
	var settled []string
	settle := func(_ context.Context, t *a2a.Task, run string) (*a2a.Task, bool, bool, error) {
		settled = append(settled, string(t.ID)+":"+run)
		if run == "r-live" {
			return t, false, false, nil // still running
		}
		c := *t
		c.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
		return &c, true, false, nil
	}
	again := newTasks(1, []string{"note"})
	again.dir, again.settle = dir, settle
	for _, c := range []struct {
		id   string
		want a2a.TaskState
	}{{"done", a2a.TaskStateCompleted}, {"live", a2a.TaskStateWorking}, {"died", a2a.TaskStateCompleted}, {"stopped", a2a.TaskStateCompleted}} {
		got, err := again.Get(ctx, a2a.TaskID(c.id))
		if err != nil || got.Status.State != c.want || got.ID != a2a.TaskID(c.id) {
			t.Errorf("%s read back: %v %+v, want %s", c.id, err, got, c.want)
		}
	}
	if got := strings.Join(settled, " "); got != "live:r-live died:r-died stopped:r-stopped" {
		t.Errorf("settled %s (an ended task is not settled again)", got)
	}
	if _, err := again.Get(ctx, "refused"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("a task refused before its run was kept: %v", err)
	}
	// Settled once, each is kept so: a third server settles only the
	// one still running, and the one still running each time it is asked.
	settled = nil
	third := newTasks(1, nil)
	third.dir, third.settle = dir, settle
	for _, id := range []a2a.TaskID{"died", "stopped", "live", "live"} {
		if _, err := third.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(settled, " "); got != "live:r-live live:r-live" {
		t.Errorf("settled again: %s", got)
	}
	// A message to the task read back still running keeps naming its
	// run when the SDK saves the task again.
	live, _ := third.Get(ctx, "live")
	if err := third.Save(ctx, live); err != nil || third.RunOf("live") != "r-live" {
		t.Errorf("the run of a task read back and saved again: %q, %v", third.RunOf("live"), err)
	}

	// Not kept, or not a kept task.
	for _, id := range []a2a.TaskID{"never", "../../etc/passwd", "", "done/.."} {
		if _, err := third.Get(ctx, id); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%q: %v, want not found", id, err)
		}
	}
	bad := func(id a2a.TaskID, make func(path string) error) {
		t.Helper()
		if err := make(third.path(id)); err != nil {
			t.Fatal(err)
		}
		_, err := third.Get(ctx, id)
		if err == nil {
			t.Errorf("%s: read back", id)
		} else if strings.Contains(err.Error(), dir) {
			t.Errorf("%s: the error names the directory: %v", id, err)
		}
	}
	bad("garbled", func(p string) error { return os.WriteFile(p, []byte(`{"task": [`), 0o600) })
	bad("a-dir", func(p string) error { return os.Mkdir(p, 0o700) })
	bad("a-fifo", mkfifo)
	// A task kept under another's name is not that one.
	b, _ := os.ReadFile(third.path("done"))
	if err := os.WriteFile(third.path("other"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Get(ctx, "other"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("a task kept under another's name: %v", err)
	}
}

// TestTasksKeptNewerStands: a task saved while an old copy of it is
// being settled (a message to it, say) is newer, and stands: in memory
// and in the directory.
func TestTasksKeptNewerStands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := newTasks(4, nil)
	old.dir = dir
	if err := old.Save(ctx, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); err != nil {
		t.Fatal(err)
	}
	old.SetRun("t", "r1")
	s := newTasks(4, nil)
	s.dir = dir
	s.settle = func(_ context.Context, task *a2a.Task, run string) (*a2a.Task, bool, bool, error) {
		// Meanwhile the task is saved again, newer, with a run of its own.
		if err := s.Save(ctx, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Metadata: map[string]any{"newer": true}}); err != nil {
			t.Fatal(err)
		}
		s.SetRun("t", "r2")
		c := *task
		c.Status = a2a.TaskStatus{State: a2a.TaskStateFailed}
		return &c, true, false, nil
	}
	got, err := s.Get(ctx, "t")
	if err != nil || got.Status.State != a2a.TaskStateWorking || got.Metadata["newer"] != true {
		t.Fatalf("got %+v, %v: want the newer task", got, err)
	}
	k, err := readKept(s.path("t"), nil)
	if err != nil || k.Run != "r2" || k.Task.Status.State != a2a.TaskStateWorking {
		t.Errorf("the directory holds %+v, %v: want the newer task, of run r2", k, err)
	}
}

// TestTasksKeptFails: a directory that cannot be written keeps nothing,
// says so to the log, and the tasks are kept in memory all the same.
func TestTasksKeptFails(t *testing.T) {
	ctx := context.Background()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTasks(4, nil)
	s.dir = filepath.Join(notDir, "a2a")
	var logged []error
	s.logErr = func(err error) { logged = append(logged, err) }
	if err := s.Save(ctx, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); err != nil {
		t.Fatal(err)
	}
	s.SetRun("t", "r")
	if err := s.Save(ctx, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}); err != nil {
		t.Fatalf("a save failed for the directory: %v", err)
	}
	if got, err := s.Get(ctx, "t"); err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("memory: %+v, %v", got, err)
	}
	if len(logged) != 2 || !strings.Contains(logged[0].Error(), "keeping A2A task t") {
		t.Errorf("logged %v, want the two failed writes", logged)
	}
}

// TestTasksKeepBytes: the ended tasks kept are bounded by their size as
// well as by their number, the oldest dropped first: a client sending
// large messages that are refused (nothing runs, nothing goes to disk)
// cannot have the server hold a thousand of them. The task that ended
// last is kept whatever its size; a task in flight is never dropped.
func TestTasksKeepBytes(t *testing.T) {
	ctx := context.Background()
	s := newTasks(1024, nil)
	s.keepBytes = 50_000
	big := func(id string, state a2a.TaskState) *a2a.Task {
		return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state},
			History: []*a2a.Message{{ID: "m-" + id, Role: a2a.MessageRoleUser, Parts: []a2a.Part{a2a.TextPart{Text: strings.Repeat("x", 20_000)}}}}}
	}
	if err := s.Save(ctx, big("live", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Save(ctx, big(fmt.Sprint("r", i), a2a.TaskStateRejected)); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string
	for _, id := range []string{"live", "r0", "r1", "r2", "r3", "r4"} {
		if _, err := s.Get(ctx, a2a.TaskID(id)); err == nil {
			kept = append(kept, id)
		}
	}
	if got := strings.Join(kept, " "); got != "live r3 r4" {
		t.Errorf("kept %s, want the task in flight and the last two ended", got)
	}
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	if held <= 0 || held > s.keepBytes {
		t.Errorf("held %d bytes, bound %d", held, s.keepBytes)
	}
	// Past the bound alone, the last is kept, and the one before it goes.
	s.keepBytes = 10
	if err := s.Save(ctx, big("r5", a2a.TaskStateRejected)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "r5"); err != nil {
		t.Errorf("the last task ended: %v", err)
	}
	if _, err := s.Get(ctx, "r4"); err == nil {
		t.Error("r4 is kept past the bound")
	}
	// The live task ends: it is counted, and the earlier ones go.
	if err := s.Save(ctx, big("live", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "r5"); err == nil {
		t.Error("r5 is kept past the bound once live ended")
	}
}

// TestTasksTextPartCost: a task's JSON text part is searched for the
// base64 of the agent's file inputs, as the task ends (and as each
// save keeps it in the directory), at the cost of its bytes: a text part
// is one string to the bound on a request's JSON values, so that it may
// hold a large structured input, and each save decoded its JSON into
// maps and slices, an allocation and hundreds of bytes a value, outside
// the bound on reading (a 4 MiB text part of empty objects made 1.4
// million allocations, 250 MB, a save; an agent that takes no file too).
func TestTasksTextPartCost(t *testing.T) {
	ctx := context.Background()
	text := `{"title":"x","j":[` + strings.Repeat(`{},`, (4<<20)/3) + `{}],"note":"THVuY2g="}`
	for _, files := range [][]string{nil, {"note"}} {
		s := newTasks(4, files)
		task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
			History: []*a2a.Message{{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.TextPart{Text: text}}}}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := s.Save(ctx, task); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// Counted in allocations: decoding makes one or more a value.
		if n := after.Mallocs - before.Mallocs; n > 10_000 {
			t.Errorf("files %v: saving an ended task of a %d-byte text part made %d allocations, %d MB", files, len(text), n, (after.TotalAlloc-before.TotalAlloc)>>20)
		}
		got, err := s.Get(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		kept := got.History[0].Parts[0].(a2a.TextPart).Text
		if dropped := strings.Contains(kept, droppedNote) && !strings.Contains(kept, "THVuY2g="); dropped != (files != nil) || !strings.Contains(kept, `"j":[{},{},`) {
			t.Errorf("files %v: the text part kept: %.100s ... %.100s", files, kept, kept[max(0, len(kept)-100):])
		}
	}
}
