package temporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/temporal"
)

// BenchmarkRunLocal and BenchmarkRunTemporal run one plan (a model call,
// a tool call — an exec of echo — and the answer) against a model that
// answers at once, in process and on a Temporal dev server with one
// worker in the same process: the difference is what Temporal adds to a
// run (a workflow, three activities and their round trips).
func BenchmarkRunLocal(b *testing.B) {
	data := labeller(b, labelSchema)
	p, err := plan.Read("plan", data)
	if err != nil {
		b.Fatal(err)
	}
	m := &counting{calls: map[string]int{}}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(p, agentrt.Options{Model: m, Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := r.Run(context.Background(), nil)
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

func BenchmarkRunTemporal(b *testing.B) {
	s := devserver.Start(b)
	c := dial(b, s)
	data := labeller(b, labelSchema)
	startWorker(b, c, "bench", &counting{calls: map[string]int{}}, data)
	b.ReportAllocs()
	for b.Loop() {
		rep, _, err := temporal.Submit(context.Background(), c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "bench"})
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// BenchmarkRoundTrips measures what the dev server costs a workflow of
// nothing but n activities that do nothing, started and served the way
// agentc's runs are (eager start, a worker in this process, agentc's
// worker options): the difference between n=3 and n=0, over 3, is one
// round trip an effect, the unit of the Temporal goal beside
// BenchmarkRunTemporal (whose plan makes 3 effects).
func BenchmarkRoundTrips(b *testing.B) {
	s := devserver.Start(b)
	c := dial(b, s)
	noop := func(context.Context, int) (int, error) { return 0, nil }
	chain := func(ctx workflow.Context, n int) (int, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		for i := range n {
			if err := workflow.ExecuteActivity(ctx, "noop", i).Get(ctx, nil); err != nil {
				return i, err
			}
		}
		return n, nil
	}
	w := worker.New(c, "roundtrips", temporal.Options())
	w.RegisterWorkflowWithOptions(chain, workflow.RegisterOptions{Name: "chain"})
	w.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "noop"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("activities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: "roundtrips", EnableEagerStart: true}, "chain", n)
				if err != nil {
					b.Fatal(err)
				}
				var got int
				if err := run.Get(context.Background(), &got); err != nil || got != n {
					b.Fatalf("%d activities ran, want %d: %v", got, n, err)
				}
			}
		})
	}
}
