package temporal

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

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
// first, under the item's ID, with the test model in place of the plan's,
// is that item's error, not its report; the batch's other items run.
func TestBatchItemForeign(t *testing.T) {
	c, w, _, _, data := labelWorker(t)
	poll(t, c, w, "foreign")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lines := []string{`{"n": 0}`, `{"n": 1}`}
	id := ItemID("nightly", 0, []byte(lines[0]))
	if _, _, err := Submit(ctx, c, data, RunInput{Provider: "test", Input: []byte(`{"n": 7}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: id}); err != nil {
		t.Fatal(err)
	}
	b, err := SubmitBatch(ctx, c, data, BatchSpec{ID: "nightly", Parallel: 2,
		Items: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(strings.Join(lines, "\n"))), nil }},
		SubmitOptions{TaskQueue: "foreign"})
	if err != nil {
		t.Fatal(err)
	}
	run := b.RunFunc()
	rep, err := run(ctx, 0, 1, []byte(lines[0]))
	if want := "run " + id + ` reports provider "test" answering, and this run asked for "openai"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the item whose run another client started: %v, %+v; want %q", err, rep, want)
	}
	if rep, err := run(ctx, 1, 2, []byte(lines[1])); err != nil || rep.Outcome != agentrt.OutcomeOK || rep.Provider != "openai" {
		t.Errorf("the batch's other item: %v %+v", err, rep)
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
