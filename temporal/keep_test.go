package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"agentc.dev/agentc/digest"
	agentrt "agentc.dev/agentc/runtime"
)

// TestWorkerKeepsBounded: what a worker keeps of the runs it serves is
// bounded, whatever its clients start. Runs naming new seeds and carrying
// large inputs leave at most maxRuns runs kept, none of them holding its
// input or its plan's text, one plan for them all, and the agent's tools
// (an mcp server each, for a plan that has one) built once for all the
// seeds, while each seed gets its own model.
func TestWorkerKeepsBounded(t *testing.T) {
	defer func(r, b int) { maxRuns, maxBuilt = r, b }(maxRuns, maxBuilt)
	maxRuns, maxBuilt = 3, 3

	c := devClient(t)
	p, data := labelPlan(t)
	m := &answering{calls: map[string]int{}}
	var mu sync.Mutex
	seeds := map[int64]int{}
	w, err := NewWorker(c, WorkerOptions{ModelFor: func(mc ModelCall) (agentrt.Model, error) {
		mu.Lock()
		seeds[mc.Seed]++
		mu.Unlock()
		return m, nil
	}, Allowed: []digest.Digest{p.Digests.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tw := worker.New(c, "keep", Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	defer tw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const runs = 8
	big := strings.Repeat("x", 256<<10)
	for i := range runs {
		input := json.RawMessage(fmt.Sprintf(`{"n":%d,"text":%q}`, i, big))
		rep, _, err := Submit(ctx, c, data, RunInput{Input: input, Provider: "test", Seed: int64(i + 1)}, SubmitOptions{TaskQueue: "keep"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome != agentrt.OutcomeOK {
			t.Fatalf("run %d: %s %s", i, rep.Outcome, rep.Error)
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.runs) > maxRuns || len(w.built) > maxBuilt || len(w.plans) != 1 || len(w.tools) != 1 {
		t.Errorf("kept %d runs (at most %d), %d models (at most %d), %d plans, %d tool sets; want one plan and one tool set",
			len(w.runs), maxRuns, len(w.built), maxBuilt, len(w.plans), len(w.tools))
	}
	for id, r := range w.runs {
		if r.plan != w.plans[p.Digests.Plan] {
			t.Errorf("run %q keeps a plan of its own", id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range runs {
		if seeds[int64(i+1)] == 0 {
			t.Errorf("no model was made for seed %d", i+1)
		}
	}
}
