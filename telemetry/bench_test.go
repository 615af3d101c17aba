package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/telemetry"
)

// loopModel calls the tool until round n, then answers; its replies are
// built once, so the benchmark measures the runtime and the recorder.
type loopModel struct {
	n    int
	call agentrt.Response
}

func (m *loopModel) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	rounds := 0
	for _, msg := range req.Messages {
		if msg.Role == agentrt.Assistant {
			rounds++
		}
	}
	if rounds+1 < m.n {
		return &m.call, nil
	}
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}}, Usage: agentrt.Usage{Input: 10, Output: 10}}, nil
}

type echo struct{}

func (echo) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "search", Description: "Search.", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (echo) Call(_ context.Context, args json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{Content: string(args)}, nil
}

// benchRounds runs a 40-round run (a model call and a tool call a
// round) b.N times with events going to events, and reports the time per
// round.
func benchRounds(b *testing.B, events func() func(agentrt.Event)) {
	const rounds = 40 // within the default rounds bound
	p := &plan.Plan{Agent: plan.Agent{
		Name: "label", Model: plan.Model{Provider: "test", Name: "m", MaxOutputTokens: 100}, Instructions: "Label.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"search": {Kind: "exec", Description: "Search."}}},
		Output:       &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"]}`), KeepsTools: true, Retries: 2},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		b.Fatal(err)
	}
	model := &loopModel{n: rounds, call: agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}}}, Usage: agentrt.Usage{Input: 10, Output: 10}}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := agentrt.New(p, agentrt.Options{Model: model, Tools: map[string]agentrt.Tool{"search": echo{}}, Events: events()})
		if err != nil {
			b.Fatal(err)
		}
		if rep, err := r.Run(context.Background(), nil); err != nil || rep.Outcome != agentrt.OutcomeOK {
			b.Fatalf("%v %s %s", err, rep.Outcome, rep.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
}

// BenchmarkRoundUntraced is the run of BenchmarkRoundTraced with no
// recorder: telemetry off.
func BenchmarkRoundUntraced(b *testing.B) {
	benchRounds(b, func() func(agentrt.Event) { return nil })
}

// BenchmarkRoundTraced records every round (three spans: the round, its
// model call, its tool call) with the SDK, sampling everything, and the
// metrics with the SDK's meter; the spans go to an exporter that drops
// them. The difference from BenchmarkRoundUntraced, divided by three, is
// the cost of a span.
func BenchmarkRoundTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := telemetry.New(tp, mp, telemetry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchRounds(b, func() func(agentrt.Event) { return tel.Recorder(context.Background()).Event })
}

// BenchmarkRoundTracedNoMetrics is BenchmarkRoundTraced with metrics off.
func BenchmarkRoundTracedNoMetrics(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	tel, err := telemetry.New(tp, metricnoop.NewMeterProvider(), telemetry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchRounds(b, func() func(agentrt.Event) { return tel.Recorder(context.Background()).Event })
}
