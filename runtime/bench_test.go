package runtime_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// loopModel is a zero-latency model: it calls the tool until round n,
// then answers. Its replies are built once, so the benchmark measures the
// runtime, not the model.
type loopModel struct {
	n            int
	call, answer agentrt.Response
}

func newLoopModel(n int) *loopModel {
	return &loopModel{n: n,
		call: agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}}}, Usage: usage(10)},
	}
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
	return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}}, Usage: usage(10)}, nil
}

func benchRunner(b *testing.B, rounds int, pool *agentrt.Pool) *agentrt.Runner {
	return benchRunnerWith(b, rounds, agentrt.Options{Pool: pool})
}

// benchRunnerWith makes the benchmark agent's runner with opts, whose
// model and tools default to the zero-latency ones; edits change the
// agent before its plan is sealed.
func benchRunnerWith(b testing.TB, rounds int, opts agentrt.Options, edits ...func(*plan.Agent)) *agentrt.Runner {
	p := &plan.Plan{Agent: plan.Agent{
		Name: "label", Model: plan.Model{Provider: "test", Name: "m", MaxOutputTokens: 100}, Instructions: "Label.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"search": {Kind: "exec", Description: "Search."}}},
		Output:       &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(labelSchema), KeepsTools: true, Retries: 2},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	for _, edit := range edits {
		edit(&p.Agent)
	}
	if err := p.Seal(); err != nil {
		b.Fatal(err)
	}
	if opts.Model == nil {
		opts.Model = newLoopModel(rounds)
	}
	if opts.Budgets.Rounds == nil {
		// The run must not end on the default rounds bound first.
		opts.Budgets.Rounds = &rounds
	}
	if opts.Tools == nil {
		opts.Tools = map[string]agentrt.Tool{"search": &echoTool{name: "search"}}
	}
	r, err := agentrt.New(p, opts)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkRound is the runtime's cost per round: a zero-latency model
// calls a trivial tool 100 times, then answers; the time and allocations
// are divided by the rounds.
func BenchmarkRound(b *testing.B) {
	const rounds = 100
	r := benchRunner(b, rounds, nil)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := r.Run(context.Background(), nil)
		if err != nil || rep.Outcome != "ok" {
			b.Fatalf("%v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
}

// BenchmarkRun1000Rounds is one run of 1,000 rounds.
func BenchmarkRun1000Rounds(b *testing.B) {
	r := benchRunner(b, 1000, nil)
	b.ReportAllocs()
	for b.Loop() {
		if rep, _ := r.Run(context.Background(), nil); rep.Outcome != "ok" {
			b.Fatal(rep.Error)
		}
	}
}

// BenchmarkConcurrentPool is 1,000 concurrent runs of 10 rounds sharing
// one pool large enough for all; each call reserves its worst case (the
// agent declares max_output_tokens) and settles after.
func BenchmarkConcurrentPool(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		pool := agentrt.NewPool(1 << 40)
		r := benchRunner(b, 10, pool)
		var wg sync.WaitGroup
		for range 1000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if rep, _ := r.Run(context.Background(), nil); rep.Outcome != "ok" {
					b.Error(rep.Error)
				}
			}()
		}
		wg.Wait()
	}
}

// BenchmarkCheckInput reads an input of 1,000 records (about 60 KB) as a
// run does before its first call: decoded, checked against the input
// schema, the prompt rendered.
func BenchmarkCheckInput(b *testing.B) {
	p := agent(b, func(a *plan.Agent) {
		a.Input = &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"title":{"type":"string"}},"required":["id","title"]}}},"required":["items"]}`)}
		a.Prompt = "{{range .items}}{{.id}}: {{.title}}\n{{end}}"
	})
	r, err := agentrt.New(p, agentrt.Options{Model: newLoopModel(1)})
	if err != nil {
		b.Fatal(err)
	}
	var items []map[string]any
	for i := range 1000 {
		items = append(items, map[string]any{"id": i, "title": "A bug in the parser, seen again."})
	}
	input, _ := json.Marshal(map[string]any{"items": items})
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if err := r.CheckInput(input); err != nil {
			b.Fatal(err)
		}
	}
}
