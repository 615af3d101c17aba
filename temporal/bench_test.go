package temporal_test

import (
	"context"
	"testing"

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
