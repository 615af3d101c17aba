package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/devserver"
	agentrt "agentc.dev/agentc/runtime"
)

// TestForeignReports: a client prints only the report of the run it
// submitted. A run under a workflow ID taken by a run still going is
// refused, naming the ID; and a report of another provider, or another
// plan, than the one submitted is an error, not the run's report, should
// the workflow waited for be some other client's.
func TestForeignReports(t *testing.T) {
	s := devserver.Start(t)
	c, err := Dial(context.Background(), s.HostPort, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := &answering{calls: map[string]int{}}
	p, data := labelPlan(t)
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(ModelCall) (agentrt.Model, error) { return m, nil },
		Allowed: []digest.Digest{p.Digests.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// No worker yet: the first run stays going.
	if _, err := Start(ctx, c, data, RunInput{Provider: "test", Input: []byte(`{"n": 1}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: "taken"}); err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, c, data, RunInput{Input: []byte(`{"n": 2}`)}, SubmitOptions{TaskQueue: "foreign", WorkflowID: "taken"})
	if want := "workflow taken is already running: the run was not submitted"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a run under a workflow ID a run going holds: %v; want %q", err, want)
	}

	tw := worker.New(c, "foreign", Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	defer tw.Stop()
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
