package batch

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// Journals keeps one journal per item of a batch in a directory, named by
// the item's index and the digest of its input (blake3 of its canonical
// JSON, 16 hex digits): 000042-1a2b3c4d5e6f7a8b.jsonl. Recording, an
// item whose journal exists is resumed: a finished item is served whole
// from it, with no call made; an interrupted one goes on live where its
// journal ends. An item whose input changed (its index has a journal
// under another digest) runs afresh, and the old journal is kept. In a
// replay every item is served from its journal, and an item without one
// diverges.
type Journals struct {
	Dir    string
	Replay bool
	// Header is each new journal's header; the batch sets Run and
	// Started. Its Plan is compared with each resumed journal's.
	Header journal.Header

	lock    *journal.Lock    // the directory's, while recording
	byIndex map[int][]string // the journals found at the start
	planMsg sync.Once
}

// lockName is the name, in the directory, of the journal whose lock
// excludes a second batch: no journal is ever written under it.
const lockName = "batch"

// Open takes the directory's lock (recording), creating the directory if
// need be, and lists the journals it holds; a second batch recording the
// directory is refused at once. Run opens the journals itself when the
// host has not; Close releases the lock.
func (j *Journals) Open() error {
	if j.byIndex != nil {
		return nil
	}
	if !j.Replay {
		if err := os.MkdirAll(j.Dir, 0o755); err != nil {
			return fmt.Errorf("the batch's journal directory: %w", err)
		}
		if err := notLinked(filepath.Join(j.Dir, lockName)); err != nil {
			return err
		}
		l, err := journal.Acquire(filepath.Join(j.Dir, lockName))
		var le *journal.LockedError
		if errors.As(err, &le) {
			who := "another process"
			if le.PID > 0 {
				who = "process " + strconv.Itoa(le.PID)
			}
			return fmt.Errorf("the batch's journal directory %s is being recorded by %s", j.Dir, who)
		}
		if err != nil {
			return err
		}
		j.lock = l
	}
	entries, err := os.ReadDir(j.Dir)
	if err != nil {
		j.Close()
		return fmt.Errorf("the batch's journal directory: %w", err)
	}
	j.byIndex = map[int][]string{}
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(name, "-")
		if !ok || !strings.HasSuffix(rest, ".jsonl") {
			continue
		}
		if i, err := strconv.Atoi(num); err == nil {
			j.byIndex[i] = append(j.byIndex[i], name)
		}
	}
	return nil
}

// Close releases the directory's lock.
func (j *Journals) Close() {
	if j.lock != nil {
		_ = j.lock.Release()
		j.lock = nil
	}
	j.byIndex = nil
}

// name is an item's journal's file name. An item line naming a model is
// named by its input and its model together: the same input run against
// another model is another run.
func name(it item) (string, error) {
	v := it.input
	if it.model != "" {
		m, err := json.Marshal(it.model)
		if err != nil {
			return "", err
		}
		v = slices.Concat([]byte(`{"input":`), it.input, []byte(`,"model":`), m, []byte(`}`))
	}
	d, err := journal.ValueDigest(v)
	if err != nil {
		return "", err
	}
	_, hexd, _ := strings.Cut(d, ":")
	return fmt.Sprintf("%06d-%s.jsonl", it.index, hexd[:16]), nil
}

// notLinked refuses a name in the batch's directory that is a symbolic
// link: the journals there, and the lock's, are agentc's own files, and
// whoever else can write the directory must not lead their writing
// elsewhere (a journal made, or a lock file taken, where a link leads).
func notLinked(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("the batch's journal directory holds %s, a symbolic link, which agentc does not follow there: remove it", path)
	}
	return nil
}

// itemJournal is the journal of one item's run.
type itemJournal struct {
	rt    *agentrt.Journal
	lock  *journal.Lock // recording
	path  string
	fresh bool
}

func (ij *itemJournal) runtime() *agentrt.Journal {
	if ij == nil {
		return nil
	}
	return ij.rt
}

// item opens an item's journal: created, resumed or, in a replay, read;
// p is the plan the item runs. An item a replay has no journal for gets
// an empty one, and missing says why: its input may still fail before
// any call, and a call is a divergence.
func (j *Journals) item(it item, p *plan.Plan, notes func(string)) (ij *itemJournal, missing string, err error) {
	file, err := name(it)
	if err != nil {
		return nil, "", err
	}
	ij = &itemJournal{path: filepath.Join(j.Dir, file)}
	if err := notLinked(ij.path); err != nil {
		return nil, "", err
	}
	other := ""
	for _, n := range j.byIndex[it.index] {
		if n != file {
			other = filepath.Join(j.Dir, n)
		}
	}
	if j.Replay {
		rec, err := journal.OpenShared(ij.path)
		if errors.Is(err, fs.ErrNotExist) {
			why := "it was never recorded"
			if other != "" {
				why = "its " + it.what() + " changed since " + other + " was recorded"
			}
			ij.rt = &agentrt.Journal{Replay: true}
			return ij, fmt.Sprintf("item %d (line %d) has no journal in %s: %s", it.index, it.line, j.Dir, why), nil
		}
		if err != nil {
			return nil, "", err
		}
		j.checkPlan(rec, p, notes)
		ij.rt = &agentrt.Journal{Recorded: rec, Replay: true}
		return ij, "", nil
	}
	if ij.lock, err = journal.Acquire(ij.path); err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(ij.path); errors.Is(err, fs.ErrNotExist) {
		if other != "" {
			say(notes, "item %d (line %d): its %s changed since %s was recorded: it runs afresh, and that journal is kept", it.index, it.line, it.what(), other)
		}
		h := j.Header
		if p != nil && h.Plan != "" && string(p.Digests.Plan) != h.Plan {
			// An item line's own model: its own plan.
			h.Plan, h.OutputSuffix = string(p.Digests.Plan), p.OutputSuffix()
		}
		h.Run, h.Started = runID(), time.Now().UTC()
		w, err := ij.lock.Create(h)
		if err != nil {
			_ = ij.lock.Release()
			return nil, "", err
		}
		ij.rt, ij.fresh = &agentrt.Journal{Writer: w}, true
		return ij, "", nil
	}
	rec, w, err := ij.lock.Resume()
	if err != nil {
		_ = ij.lock.Release()
		return nil, "", err
	}
	if rec.Truncated {
		say(notes, "%s: %s", ij.path, rec.CutShort())
	}
	j.checkPlan(rec, p, notes)
	ij.rt = &agentrt.Journal{Recorded: rec, Writer: w}
	return ij, "", nil
}

// checkPlan says, once a batch, that its journals were recorded with
// another plan than p, the item's (nil: the batch's own).
func (j *Journals) checkPlan(rec *journal.Journal, p *plan.Plan, notes func(string)) {
	now := j.Header.Plan
	if p != nil && now != "" {
		now = string(p.Digests.Plan)
	}
	if rec.Header.Plan == now || now == "" {
		return
	}
	j.planMsg.Do(func() {
		say(notes, "the plan changed since %s's journals were recorded (plan %s then, %s now); each call is compared with its record", j.Dir, rec.Header.Plan, now)
	})
}

// close closes an item's journal; a new one whose run never started (its
// input failed the input schema) is removed.
func (ij *itemJournal) close(notRun bool, notes func(string)) {
	if ij == nil || ij.lock == nil {
		return
	}
	if w := ij.rt.Writer; w != nil {
		if err := w.Close(); err != nil {
			say(notes, "closing %s: %v", ij.path, err)
		}
	}
	if ij.fresh && notRun {
		_ = os.Remove(ij.path)
	}
	if err := ij.lock.Release(); err != nil {
		say(notes, "%v", err)
	}
}

func say(notes func(string), format string, args ...any) {
	if notes != nil {
		notes(fmt.Sprintf(format, args...))
	}
}

func runID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// FirstHeader returns the header of the first journal, by item, that the
// opened directory holds and that reads, or nil when none does: the items
// of a batch share their tools, so any item's header records the tool
// sets (an mcp server's) a replay offers. A journal that does not read is
// passed over here (the item it belongs to fails on it, alone, when it
// runs), and the order is the items', so that the header read does not
// change from one run of the batch to the next.
func (j *Journals) FirstHeader() (*journal.Header, error) {
	for _, i := range slices.Sorted(maps.Keys(j.byIndex)) {
		for _, name := range j.byIndex[i] {
			if rec, err := journal.OpenShared(filepath.Join(j.Dir, name)); err == nil {
				return &rec.Header, nil
			}
		}
	}
	return nil, nil
}
