package temporal_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"agentc.dev/agentc/internal/devserver"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/telemetry"
	"agentc.dev/agentc/telemetry/otlp"
	"agentc.dev/agentc/temporal"
)

// traced is a worker's telemetry: what it exported, every span it
// started and ended, and its metrics.
type traced struct {
	tel      *telemetry.Telemetry
	exported *tracetest.InMemoryExporter
	all      *tracetest.SpanRecorder
	metrics  *sdkmetric.ManualReader
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	tr := &traced{exported: tracetest.NewInMemoryExporter(), all: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(append(otlp.TracerOptions(sdktrace.NewSimpleSpanProcessor(tr.exported)), sdktrace.WithSpanProcessor(tr.all))...)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tr.metrics))
	var err error
	if tr.tel, err = telemetry.New(tp, mp, telemetry.Options{}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// calls is the count of model calls the worker's metrics hold.
func (tr *traced) calls(t *testing.T) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tr.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "agentc.model.calls" {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// spanID names a span by what identifies it across workers.
func spanID(s sdktrace.ReadOnlySpan) string {
	return fmt.Sprintf("%s %s<-%s %s", s.SpanContext().TraceID(), s.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
}

func stubID(s tracetest.SpanStub) string {
	return fmt.Sprintf("%s %s<-%s %s", s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Parent.SpanID(), s.Name)
}

// secondHeld answers the first model call and holds the second until
// its context ends.
type secondHeld struct {
	counting
}

func (m *secondHeld) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if m.total() == 0 {
		return m.counting.Complete(ctx, req)
	}
	m.mu.Lock()
	m.calls["held"]++
	m.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

// replayTraced replays a run's history on a worker with telemetry: it
// must open the spans ids names (as spanID and stubID name them), end and
// export none, and count no model call.
func replayTraced(t *testing.T, ctx context.Context, c client.Client, id string, ids []string) {
	t.Helper()
	r := newTraced(t)
	replayer := worker.NewWorkflowReplayer()
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: func(temporal.ModelCall) (agentrt.Model, error) {
		return &counting{}, nil
	}, Telemetry: r.tel,
		Allowed: digests(t, labeller(t, labelSchema))})
	if err != nil {
		t.Fatal(err)
	}
	w.RegisterWorkflow(replayer)
	if err := replayer.ReplayWorkflowExecution(ctx, c.WorkflowService(), nil, "default", workflow.Execution{ID: id}); err != nil {
		t.Fatalf("replaying the history: %v", err)
	}
	if n := len(r.exported.GetSpans()); n != 0 {
		t.Errorf("a replay exported %d spans", n)
	}
	if n := r.calls(t); n != 0 {
		t.Errorf("a replay counted %d model calls", n)
	}
	if n := len(r.all.Ended()); n != 0 {
		t.Errorf("a replay ended %d spans", n)
	}
	var replayed []string
	for _, sp := range r.all.Started() {
		replayed = append(replayed, spanID(sp))
	}
	ids = slices.Sorted(slices.Values(ids))
	sort.Strings(replayed)
	if !slices.Equal(ids, replayed) {
		t.Errorf("a replay opened other spans than the run:\nrun:    %s\nreplay: %s", strings.Join(ids, "\n        "), strings.Join(replayed, "\n        "))
	}
}

// tracedWorker runs a worker with telemetry; stop stops it.
func tracedWorker(t *testing.T, c client.Client, queue string, m agentrt.Model, tr *traced) (stop func()) {
	t.Helper()
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{
		ModelFor:  func(temporal.ModelCall) (agentrt.Model, error) { return m, nil },
		Dir:       t.TempDir(),
		Telemetry: tr.tel,
		Allowed:   digests(t, labeller(t, labelSchema)),
	})
	if err != nil {
		t.Fatal(err)
	}
	tw := worker.New(c, queue, temporal.Options())
	w.Register(tw)
	if err := tw.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			tw.Stop()
			w.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestTelemetryAcrossWorkers: a run's spans are exported once each, in
// one trace, though the run moved to another worker mid-call, which
// replayed its history from the start; a replay of the whole history
// opens the same spans, with the same IDs, and ends, exports and counts
// nothing.
func TestTelemetryAcrossWorkers(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := labeller(t, labelSchema)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Worker A makes the first round and is stopped during the second
	// model call.
	a, b := newTraced(t), newTraced(t)
	held := &secondHeld{counting{calls: map[string]int{}}}
	stopA := tracedWorker(t, c, "traced", held, a)
	run, err := temporal.Start(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "traced"})
	if err != nil {
		t.Fatal(err)
	}
	for held.total() < 2 {
		if ctx.Err() != nil {
			t.Fatal("the second model call never reached worker A")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopA()
	worker.PurgeStickyWorkflowCache()

	// Worker B replays the history and finishes the run.
	m := &counting{calls: map[string]int{}}
	tracedWorker(t, c, "traced", m, b)
	rep, err := temporal.Wait(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || len(rep.Rounds) != 2 {
		t.Fatalf("report: %s %s, %d rounds", rep.Outcome, rep.Bound, len(rep.Rounds))
	}
	if held.total() != 2 || m.total() != 1 {
		t.Fatalf("worker A took %d model calls, B %d; want 2 and 1 (the second again)", held.total(), m.total())
	}
	if len(a.exported.GetSpans()) == 0 {
		t.Fatal("worker A exported nothing: the run did not move after a round ended")
	}

	exported := append(a.exported.GetSpans(), b.exported.GetSpans()...)
	var names, ids []string
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range exported {
		names = append(names, sp.Name)
		ids = append(ids, stubID(sp))
		byID[sp.SpanContext.SpanID().String()] = sp
	}
	sort.Strings(names)
	want := []string{"chat m1", "chat m1", "execute_tool search", "invoke_agent label", "round 1", "round 2"}
	if !slices.Equal(names, want) {
		t.Fatalf("exported spans %v, want each of %v once", names, want)
	}
	root := byID[exported[0].SpanContext.SpanID().String()]
	for _, sp := range exported {
		if sp.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %s is in trace %s, not the run's %s", sp.Name, sp.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
		if sp.Name == "invoke_agent label" {
			if sp.Parent.IsValid() {
				t.Errorf("the run's span has a parent %s", sp.Parent.SpanID())
			}
			continue
		}
		if _, ok := byID[sp.Parent.SpanID().String()]; !ok {
			t.Errorf("span %s's parent %s was never exported", sp.Name, sp.Parent.SpanID())
		}
	}
	if got := a.calls(t) + b.calls(t); got != 2 {
		t.Errorf("the workers counted %d model calls, want 2", got)
	}

	// A replay of the whole history opens the same spans and exports none.
	replayTraced(t, ctx, c, run.GetID(), ids)
}

// TestTelemetryUnderClientSpan: a run started under a span (the client's)
// records its spans under it, in its trace, and a replay of its history
// opens the same spans.
func TestTelemetryUnderClientSpan(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	w := newTraced(t)
	tracedWorker(t, c, "client-span", &counting{calls: map[string]int{}}, w)
	client := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(client))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, span := tp.Tracer("test").Start(ctx, "client")
	rep, id, err := temporal.Submit(ctx, c, labeller(t, labelSchema), temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "client-span"})
	span.End()
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("run: %v %+v", err, rep)
	}
	parent := span.SpanContext()
	var ids []string
	for _, sp := range w.exported.GetSpans() {
		ids = append(ids, stubID(sp))
		if sp.SpanContext.TraceID() != parent.TraceID() {
			t.Errorf("span %s is in trace %s, not the client's %s", sp.Name, sp.SpanContext.TraceID(), parent.TraceID())
		}
		if sp.Name == "invoke_agent label" && sp.Parent.SpanID() != parent.SpanID() {
			t.Errorf("the run's span has parent %s, not the client's span %s", sp.Parent.SpanID(), parent.SpanID())
		}
	}
	if len(ids) != 6 {
		t.Fatalf("the worker exported %d spans, want 6: %v", len(ids), ids)
	}

	replayTraced(t, ctx, c, id, ids)
}
