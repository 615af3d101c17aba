package temporal

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	agentrt "agentc.dev/agentc/runtime"
)

// TestForeignReports: a client prints only the report of the run it
// submitted. A run under a workflow ID taken by a run still going is
// refused, naming the ID; and a report of another provider, or another
// plan, than the one submitted is an error, not the run's report, should
// the workflow waited for be some other client's.
func TestForeignReports(t *testing.T) {
	c, w, _, p, data := labelWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// No worker yet: the first run stays going.
	if _, err := Start(ctx, c, data, RunInput{Provider: "test", Input: []byte(`{"n": 1}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: "taken"}); err != nil {
		t.Fatal(err)
	}
	_, err := Start(ctx, c, data, RunInput{Input: []byte(`{"n": 2}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: "taken"})
	if want := "workflow taken is already running: the run was not submitted"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a run under a workflow ID a run going holds: %v; want %q", err, want)
	}

	poll(t, c, w, "foreign")
	// The run going is the test model's, for another input: waited for as
	// a run of the plan's own provider, or of another plan, its report is
	// refused.
	for _, c2 := range []struct {
		what             string
		digest, provider string
		want             string
	}{
		{"another provider", string(p.Digests.Plan), "openai", `run taken reports provider "test" answering, and this run asked for "openai"`},
		{"another plan", "blake3:" + strings.Repeat("0", 64), "test", "run taken reports plan " + string(p.Digests.Plan) + ", and this is plan blake3:000"},
	} {
		rep, err := Wait(ctx, c, &submitted{WorkflowRun: c.GetWorkflow(ctx, "taken", ""), digest: c2.digest, provider: c2.provider})
		if err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s: %v, %+v; want %q", c2.what, err, rep, c2.want)
		}
	}
	// Its own client gets it.
	rep, err := Wait(ctx, c, &submitted{WorkflowRun: c.GetWorkflow(ctx, "taken", ""), digest: string(p.Digests.Plan), provider: "test"})
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Errorf("the run's own report: %v %+v", err, rep)
	}
}

// TestBatchItemForeign: a batch's item whose run another client started
// first, under the item's ID, is that item's error, not its report: a run
// not started by the batch (the test model answering another input), one
// that names the batch and runs its plan for another input, or the
// batch's input with another provider. The batch's other items run.
func TestBatchItemForeign(t *testing.T) {
	c, w, _, p, data := labelWorker(t)
	poll(t, c, w, "foreign")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lines := []string{`{"n": 0}`, `{"n": 1}`, `{"n": 2}`, `{"n": 3}`}
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = ItemID("nightly", i, []byte(l))
	}
	if _, _, err := Submit(ctx, c, data, RunInput{Provider: "test", Input: []byte(`{"n": 7}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	// The batch started first by the other client too, as this one would
	// start it (so this one joins it), and runs under the IDs of items 1
	// and 2 that name it: they run the batch's plan.
	br, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "nightly", TaskQueue: "foreign"}, BatchWorkflow,
		BatchInput{Run: RunInput{Plan: data, Digest: string(p.Digests.Plan)}, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	ref := &BatchRef{Workflow: "nightly", Run: br.GetRunID()}
	for i, in := range map[int]RunInput{
		1: {Batch: ref, Digest: string(p.Digests.Plan), Input: []byte(`{"n": 7}`)},
		2: {Batch: ref, Digest: string(p.Digests.Plan), Input: []byte(lines[2]), Provider: "test"},
	} {
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: "foreign"}, Workflow, in); err != nil {
			t.Fatal(err)
		}
	}
	b, err := SubmitBatch(ctx, c, data, BatchSpec{ID: "nightly", Parallel: 2,
		Items: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(strings.Join(lines, "\n"))), nil }},
		SubmitOptions{TaskQueue: "foreign"})
	if err != nil {
		t.Fatal(err)
	}
	run := b.RunFunc()
	for i, want := range []string{
		"it was not started by batch nightly",
		"it runs with another input",
		`it runs with provider "test", and the batch's is the plan's own`,
	} {
		rep, err := run(ctx, i, i+1, []byte(lines[i]))
		if want = "run " + ids[i] + " is not this batch's run of item " + ids[i][len("nightly/"):] + ": " + want; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("item %d, whose run another client started: %v, %+v; want %q", i, err, rep, want)
		}
	}
	if rep, err := run(ctx, 3, 4, []byte(lines[3])); err != nil || rep.Outcome != agentrt.OutcomeOK || rep.Provider != "openai" {
		t.Errorf("the batch's own item: %v %+v", err, rep)
	}
	if _, err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestJoinable: a batch going is joined only by a batch of the same plan,
// provider, seed, budgets and pool; what differs is named.
func TestJoinable(t *testing.T) {
	two := 2
	ours := BatchInput{Run: RunInput{Digest: "blake3:aa"}, Parallel: 4, PoolTokens: 1000}
	for _, c := range []struct {
		what string
		edit func(*BatchInput)
		want string
	}{
		{"the same", func(*BatchInput) {}, ""},
		{"another parallel", func(in *BatchInput) { in.Parallel = 1 }, ""},
		{"what it holds", func(in *BatchInput) { in.State = &BatchState{Started: 3} }, ""},
		{"plan", func(in *BatchInput) { in.Run.Digest = "blake3:bb" }, "is going with plan blake3:bb, and this batch's is blake3:aa"},
		{"provider", func(in *BatchInput) { in.Run.Provider = "test" }, `is going with provider "test", and this batch's is the plan's own`},
		{"seed", func(in *BatchInput) { in.Run.Seed = 3 }, "is going with seed 3, and this batch's is 0"},
		{"budgets", func(in *BatchInput) { in.Run.Budgets.Tools = &two }, `is going with budgets {"tools":2}, and this batch's is {}`},
		{"run pool", func(in *BatchInput) { in.Run.Pool = "elsewhere" }, `is going with run pool "elsewhere"`},
		{"pool tokens", func(in *BatchInput) { in.PoolTokens = 0 }, "is going with pool tokens 0, and this batch's is 1000"},
	} {
		got := ours
		c.edit(&got)
		err := joinable("nightly", got, ours)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want it joined", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "batch nightly "+c.want)):
			t.Errorf("%s: %v; want %q", c.what, err, c.want)
		}
	}
}
