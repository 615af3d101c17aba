package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/telemetry"
)

const secret = "sk-test-0123456789abcdef"

func sealed(t testing.TB, a plan.Agent, callees map[string]plan.Callee) *plan.Plan {
	t.Helper()
	p := &plan.Plan{Agent: a, Callees: callees}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// lookup is a tool whose result holds the secret.
type lookup struct{}

func (lookup) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "lookup", Description: "Look up.", Schema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)}
}

func (lookup) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{Content: "found for " + secret}, nil
}

// broken is a tool that fails.
type broken struct{}

func (broken) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "broken", Description: "Fails.", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (broken) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	return agentrt.ToolResult{}, errors.New("out of order")
}

// triage calls tools and, as its tool "label", the agent labeller.
func triage(t testing.TB) *plan.Plan {
	child := sealed(t, plan.Agent{
		Name: "labeller", Model: plan.Model{Provider: "test", Name: "small-1"}, Instructions: "Label.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)},
		Output:       &plan.Output{Name: "answer", Description: "The label.", Schema: json.RawMessage(`{"enum":["bug","feature"]}`), Retries: 2},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}, nil)
	return sealed(t, plan.Agent{
		Name: "triage", Model: plan.Model{Provider: "test", Name: "big-2"}, Instructions: "Triage.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{
			"label":  {Kind: "agent", Description: "Label an issue.", Path: "label.cue"},
			"lookup": {Kind: "exec", Description: "Look up."},
			"broken": {Kind: "exec", Description: "Fails."},
		}},
		Output:   &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`), Retries: 2},
		Strategy: plan.Strategy{OnProse: "remind", Reminders: 2},
	}, map[string]plan.Callee{"label": {Path: "label.cue", Dir: ".", Contract: child.Digests.Contract, Plan: child}})
}

// recording is a Telemetry whose spans and metrics a test reads back.
type recording struct {
	tel     *telemetry.Telemetry
	spans   *tracetest.InMemoryExporter
	reader  *sdkmetric.ManualReader
	secrets *redact.Set
}

func newRecording(t *testing.T, content bool) *recording {
	t.Helper()
	r := &recording{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader(), secrets: &redact.Set{}}
	r.secrets.Add(secret)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	var err error
	if r.tel, err = telemetry.New(tp, mp, telemetry.Options{Content: content, Secrets: r.secrets}); err != nil {
		t.Fatal(err)
	}
	return r
}

// runTriage runs triage with a recorder.
func (r *recording) runTriage(t *testing.T) {
	t.Helper()
	rec := r.tel.Recorder(context.Background())
	p := triage(t)
	env := tool.Env{
		BaseDir:  t.TempDir(),
		ModelFor: func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{}, nil },
		Events:   rec.Event,
		Secrets:  r.secrets,
		Content:  r.tel.Content(),
	}
	tools, closeTools, err := tool.Build(context.Background(), &plan.Plan{Agent: plan.Agent{Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"label": p.Agent.Capabilities.Tools["label"]}}}, Callees: p.Callees}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools()
	tools["lookup"], tools["broken"] = lookup{}, broken{}
	run, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Tools: tools, Events: rec.Event, Secrets: r.secrets, Content: r.tel.Content()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run.Run(context.Background(), nil)
	if err != nil || rep.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the run: %v %+v", err, rep)
	}
}

// collect returns the spans and metrics recorded so far.
func (r *recording) collect(t *testing.T) (tracetest.SpanStubs, metricdata.ResourceMetrics) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return r.spans.GetSpans(), rm
}

// record runs triage with a recorder and returns its spans and metrics.
func record(t *testing.T, content bool) (tracetest.SpanStubs, metricdata.ResourceMetrics) {
	t.Helper()
	r := newRecording(t, content)
	r.runTriage(t)
	return r.collect(t)
}

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// TestSpans: a run with a tool and a called agent is a tree of spans
// named and attributed by the GenAI conventions, the called agent's run
// under the tool call that ran it.
func TestSpans(t *testing.T) {
	spans, _ := record(t, false)
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
		if !s.SpanContext.TraceID().IsValid() || s.SpanContext.TraceID() != spans[0].SpanContext.TraceID() {
			t.Errorf("span %s is not in the run's trace", s.Name)
		}
	}
	parent := func(s tracetest.SpanStub) string {
		if p, ok := byID[s.Parent.SpanID().String()]; ok {
			return p.Name
		}
		return ""
	}
	// Each span's name, its parent's, and the attributes it must have.
	want := []struct {
		name, parent string
		attrs        map[string]string
	}{
		{"invoke_agent triage", "", map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage", "gen_ai.provider.name": "test", "gen_ai.request.model": "big-2", "agentc.outcome": "ok", "agentc.bound": "none"}},
		{"round 1", "invoke_agent triage", map[string]string{"agentc.round": "1"}},
		{"chat big-2", "round 1", map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "test", "gen_ai.request.model": "big-2"}},
		{"execute_tool label", "round 1", map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "label"}},
		{"invoke_agent labeller", "execute_tool label", map[string]string{"gen_ai.agent.name": "labeller", "agentc.agent.path": "label", "gen_ai.request.model": "small-1"}},
		{"chat small-1", "round 1", map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "small-1"}},
		{"execute_tool lookup", "round 1", map[string]string{"gen_ai.tool.name": "lookup"}},
		{"execute_tool broken", "round 1", map[string]string{"gen_ai.tool.name": "broken", "error.type": "tool_error"}},
		{"round 2", "invoke_agent triage", nil},
	}
	for _, w := range want {
		found := false
		for _, s := range spans {
			if s.Name != w.name || parent(s) != w.parent {
				continue
			}
			found = true
			got := attrs(s)
			for k, v := range w.attrs {
				if got[k] != v {
					t.Errorf("span %s: %s = %q, want %q", w.name, k, got[k], v)
				}
			}
			if strings.HasPrefix(w.name, "chat") && (got["gen_ai.usage.input_tokens"] == "" || got["gen_ai.usage.input_tokens"] == "0") {
				t.Errorf("span %s has no input tokens: %v", w.name, got)
			}
			if strings.HasPrefix(w.name, "execute_tool") && got["gen_ai.tool.call.id"] == "" {
				t.Errorf("span %s has no call id", w.name)
			}
			if failed := w.attrs["error.type"] != ""; failed != (s.Status.Code == codes.Error) {
				t.Errorf("span %s has status %v", w.name, s.Status)
			}
			if s.EndTime.Before(s.StartTime) || s.EndTime.IsZero() {
				t.Errorf("span %s ends %v, before it starts %v", w.name, s.EndTime, s.StartTime)
			}
		}
		if !found {
			var have []string
			for _, s := range spans {
				have = append(have, s.Name+" < "+parent(s))
			}
			t.Errorf("no span %q under %q; spans: %s", w.name, w.parent, strings.Join(have, ", "))
		}
	}
}

// TestContent: content is recorded only when asked for, and a secret is
// never recorded, in an attribute or an event.
func TestContent(t *testing.T) {
	contentKeys := []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
	for _, on := range []bool{false, true} {
		spans, _ := record(t, on)
		seen := map[string]string{}
		// A tool's error is its output, content like its result: its text
		// is recorded only with content (the status says the call failed
		// either way).
		statuses := ""
		for _, s := range spans {
			statuses += s.Status.Description + "\n"
			for _, e := range s.Events {
				for _, kv := range e.Attributes {
					statuses += kv.Value.Emit() + "\n"
				}
			}
		}
		if got := strings.Contains(statuses, "out of order"); got != on {
			t.Errorf("content %v: the broken tool's error text recorded: %v", on, got)
		}
		for _, s := range spans {
			var all []attribute.KeyValue
			all = append(all, s.Attributes...)
			for _, e := range s.Events {
				all = append(all, e.Attributes...)
			}
			for _, kv := range all {
				if strings.Contains(kv.Value.Emit(), secret) {
					t.Errorf("content %v: span %s: %s holds the secret: %s", on, s.Name, kv.Key, kv.Value.Emit())
				}
				seen[string(kv.Key)+" "+s.Name] = kv.Value.Emit()
			}
		}
		for _, k := range contentKeys {
			n := 0
			for key := range seen {
				if strings.HasPrefix(key, k+" ") {
					n++
				}
			}
			if on != (n > 0) {
				t.Errorf("content %v: %s recorded on %d spans", on, k, n)
			}
		}
		if on {
			if a := seen["gen_ai.tool.call.arguments execute_tool lookup"]; !strings.Contains(a, `"key"`) {
				t.Errorf("the lookup's arguments are %q", a)
			}
			if r := seen["gen_ai.tool.call.result execute_tool lookup"]; r != "found for "+redact.Marker {
				t.Errorf("the lookup's result is %q, not redacted", r)
			}
			if in := seen["gen_ai.input.messages chat big-2"]; !strings.Contains(in, `"role":"user"`) {
				t.Errorf("the input messages are %q", in)
			}
			if sys := seen["gen_ai.system_instructions chat big-2"]; !strings.Contains(sys, "Triage.") {
				t.Errorf("the system instructions are %q", sys)
			}
		}
	}
}

// TestMetrics: tokens by type, operation duration and agentc's counters,
// by agent and model.
func TestMetrics(t *testing.T) {
	spans, rm := record(t, false)
	chats := int64(0)
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "chat ") {
			chats++
		}
	}
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m.Data
		}
	}
	tokens, ok := got["gen_ai.client.token.usage"].(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("no token usage histogram; metrics: %v", got)
	}
	types := map[string]bool{}
	for _, dp := range tokens.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		a, _ := dp.Attributes.Value("gen_ai.agent.name")
		m, _ := dp.Attributes.Value("gen_ai.request.model")
		types[v.AsString()+" "+a.AsString()+" "+m.AsString()] = dp.Sum > 0
	}
	for _, k := range []string{"input triage big-2", "output triage big-2", "input labeller small-1", "output labeller small-1"} {
		if !types[k] {
			t.Errorf("no tokens recorded for %s: %v", k, types)
		}
	}
	duration, ok := got["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Errorf("no operation duration histogram")
	}
	// The buckets the conventions advise (gen-ai-metrics.md), not the
	// SDK's default, which puts every call under 5 s in one bucket.
	wantBounds := map[string][]float64{
		"gen_ai.client.operation.duration": {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92},
		"gen_ai.client.token.usage":        {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864},
	}
	bounds := map[string][][]float64{}
	for _, dp := range duration.DataPoints {
		bounds["gen_ai.client.operation.duration"] = append(bounds["gen_ai.client.operation.duration"], dp.Bounds)
	}
	for _, dp := range tokens.DataPoints {
		bounds["gen_ai.client.token.usage"] = append(bounds["gen_ai.client.token.usage"], dp.Bounds)
	}
	for name, want := range wantBounds {
		if len(bounds[name]) == 0 {
			t.Errorf("%s has no data points", name)
		}
		for _, b := range bounds[name] {
			if !slices.Equal(b, want) {
				t.Errorf("%s has the bucket boundaries %v, want %v", name, b, want)
			}
		}
	}
	calls, ok := got["agentc.model.calls"].(metricdata.Sum[int64])
	total := int64(0)
	for _, dp := range calls.DataPoints {
		total += dp.Value
	}
	if !ok || total != chats || chats < 2 {
		t.Errorf("agentc.model.calls counted %d calls; the trace has %d", total, chats)
	}
	for _, name := range []string{"agentc.tool.calls", "agentc.runs"} {
		if _, ok := got[name].(metricdata.Sum[int64]); !ok {
			t.Errorf("no %s counter", name)
		}
	}
	// Cost, by the agent whose call it was (the test model's calls cost
	// nothing, exactly).
	costs, ok := got["agentc.cost"].(metricdata.Sum[float64])
	if !ok {
		t.Fatalf("no agentc.cost counter; metrics: %v", got)
	}
	estimated := map[string]bool{}
	for _, dp := range costs.DataPoints {
		a, _ := dp.Attributes.Value("gen_ai.agent.name")
		e, _ := dp.Attributes.Value("agentc.cost.estimated")
		estimated[a.AsString()] = e.AsBool()
	}
	for _, a := range []string{"triage", "labeller"} {
		if e, ok := estimated[a]; !ok || e {
			t.Errorf("agentc.cost by agent, estimated: %v; want %s, not estimated", estimated, a)
		}
	}
}

// TestFallbackSpans: a call OpenAI does not serve (404, its wire format)
// goes to the fallback model; its chat span ends with error.type
// model_fallback and the event, and the fallback's call is a chat span
// of its own, of the fallback's provider and model.
func TestFallbackSpans(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"The model `+"`m1`"+` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)
	}))
	defer srv.Close()
	primary, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	out := &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`), Retries: 2}
	p := &plan.Plan{Agent: plan.Agent{
		Name: "triage", Model: plan.Model{Provider: "openai", Name: "m1", Fallback: &plan.Fallback{Models: []string{"anthropic:m2"}}}, Instructions: "Triage.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       out,
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}, Fallbacks: []plan.FallbackModel{{Model: plan.Model{Provider: "anthropic", Name: "m2"}}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r := newRecording(t, false)
	rec := r.tel.Recorder(context.Background())
	run, err := agentrt.New(p, agentrt.Options{Model: primary, Events: rec.Event,
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return testmodel.Model{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run.Run(context.Background(), nil)
	if err != nil || rep.Outcome != agentrt.OutcomeOK || len(rep.Fallbacks) != 1 {
		t.Fatalf("the run: %v %+v", err, rep)
	}
	spans, _ := r.collect(t)
	var failed, served *tracetest.SpanStub
	for i, s := range spans {
		switch s.Name {
		case "chat m1":
			failed = &spans[i]
		case "chat m2":
			served = &spans[i]
		}
	}
	if failed == nil || served == nil {
		t.Fatalf("no chat span of each model: %v", spans.Snapshots())
	}
	if got := attrs(*failed); got["error.type"] != agentrt.EventModelFallback || got["gen_ai.provider.name"] != "openai" || failed.Status.Code != codes.Error {
		t.Errorf("the failed call's span: %v, status %v", got, failed.Status)
	}
	if len(failed.Events) == 0 || failed.Events[len(failed.Events)-1].Name != agentrt.EventModelFallback {
		t.Errorf("the failed call's span has no model_fallback event: %v", failed.Events)
	}
	if got := attrs(*served); got["gen_ai.provider.name"] != "anthropic" || got["error.type"] != "" {
		t.Errorf("the fallback's span: %v", got)
	}
}

// TestProviderNamesHeld: names a provider and its model choose reach the
// collector whatever the content switch, so they are held there: the
// model that answered ("gpt-4o-" and the key, as a hostile server
// answered) has the secret replaced, a tool the model made up is named
// telemetry.OtherTool on its span and metric, and a call's id is cut.
func TestProviderNamesHeld(t *testing.T) {
	round := 0
	longID := "call_" + strings.Repeat("x", 4000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		round++
		w.Header().Set("Content-Type", "application/json")
		// The first reply calls a tool the agent does not have; then the
		// answer, as a call of the output tool once the request offers
		// it, prose before.
		body, _ := io.ReadAll(r.Body)
		msg := `{"role":"assistant","content":"Done."}`
		if m := regexp.MustCompile(`"(answer_[0-9a-f]+)"`).FindStringSubmatch(string(body)); m != nil {
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"` + m[1] + `","arguments":"{\"ok\":true}"}}]}`
		} else if round == 1 {
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"` + longID + `","type":"function","function":{"name":"made_up_` + secret + `","arguments":"{}"}}]}`
		}
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-`+secret+`","choices":[{"index":0,"finish_reason":"stop","message":`+msg+`}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
	}))
	defer srv.Close()
	model, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	p := sealed(t, plan.Agent{
		Name: "triage", Model: plan.Model{Provider: "openai", Name: "gpt-4o"}, Instructions: "Triage.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"lookup": {Kind: "exec", Description: "Look up."}}},
		Output:       &plan.Output{Name: "answer", Description: "The verdict.", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`), Retries: 2},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}, nil)
	for _, content := range []bool{false, true} {
		round = 0
		r := newRecording(t, content)
		rec := r.tel.Recorder(context.Background())
		run, err := agentrt.New(p, agentrt.Options{Model: model, Tools: map[string]agentrt.Tool{"lookup": lookup{}}, Events: rec.Event, Secrets: r.secrets, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := run.Run(context.Background(), nil); err != nil || rep.Outcome != agentrt.OutcomeOK {
			t.Fatalf("the run: %v %+v", err, rep)
		}
		spans, rm := r.collect(t)
		var all []string
		toolSpans := 0
		for _, s := range spans {
			all = append(all, s.Name, s.Status.Description)
			for _, kv := range s.Attributes {
				all = append(all, kv.Value.Emit())
			}
			if s.Name == "execute_tool "+telemetry.OtherTool {
				toolSpans++
				a := attrs(s)
				if a["gen_ai.tool.name"] != telemetry.OtherTool || len(a["gen_ai.tool.call.id"]) > 128 {
					t.Errorf("content %v: the made-up tool's span: %v", content, a)
				}
			}
			if a := attrs(s); a["gen_ai.response.model"] != "" && a["gen_ai.response.model"] != "gpt-4o-"+redact.Marker {
				t.Errorf("content %v: the response model recorded as %q", content, a["gen_ai.response.model"])
			}
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
					for _, dp := range sum.DataPoints {
						for _, kv := range dp.Attributes.ToSlice() {
							all = append(all, kv.Value.Emit())
						}
					}
				}
			}
		}
		if toolSpans != 1 {
			t.Errorf("content %v: %d spans of the made-up tool, want 1", content, toolSpans)
		}
		text := strings.Join(all, "\n")
		// With content, the conversation recorded holds the reply as the
		// model wrote it (its secrets replaced); without, nothing of it.
		bad := []string{secret}
		if !content {
			bad = append(bad, "made_up", longID[:200])
		}
		for _, bad := range bad {
			if strings.Contains(text, bad) {
				t.Errorf("content %v: %q reached the collector", content, bad)
			}
		}
		if !strings.Contains(text, telemetry.OtherTool) {
			t.Errorf("content %v: no span or metric names the made-up tool %s", content, telemetry.OtherTool)
		}
	}
}

// TestRemoteRunContent: a run submitted elsewhere records its error's
// text (a provider's error may quote the request) only with content.
func TestRemoteRunContent(t *testing.T) {
	for _, content := range []bool{false, true} {
		r := newRecording(t, content)
		_, end := r.tel.RemoteRun(context.Background(), "triage")
		end(&agentrt.Report{Outcome: agentrt.OutcomeError, Error: "400 Bad Request: {\"messages\":[\"PRIVATE question\"]}"}, nil)
		_, end = r.tel.RemoteRun(context.Background(), "triage")
		end(nil, errors.New("the workflow failed: PRIVATE question "+secret))
		spans, _ := r.collect(t)
		if len(spans) != 2 {
			t.Fatalf("%d spans", len(spans))
		}
		for _, s := range spans {
			if s.Status.Code != codes.Error {
				t.Errorf("content %v: status %v, want an error", content, s.Status)
			}
			if got := strings.Contains(s.Status.Description, "PRIVATE"); got != content {
				t.Errorf("content %v: the error's text recorded: %q", content, s.Status.Description)
			}
			if strings.Contains(s.Status.Description, secret) {
				t.Errorf("content %v: the secret recorded: %q", content, s.Status.Description)
			}
		}
	}
}
