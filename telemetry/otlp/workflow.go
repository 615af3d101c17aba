package otlp

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"agentc.dev/agentc/telemetry"
)

// TracerOptions are what a tracer provider needs to record the runs of
// Temporal workflows (telemetry.WorkflowRecorder): spans draw their IDs
// from the workflow's sequence, so that the spans a replay opens are the
// ones the first run opened, and spans that ended in a replay, exported
// already by the worker that first ran them, are dropped before next.
func TracerOptions(next sdktrace.SpanProcessor) []sdktrace.TracerProviderOption {
	return []sdktrace.TracerProviderOption{
		sdktrace.WithIDGenerator(newIDs()),
		sdktrace.WithSpanProcessor(dropReplayed{next}),
	}
}

// ids draws IDs from a workflow's sequence where the span's context has
// one, and at random otherwise, as the SDK's own generator does.
type ids struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newIDs() *ids {
	var seed [32]byte
	_, _ = crand.Read(seed[:])
	return &ids{rng: rand.New(rand.NewChaCha8(seed))}
}

func (g *ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if s, ok := telemetry.IDSequenceFrom(ctx); ok {
		return s.TraceID(), s.NextSpanID()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var t trace.TraceID
	var sp trace.SpanID
	for !t.IsValid() {
		binary.NativeEndian.PutUint64(t[:8], g.rng.Uint64())
		binary.NativeEndian.PutUint64(t[8:], g.rng.Uint64())
	}
	for !sp.IsValid() {
		binary.NativeEndian.PutUint64(sp[:], g.rng.Uint64())
	}
	return t, sp
}

func (g *ids) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if s, ok := telemetry.IDSequenceFrom(ctx); ok && s.TraceID() == traceID {
		return s.NextSpanID()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var sp trace.SpanID
	for !sp.IsValid() {
		binary.NativeEndian.PutUint64(sp[:], g.rng.Uint64())
	}
	return sp
}

// dropReplayed passes on the spans next should export: not those marked
// telemetry.AttrReplayed.
type dropReplayed struct{ next sdktrace.SpanProcessor }

func (d dropReplayed) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { d.next.OnStart(ctx, s) }

func (d dropReplayed) OnEnd(s sdktrace.ReadOnlySpan) {
	for _, a := range s.Attributes() {
		if a.Key == telemetry.AttrReplayed {
			return
		}
	}
	d.next.OnEnd(s)
}

func (d dropReplayed) Shutdown(ctx context.Context) error   { return d.next.Shutdown(ctx) }
func (d dropReplayed) ForceFlush(ctx context.Context) error { return d.next.ForceFlush(ctx) }
