package temporal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"agentc.dev/agentc/internal/devserver"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/temporal"
)

// workerSecret is the secret the operators test's worker holds, which no
// history may show.
const workerSecret = "sk-worker-secret-0123456789"

// answering is a model that answers at once with label, whatever it is
// asked: a label outside the contract fails the run once the retries are
// spent.
type answering struct{ label string }

func (m answering) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	args, _ := json.Marshal(map[string]string{"label": m.label})
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: args}}},
		Usage: agentrt.Usage{Input: 10, Output: 2}}, nil
}

// TestOperatorsFindRuns: what an operator reads of runs on Temporal. A
// run that succeeds completes; one a bound ended, or whose answer broke
// its contract, fails, never retried, with an ApplicationError whose type
// is the bound or outcome and whose details are the report, while the
// client still gets the report. temporal workflow list finds the failed
// runs by status and agentc's search attributes; each call's activity is
// typed by its kind; the plan in the history is a JSON object; no
// history holds the worker's secret, which the failing model answers
// with; a failed run's history replays and exports as a journal. A
// namespace lacking one of the search attributes fails no run: the
// worker leaves it out.
func TestOperatorsFindRuns(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := labeller(t, labelSchema)
	p, err := plan.Read("plan", data)
	if err != nil {
		t.Fatal(err)
	}
	// Seed 1 is the model that answers with the secret, which is no label.
	models := func(c temporal.ModelCall) (agentrt.Model, error) {
		seed := c.Seed
		if seed == 1 {
			return answering{label: workerSecret}, nil
		}
		return &counting{calls: map[string]int{}}, nil
	}
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: models, Dir: t.TempDir(), Secrets: []string{workerSecret}, Allowed: digests(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if missing, err := w.CheckSearchAttributes(ctx, "default"); err != nil || len(missing) > 0 {
		t.Fatalf("the dev server's search attributes: %v missing (%v)", missing, err)
	}
	serveQueue(t, c, "ops", w)

	zero := 0
	runs := []struct {
		id      string
		in      temporal.RunInput
		outcome string
		bound   string
		typ     string // of the failure; "" for a run that succeeds
	}{
		{"ops-ok", temporal.RunInput{}, agentrt.OutcomeOK, agentrt.BoundNone, ""},
		{"ops-budget", temporal.RunInput{Budgets: temporal.Budgets{Tools: &zero}}, agentrt.OutcomeError, agentrt.BoundToolBudget, "agentc.bound.tool_budget"},
		{"ops-contract", temporal.RunInput{Seed: 1}, agentrt.OutcomeError, agentrt.BoundNone, "agentc.outcome.error"},
	}
	for _, r := range runs {
		run, err := temporal.Start(ctx, c, data, r.in, temporal.SubmitOptions{TaskQueue: "ops", WorkflowID: r.id})
		if err != nil {
			t.Fatal(err)
		}
		// The client gets the report, failed or not.
		rep, err := temporal.Wait(ctx, c, run)
		if err != nil {
			t.Fatalf("%s: %v", r.id, err)
		}
		if rep.Outcome != r.outcome || rep.Bound != r.bound || temporal.FailureType(rep) != r.typ {
			t.Errorf("%s: report %s %s (%s), want %s %s", r.id, rep.Outcome, rep.Bound, rep.Error, r.outcome, r.bound)
		}
		if strings.Contains(rep.Error, workerSecret) || bytes.Contains(rep.Answer, []byte(workerSecret)) {
			t.Errorf("%s: the report holds the worker's secret: %s %s", r.id, rep.Error, rep.Answer)
		}
		d, err := c.DescribeWorkflowExecution(ctx, r.id, "")
		if err != nil {
			t.Fatal(err)
		}
		want := enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		if r.typ != "" {
			want = enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
		}
		if got := d.GetWorkflowExecutionInfo().GetStatus(); got != want {
			t.Errorf("%s: status %s, want %s", r.id, got, want)
		}
		attrs := searchAttrs(t, d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields())
		wantAttrs := map[string]string{"AgentcAgent": "label", "AgentcPlan": string(p.Digests.Plan), "AgentcContract": string(p.Digests.Contract),
			"AgentcOutcome": r.outcome, "AgentcBound": r.bound}
		for k, v := range wantAttrs {
			if attrs[k] != v {
				t.Errorf("%s: search attribute %s is %q, want %q", r.id, k, attrs[k], v)
			}
		}
		if r.typ == "" {
			continue
		}
		// The workflow's failure: its type the bound or outcome, never
		// retried, the report its details.
		err = c.GetWorkflow(ctx, r.id, "").Get(ctx, nil)
		var app *sdktemporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != r.typ || !app.NonRetryable() || !strings.Contains(app.Message(), "outcome "+r.outcome+", bound "+r.bound) {
			t.Errorf("%s: the workflow's failure: %v; want a non-retryable %s", r.id, err, r.typ)
			continue
		}
		var details agentrt.Report
		if err := app.Details(&details); err != nil || details.Outcome != r.outcome || details.Bound != r.bound || details.Agent != "label" {
			t.Errorf("%s: the failure's details: %+v (%v); want the report", r.id, details, err)
		}
		// Started with no retry policy: it ran once, and stays failed.
		start, err := c.GetWorkflowHistory(ctx, r.id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT).Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := start.GetWorkflowExecutionStartedEventAttributes(); a.GetRetryPolicy() != nil || a.GetAttempt() != 1 {
			t.Errorf("%s: retry policy %v, attempt %d; want none, the first", r.id, a.GetRetryPolicy(), a.GetAttempt())
		}
	}

	// temporal workflow list finds the failed runs, and only those, by
	// status and agent; the search attributes each alone.
	prog, why := devserver.Program()
	if prog == "" {
		t.Fatal(why)
	}
	for q, want := range map[string][]string{
		"ExecutionStatus='Failed' AND AgentcAgent='label'":     {"ops-budget", "ops-contract"},
		"ExecutionStatus='Completed' AND AgentcAgent='label'":  {"ops-ok"},
		"AgentcBound='tool_budget'":                            {"ops-budget"},
		"AgentcOutcome='error' AND AgentcBound='none'":         {"ops-contract"},
		"AgentcPlan='" + string(p.Digests.Plan) + "'":          {"ops-budget", "ops-contract", "ops-ok"},
		"AgentcContract='" + string(p.Digests.Contract) + "'":  {"ops-budget", "ops-contract", "ops-ok"},
		"ExecutionStatus='Failed' AND AgentcAgent='not-label'": nil,
	} {
		listed(t, ctx, prog, s.HostPort, q, want)
	}

	// Each call's activity is of its kind: the succeeding run calls the
	// model, the tool, the model.
	if got := activityTypes(t, ctx, c, "ops-ok"); !slices.Equal(got, []string{temporal.ModelActivity, temporal.ToolActivity, temporal.ModelActivity}) {
		t.Errorf("the activities of ops-ok: %v", got)
	}
	if got := activityTypes(t, ctx, c, "ops-contract"); len(got) != 3 || slices.ContainsFunc(got, func(a string) bool { return a != temporal.ModelActivity }) {
		t.Errorf("the activities of ops-contract: %v; want three model calls (the answer, and its two retries)", got)
	}

	// The run's input reads as JSON: the plan an object, the plan itself.
	first, err := c.GetWorkflowHistory(ctx, "ops-ok", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT).Next()
	if err != nil {
		t.Fatal(err)
	}
	payload := first.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	var input struct {
		Plan   json.RawMessage `json:"plan"`
		Digest string          `json:"digest"`
	}
	if enc := string(payload.GetMetadata()[converter.MetadataEncoding]); enc != converter.MetadataEncodingJSON {
		t.Errorf("the input's encoding: %s", enc)
	}
	if err := json.Unmarshal(payload.GetData(), &input); err != nil || !bytes.HasPrefix(input.Plan, []byte("{")) {
		t.Fatalf("the input: %v; its plan %.40s; want an object", err, input.Plan)
	}
	if got, err := plan.Read("the history's plan", input.Plan); err != nil || got.Digests.Plan != p.Digests.Plan || input.Digest != string(p.Digests.Plan) {
		t.Errorf("the history's plan: %v", err)
	}

	// A failed run's history replays as workflow code, and exports as a
	// journal that replays offline to the same outcome.
	replayer := worker.NewWorkflowReplayer()
	rw, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: models, Allowed: digests(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	rw.RegisterWorkflow(replayer)
	for _, r := range runs {
		if err := replayer.ReplayWorkflowExecution(ctx, c.WorkflowService(), nil, "default", workflow.Execution{ID: r.id}); err != nil {
			t.Errorf("replaying %s: %v", r.id, err)
		}
	}
	h, entries, err := temporal.Export(ctx, c, "ops-contract", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "failed.jsonl")
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
	if again := replayLocally(t, data, file); again.Divergence != nil || again.Outcome != agentrt.OutcomeError || again.Replayed != 3 {
		t.Errorf("the failed run replayed offline: %s %s, divergence %v, %d replayed", again.Outcome, again.Error, again.Divergence, again.Replayed)
	}

	// A namespace without AgentcBound: the worker says so, and its runs
	// set the others and fail as before.
	if _, err := c.OperatorService().RemoveSearchAttributes(ctx, &operatorservice.RemoveSearchAttributesRequest{Namespace: "default", SearchAttributes: []string{"AgentcBound"}}); err != nil {
		t.Fatal(err)
	}
	missing, err := w.CheckSearchAttributes(ctx, "default")
	if err != nil || len(missing) != 1 || missing[0].Name != "AgentcBound" {
		t.Fatalf("missing search attributes: %v (%v); want AgentcBound", missing, err)
	}
	if cmd := temporal.RegisterCommand("default", missing); cmd != "temporal operator search-attribute create --namespace default --type Keyword --name AgentcBound" {
		t.Errorf("the command that registers it: %s", cmd)
	}
	run, err := temporal.Start(ctx, c, data, runs[1].in, temporal.SubmitOptions{TaskQueue: "ops", WorkflowID: "ops-budget-unregistered"})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := temporal.Wait(ctx, c, run); err != nil || rep.Bound != agentrt.BoundToolBudget {
		t.Fatalf("a run on a namespace without AgentcBound: %v, %v", rep, err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), "")
	if err != nil {
		t.Fatal(err)
	}
	attrs := searchAttrs(t, d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields())
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED || attrs["AgentcOutcome"] != "error" || attrs["AgentcBound"] != "" {
		t.Errorf("a run on a namespace without AgentcBound: %s, search attributes %v", st, attrs)
	}

	// No history holds the worker's secret, in its bytes or in base64.
	for _, id := range []string{"ops-ok", "ops-budget", "ops-contract", "ops-budget-unregistered"} {
		noSecretInHistory(t, ctx, c, id, workerSecret)
	}
}

// TestDevServerSearchAttributes: the dev server the tests start registers
// the search attributes runs set, every one.
func TestDevServerSearchAttributes(t *testing.T) {
	if !slices.Equal(devserver.SearchAttributes, temporal.SearchAttributes()) {
		t.Errorf("the dev server registers %v; runs set %v", devserver.SearchAttributes, temporal.SearchAttributes())
	}
}

// searchAttrs reads a workflow's search attributes, each a Keyword.
func searchAttrs(t *testing.T, fields map[string]*commonpb.Payload) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range fields {
		var s string
		if err := converter.GetDefaultDataConverter().FromPayload(v, &s); err == nil {
			out[k] = s
		}
	}
	return out
}

// listed runs temporal workflow list with query and checks it lists the
// workflows want, in any order. Visibility lags the workflows' ends by a
// moment: the query is made again until it lists them, or a while has
// passed.
func listed(t *testing.T, ctx context.Context, prog, hostPort, query string, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for {
		out, err := exec.CommandContext(ctx, prog, "workflow", "list", "--address", hostPort, "--namespace", "default", "--query", query, "--output", "json").CombinedOutput()
		if err != nil {
			t.Fatalf("temporal workflow list --query %q: %v\n%s", query, err, out)
		}
		var list []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		}
		if err := json.Unmarshal(out, &list); err != nil && len(bytes.TrimSpace(out)) > 0 {
			t.Fatalf("temporal workflow list: %v\n%s", err, out)
		}
		got = got[:0]
		for _, e := range list {
			got = append(got, e.Execution.WorkflowID)
		}
		sort.Strings(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("temporal workflow list --query %q: %v, want %v", query, got, want)
			return
		}
		// Visibility is eventually consistent, with no event to wait on.
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// activityTypes lists the types of the activities a workflow scheduled,
// in order.
func activityTypes(t *testing.T, ctx context.Context, c client.Client, id string) []string {
	t.Helper()
	var out []string
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			out = append(out, a.GetActivityType().GetName())
		}
	}
	return out
}

// noSecretInHistory fails t if any event of a workflow's history holds
// secret: as it is, or in base64 at any of the three alignments a
// []byte's encoding could put it.
func noSecretInHistory(t *testing.T, ctx context.Context, c client.Client, id, secret string) {
	t.Helper()
	if len(secret) < 16 {
		t.Fatalf("a secret of %d bytes is too short to look for in base64", len(secret))
	}
	forms := [][]byte{[]byte(secret)}
	for pad := range 3 {
		enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", pad) + secret))
		// The first and last four characters encode bytes beside the
		// secret too.
		forms = append(forms, []byte(enc[4:len(enc)-4]))
	}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		n++
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range forms {
			if bytes.Contains(raw, f) {
				t.Errorf("%s: event %d (%s) holds the worker's secret (%s)", id, ev.GetEventId(), ev.GetEventType(), f)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no history", id)
	}
}

// holding is a model whose calls wait until their context ends; called
// is closed at the first.
type holding struct {
	once   sync.Once
	called chan struct{}
}

func (m *holding) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	m.once.Do(func() { close(m.called) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCancelledRun: a client that stops waiting cancels its run, which
// ends interrupted, its workflow cancelled (not completed, not failed)
// with the report as the cancellation's details, which the client gets.
func TestCancelledRun(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := labeller(t, labelSchema)
	m := &holding{called: make(chan struct{})}
	startWorker(t, c, "cancel", m, data)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "cancel", WorkflowID: "cancel-1"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	go func() {
		select {
		case <-m.called:
		case <-ctx.Done():
		}
		stop()
	}()
	rep, err := temporal.Wait(wctx, c, run)
	if err != nil || !rep.Interrupted || rep.Agent != "label" {
		t.Fatalf("the cancelled run's report: %+v, %v; want it interrupted", rep, err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, "cancel-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("the cancelled run's status: %s", st)
	}
}

// TestReplayBeforePlacedFiles: a run begun before the files a prompt
// places were held to the run's file bound replays on today's code as it
// was made (testdata/history/before-placed-files.json: a prompt that
// places a 17 MiB PDF twice, 34 MiB in all, which a run now refuses,
// answered), where it would fail before its model call.
func TestReplayBeforePlacedFiles(t *testing.T) {
	store, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	pdf := append([]byte("%PDF-1.4\n"), make([]byte, 17<<20-9)...)
	if _, err := store.Put(bytes.NewReader(pdf), int64(len(pdf))); err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(nil, temporal.WorkerOptions{
		ModelFor:     func(temporal.ModelCall) (agentrt.Model, error) { return refusing{}, nil },
		AllowAnyPlan: true,
		Files:        store,
	})
	if err != nil {
		t.Fatal(err)
	}
	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflow(replayer)
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "history", "before-placed-files.json")); err != nil {
		t.Error(err)
	}
}

// TestReplayBeforeModelName: a run begun before plans whose model names
// hold a control character were refused replays on today's code as it
// was made, where it read no plan: its history's plan (before-ops-ok's,
// given a model name with a line break and sealed again) is one that
// plan.Read now refuses.
func TestReplayBeforeModelName(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "history", "before-ops-ok.json"))
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	payload := h["events"].([]any)[0].(map[string]any)["workflowExecutionStartedEventAttributes"].(map[string]any)["input"].(map[string]any)["payloads"].([]any)[0].(map[string]any)
	data, err := base64.StdEncoding.DecodeString(payload["data"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var in temporal.RunInput
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	var planData []byte // the plan in base64, as runs of then held it
	if err := json.Unmarshal(in.Plan, &planData); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Read("plan", planData)
	if err != nil {
		t.Fatal(err)
	}
	p.Agent.Model.Name += "\n"
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	if in.Plan, err = p.Encode(); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Read("plan", in.Plan); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("plan.Read: %v; want the model's name refused", err)
	}
	in.Digest = string(p.Digests.Plan)
	if data, err = json.Marshal(in); err != nil {
		t.Fatal(err)
	}
	payload["data"] = base64.StdEncoding.EncodeToString(data)
	if raw, err = json.Marshal(h); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "before-model-name.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(nil, temporal.WorkerOptions{
		ModelFor:     func(temporal.ModelCall) (agentrt.Model, error) { return refusing{}, nil },
		AllowAnyPlan: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflow(replayer)
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
		t.Error(err)
	}
}

// TestReplayBefore: histories recorded by the run workflow as it was
// before activity types by kind, search attributes and failed workflows
// (testdata/history: a run that answered, and one its tool budget ended;
// every call an agentc.effect, the plan in base64, the workflow completed),
// and before a client's budgets only narrowed the plan's (a run whose
// client lifted its plan's tool budget of 1 to 3, its rounds from 3 to 10
// and its deadline from 5m to 1000h: three tool calls, then its tool
// budget ended it), and before a run's calls went only to its plan's
// models (a run whose client named the provider anthropic in place of its
// plan's openai: it answered), and before a run cancelled while it
// waited for approval ended interrupted (a run cancelled so: its workflow
// failed), replay on today's code, so that runs
// started then go on once their workers are upgraded (whose activities
// refuse the calls such a run has left to make).
func TestReplayBefore(t *testing.T) {
	w, err := temporal.NewWorker(nil, temporal.WorkerOptions{
		ModelFor: func(temporal.ModelCall) (agentrt.Model, error) {
			return refusing{}, nil
		},
		AllowAnyPlan: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before-ops-ok", "before-ops-budget", "before-budgets-wider", "before-provider", "before-approval-cancel"} {
		replayer := worker.NewWorkflowReplayer()
		w.RegisterWorkflow(replayer)
		if err := replayer.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "history", name+".json")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
