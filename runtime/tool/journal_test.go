package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// refusing is a model that must not be asked: a replay serves every call.
type refusing struct{}

func (refusing) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, errors.New("the model was asked during a replay")
}

// nestedRun runs parent, whose tool "label" is an agent compiled into it,
// with its own model and the child's, journaled through jn.
func nestedRun(t *testing.T, parent *plan.Plan, model, childModel agentrt.Model, jn *agentrt.Journal) *agentrt.Report {
	t.Helper()
	e := env(nil)
	e.ModelFor = func(*plan.Plan) (agentrt.Model, error) { return childModel, nil }
	tools, closeTools, err := tool.Build(context.Background(), parent, e)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(parent, agentrt.Options{Model: model, Tools: tools, Journal: jn})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// newJournal creates a journal file for a record.
func newJournal(t *testing.T) (string, *journal.Writer) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: "blake3:" + strings.Repeat("0", 64), Run: "r", Agent: "triage", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return file, w
}

// TestNestedJournal: an agent called as a tool journals its own model
// calls under the key of the call that ran it, and a replay runs it again
// from the journal, with no model asked; a change inside the called agent
// is a divergence at its own effect.
func TestNestedJournal(t *testing.T) {
	file, w := newJournal(t)
	child := labeller(t)
	rec := nestedRun(t, caller(t, child), testmodel.Model{}, testmodel.Model{}, &agentrt.Journal{Writer: w})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != "ok" {
		t.Fatalf("record: %s %s", rec.Outcome, rec.Error)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range j.Entries {
		keys = append(keys, e.Key.String()+" "+e.Kind)
	}
	// The caller's model calls, and the child's under the call "1.1";
	// the agent call itself is not an effect.
	if got := strings.Join(keys, ", "); got != "1.0 model, 1.1/1.0 model, 2.0 model, 3.0 model" {
		t.Errorf("journal keys: %s", got)
	}

	rep := nestedRun(t, caller(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: j, Replay: true})
	if rep.Outcome != "ok" || string(rep.Answer) != string(rec.Answer) || rep.Usage != rec.Usage || rep.Replayed != 4 {
		t.Fatalf("replay: %s %s, answer %s (recorded %s), usage %+v (recorded %+v), replayed %d", rep.Outcome, rep.Error, rep.Answer, rec.Answer, rep.Usage, rec.Usage, rep.Replayed)
	}

	changed := child.Agent
	changed.Instructions = "Label it, carefully."
	rep = nestedRun(t, caller(t, sealed(t, changed, nil)), refusing{}, refusing{}, &agentrt.Journal{Recorded: j, Replay: true})
	d := rep.Divergence
	if d == nil || d.Effect != "1.1/1.0" || len(d.Changes) != 1 || !strings.HasPrefix(d.Changes[0], "/messages/0/content: ") {
		t.Fatalf("divergence %+v; want the child's first call, its instructions", d)
	}
}

// TestReplayLacksAndLeaves: an effect the journal lacks, and recorded
// effects a replay never reached, are divergences.
func TestReplayLacksAndLeaves(t *testing.T) {
	file, w := newJournal(t)
	child := labeller(t)
	nestedRun(t, caller(t, child), testmodel.Model{}, testmodel.Model{}, &agentrt.Journal{Writer: w})
	w.Close()
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	last := j.Entries[len(j.Entries)-1]
	short := *j
	short.Entries = j.Entries[:len(j.Entries)-1]
	data := encode(t, &short)
	cut, err := journal.Read(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rep := nestedRun(t, caller(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: cut, Replay: true})
	if d := rep.Divergence; d == nil || d.Effect != last.Key.String() || !strings.Contains(d.Reason, "the journal lacks effect 3.0 (model call)") {
		t.Errorf("divergence %+v", rep.Divergence)
	}

	// A journal with an effect more than the run makes.
	extra := *j
	extra.Entries = append(append([]journal.Entry(nil), j.Entries...), journal.Entry{Key: journal.Key{Round: 9}, Kind: journal.KindModel,
		Request: json.RawMessage(`{"model":"x"}`), Response: json.RawMessage(`{}`), Started: time.Now()})
	more, err := journal.Read(strings.NewReader(encode(t, &extra)))
	if err != nil {
		t.Fatal(err)
	}
	rep = nestedRun(t, caller(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: more, Replay: true})
	if d := rep.Divergence; d == nil || !strings.Contains(d.Reason, "without reaching 1 recorded effect") || len(d.Changes) != 1 || d.Changes[0] != "9.0 (model call)" {
		t.Errorf("divergence %+v", rep.Divergence)
	}
}

// encode writes a journal's header and entries to a new file and returns
// its text.
func encode(t *testing.T, j *journal.Journal) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "j.jsonl")
	w, err := journal.Create(file, j.Header)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range j.Entries {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, err := readFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}

// blocking waits for its context to end: a model that outlives a deadline.
type blocking struct{}

func (blocking) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// late answers, as m does, once the run's deadline has passed: its call
// ends after the deadline, and the next effect finds it passed.
type late struct{ m agentrt.Model }

func (l late) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	<-ctx.Done()
	return l.m.Complete(context.Background(), req)
}

// TestNestedDeadlineBeforeCallReplayed: the caller's deadline passing
// before a called agent's first model call ends the called run between
// effects, and its replay ends in the same words: the tool's result, and
// with it the caller's next request, are the ones recorded. The replay
// said "during a model call" where the run had said "before an answer",
// and diverged; TestNestedDeadlineReplayed did so, now and then, on a
// loaded machine.
func TestNestedDeadlineBeforeCallReplayed(t *testing.T) {
	child, rec, j := recordNestedDeadline(t, late{testmodel.Model{}})
	said := ""
	for _, e := range j.Entries {
		if e.Key.String() == "1.1/1.0" {
			said = e.Error
		}
	}
	if !strings.Contains(said, "passed before the call") {
		t.Fatalf("the called agent's model call was journaled as %q, want a deadline passed before it", said)
	}
	rep := nestedRun(t, unhurried(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: j, Replay: true})
	if rep.Divergence != nil || rep.Bound != agentrt.BoundDeadline || rep.Error != rec.Error {
		t.Fatalf("replay: %s %s %q (recorded %q), divergence %+v", rep.Outcome, rep.Bound, rep.Error, rec.Error, rep.Divergence)
	}
}

// TestNestedDeadlineReplayed: the caller's deadline passing while a called
// agent waits on its model is journaled as the called agent's deadline, not
// an interrupt, so a replay ends the same way.
func TestNestedDeadlineReplayed(t *testing.T) {
	child, _, j := recordNestedDeadline(t, testmodel.Model{})
	rep := nestedRun(t, unhurried(t, child), refusing{}, refusing{}, &agentrt.Journal{Recorded: j, Replay: true})
	if rep.Divergence != nil || rep.Bound != agentrt.BoundDeadline {
		t.Fatalf("replay: %s %s %s, divergence %+v", rep.Outcome, rep.Bound, rep.Error, rep.Divergence)
	}
}

// recordNestedDeadline records a caller whose 100ms deadline passes while
// its called agent (whose model blocks) runs, the caller's model being
// model, and returns the called agent, the record and its journal.
func recordNestedDeadline(t *testing.T, model agentrt.Model) (*plan.Plan, *agentrt.Report, *journal.Journal) {
	t.Helper()
	child := labeller(t)
	a := triage()
	a.Budgets.Deadline = "100ms"
	parent := sealed(t, a, caller(t, child).Callees)
	file, w := newJournal(t)
	rec := nestedRun(t, parent, model, blocking{}, &agentrt.Journal{Writer: w})
	w.Close()
	if rec.Bound != agentrt.BoundDeadline || rec.Interrupted {
		t.Fatalf("record: %s %s %s, interrupted %v", rec.Outcome, rec.Bound, rec.Error, rec.Interrupted)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	return child, rec, j
}

// unhurried is the caller of the deadline tests with a deadline its replay
// cannot reach: the replay ends where the journal says, not where a loaded
// machine's clock passes 100ms (before it reached the recorded effects).
func unhurried(t *testing.T, child *plan.Plan) *plan.Plan {
	a := triage()
	a.Budgets.Deadline = "10m"
	return sealed(t, a, caller(t, child).Callees)
}
