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
// Temporal workflows (telemetry.WorkflowRecorder), with next processing
// its spans: spans draw their IDs from the workflow's sequence, so that
// the spans a replay opens are the ones the first run opened.
func TracerOptions(next sdktrace.SpanProcessor) []sdktrace.TracerProviderOption {
	return []sdktrace.TracerProviderOption{
		sdktrace.WithIDGenerator(newIDs()),
		sdktrace.WithSpanProcessor(next),
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
