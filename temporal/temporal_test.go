package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/temporal"
)

const labelSchema = `{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"],"additionalProperties":false}`

// labeller is a plan whose agent looks a file up with a tool, then
// labels the issue.
func labeller(t testing.TB, schema string) []byte {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "label",
		Model:        plan.Model{Provider: "openai", Name: "m1"},
		Instructions: "Label the issue.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"search": {Kind: "exec", Description: "Search.", Approve: plan.ApproveNever,
			Argv: []string{"echo", "found {{.q}}"}, Timeout: "10s", MaxBytes: 4096,
			Input: &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}}}},
		Output: &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(schema),
			Mode: "auto", Enforce: "local", Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
		Budgets:  plan.Budgets{Deadline: "5m"},
	}}
	return encoded(t, p)
}

// counting is a model that searches once, then answers, and counts the
// requests it is sent by their last message, so that a call made twice
// shows.
type counting struct {
	mu    sync.Mutex
	calls map[string]int
	// hold, when set, blocks each call until it is closed or the call's
	// context ends.
	hold chan struct{}
}

func (m *counting) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	m.mu.Lock()
	m.calls[fmt.Sprintf("%d:%s", len(req.Messages), last.Content)]++
	m.mu.Unlock()
	if m.hold != nil {
		select {
		case <-m.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if len(req.Messages) == 2 {
		return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"disk"}`)}}},
			Usage: agentrt.Usage{Input: 20, Output: 5}}, nil
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}},
		Usage: agentrt.Usage{Input: 40, Output: 5}}, nil
}

func (m *counting) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		n += c
	}
	return n
}

// digests returns the plan digests of plan files, as a worker's
// operator allows them.
func digests(t testing.TB, plans ...[]byte) []digest.Digest {
	t.Helper()
	var out []digest.Digest
	for _, data := range plans {
		p, err := plan.Read("plan", data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Digests.Plan)
	}
	return out
}

// startWorker runs a worker on queue whose model is m, which runs the
// plans given.
func startWorker(t testing.TB, c client.Client, queue string, m agentrt.Model, allowed ...[]byte) worker.Worker {
	t.Helper()
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{
		ModelFor: func(temporal.ModelCall) (agentrt.Model, error) { return m, nil },
		Dir:      t.TempDir(),
		Secrets:  []string{"sk-worker-secret"},
		Allowed:  digests(t, allowed...),
	})
	if err != nil {
		t.Fatal(err)
	}
	// The dev server has agentc's search attributes: the worker's runs
	// set them.
	if missing, err := w.CheckSearchAttributes(context.Background(), "default"); err != nil || len(missing) > 0 {
		t.Fatalf("the dev server's search attributes: %v missing (%v)", missing, err)
	}
	return serveQueue(t, c, queue, w)
}

// serveQueue starts w on queue, until the test ends.
func serveQueue(t testing.TB, c client.Client, queue string, w *temporal.Worker) worker.Worker {
	t.Helper()
	tw := worker.New(c, queue, temporal.Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tw.Stop()
		w.Close()
	})
	return tw
}

// encoded is p sealed (its digests computed) and encoded, as a plan file
// holds it.
func encoded(t testing.TB, p *plan.Plan) []byte {
	t.Helper()
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func dial(t testing.TB, s *devserver.Server) client.Client {
	t.Helper()
	c, err := temporal.Dial(context.Background(), s.HostPort, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRun: a run on Temporal answers as a local run does; every effect
// is an activity made once; its history is deterministic workflow code
// (the SDK's replayer replays it); and exported, it is a journal a local
// replay serves, which diverges once the output schema changes.
func TestRun(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	m := &counting{calls: map[string]int{}}
	data := labeller(t, labelSchema)
	startWorker(t, c, "run", m, data)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, id, err := temporal.Submit(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"bug"}` || len(rep.Rounds) != 2 || rep.Usage.Total() != 70 {
		t.Fatalf("report: %s %s %s, %d rounds, %d tokens", rep.Outcome, rep.Bound, rep.Answer, len(rep.Rounds), rep.Usage.Total())
	}
	if got := rep.Rounds[0].ToolCalls[0].Result; !strings.Contains(got, "found disk") {
		t.Errorf("the tool's result: %q", got)
	}
	if m.total() != 2 {
		t.Errorf("%d model calls, want 2: %v", m.total(), m.calls)
	}

	// The history replays as workflow code: the run loop is deterministic.
	replayer := worker.NewWorkflowReplayer()
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: func(temporal.ModelCall) (agentrt.Model, error) { return m, nil }, Allowed: digests(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	w.RegisterWorkflow(replayer)
	if err := replayer.ReplayWorkflowExecution(ctx, c.WorkflowService(), nil, "default", workflow.Execution{ID: id}); err != nil {
		t.Errorf("replaying the history: %v", err)
	}

	// Exported, the history is a journal.
	h, entries, err := temporal.Export(ctx, c, id, "", func(n string) { t.Errorf("a note on a run whose calls each took one attempt: %s", n) })
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || h.Run != id || h.Agent != "label" {
		t.Fatalf("export: run %s agent %s, %d entries; want 3", h.Run, h.Agent, len(entries))
	}
	file := filepath.Join(t.TempDir(), "run.jsonl")
	jw, err := journal.Create(file, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := jw.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	again := replayLocally(t, data, file)
	if again.Divergence != nil || again.Outcome != agentrt.OutcomeOK || string(again.Answer) != `{"label":"bug"}` || again.Replayed != 3 {
		t.Errorf("local replay: %s %s, divergence %v, %d replayed", again.Outcome, again.Answer, again.Divergence, again.Replayed)
	}
	changed := replayLocally(t, labeller(t, strings.Replace(labelSchema, `"feature"`, `"feature","question"`, 1)), file)
	if changed.Divergence == nil {
		t.Errorf("a replay with the output schema changed did not diverge: %s %s", changed.Outcome, changed.Answer)
	}
}

func replayLocally(t *testing.T, data []byte, file string) *agentrt.Report {
	t.Helper()
	p, err := plan.Read("plan", data)
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	tools, closeTools, err := tool.Build(context.Background(), p, tool.Env{BaseDir: t.TempDir(), Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(p, agentrt.Options{Model: refusing{}, Tools: tools, Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// refusing is the model of a replay: the journal serves every call.
type refusing struct{}

func (refusing) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, fmt.Errorf("a replay makes no model call")
}

// TestWorkerRefuses: a worker runs only a plan it can read whose digest
// is the one the run was submitted for; anything else ends the workflow
// at once with a failure that says why, never retried.
func TestWorkerRefuses(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	good := labeller(t, labelSchema)
	startWorker(t, c, "refuse", &counting{calls: map[string]int{}}, good)
	p, err := plan.Read("plan", good)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	doc["format"] = "agentc.plan/v99"
	future, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	other := labeller(t, strings.Replace(labelSchema, `"feature"`, `"feature","question"`, 1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c2 := range []struct {
		name string
		in   temporal.RunInput
		want string
	}{
		{"unknown format", temporal.RunInput{Plan: future, Digest: string(p.Digests.Plan)}, "agentc.plan/v99"},
		{"other digest", temporal.RunInput{Plan: other, Digest: string(p.Digests.Plan)}, "but the run was submitted for " + string(p.Digests.Plan)},
		{"bad deadline", temporal.RunInput{Plan: good, Digest: string(p.Digests.Plan), Budgets: temporal.Budgets{Deadline: "soon"}}, "budgets.deadline"},
	} {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "refuse"}, temporal.Workflow, c2.in)
		if err != nil {
			t.Fatal(err)
		}
		var rep agentrt.Report
		err = run.Get(ctx, &rep)
		if err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s: %v; want an error that says %q", c2.name, err, c2.want)
		}
	}
}

// TestWorkerBuildTriedAgain: a worker that could not build a plan's agent
// (its provider could not get credentials, say) fails that run, and
// builds again for the next, rather than fail every run of the plan for
// the worker's life.
func TestWorkerBuildTriedAgain(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	m := &counting{calls: map[string]int{}}
	data := labeller(t, labelSchema)
	var mu sync.Mutex
	builds := 0
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{
		ModelFor: func(temporal.ModelCall) (agentrt.Model, error) {
			mu.Lock()
			defer mu.Unlock()
			if builds++; builds == 1 {
				return nil, errors.New("could not get AWS credentials: the token service timed out")
			}
			return m, nil
		},
		Dir:     t.TempDir(),
		Allowed: digests(t, data),
	})
	if err != nil {
		t.Fatal(err)
	}
	serveQueue(t, c, "rebuild", w)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, _, err := temporal.Submit(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "rebuild"})
	if err == nil && (rep.Outcome != agentrt.OutcomeError || !strings.Contains(rep.Error, "the token service timed out")) {
		t.Fatalf("the first run: %s %q, want the build's failure", rep.Outcome, rep.Error)
	}
	if err != nil && !strings.Contains(err.Error(), "the token service timed out") {
		t.Fatalf("the first run: %v, want the build's failure", err)
	}
	rep, _, err = temporal.Submit(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "rebuild"})
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the second run: %v %+v, want it built again and ok", err, rep)
	}
}
