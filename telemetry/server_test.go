package telemetry_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
)

// TestServer: each request a server makes is a span of kind server, named
// by its method and route, a child of the caller's span when the request
// carries trace context; the run it makes is recorded under it; a 5xx
// marks it failed; a method no convention names is _OTHER.
func TestServer(t *testing.T) {
	r := newRecording(t, false)
	p := &plan.Plan{Agent: plan.Agent{
		Name: "labeler", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Label it.",
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       &plan.Output{Name: "answer", Description: "The label.", Mode: "tool", Enforce: "local", Retries: 2, Schema: json.RawMessage(`{"type":"object","properties":{"label":{"enum":["bug","feature"]}},"required":["label"]}`)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	runner, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents/{name}/runs", func(w http.ResponseWriter, req *http.Request) {
		rep, err := runner.WithEvents(r.tel.RunEvents(req.Context())).Run(req.Context(), nil)
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			http.Error(w, "the run failed", 500)
			return
		}
		w.Write(rep.Answer)
	})
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 503) })
	srv := httptest.NewServer(r.tel.Server(mux))
	defer srv.Close()
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader("{}"))
	req.Header.Set("traceparent", "00-"+parentTrace+"-"+parentSpan+"-01")
	for _, rq := range []*http.Request{req, mustRequest(t, "GET", srv.URL+"/boom"), mustRequest(t, "BREW", srv.URL+"/pot")} {
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	spans, _ := r.collect(t)
	byName := map[string]int{}
	for i, s := range spans {
		byName[s.Name] = i
	}
	i, ok := byName["POST /v1/agents/{name}/runs"]
	if !ok {
		t.Fatalf("no server span of the run's request among %v", byName)
	}
	server := spans[i]
	a := attrs(server)
	if server.SpanKind != trace.SpanKindServer || a["http.request.method"] != "POST" || a["http.route"] != "/v1/agents/{name}/runs" ||
		a["http.response.status_code"] != "200" || server.Parent.SpanID().String() != parentSpan || server.SpanContext.TraceID().String() != parentTrace {
		t.Errorf("the request's span: kind %v, attributes %v, parent %v", server.SpanKind, a, server.Parent)
	}
	var run bool
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "invoke_agent") && s.Parent.SpanID() == server.SpanContext.SpanID() {
			run = true
		}
	}
	if !run {
		t.Errorf("no run span under the request's: %v", byName)
	}
	if j, ok := byName["GET /boom"]; !ok || spans[j].Status.Code != codes.Error || attrs(spans[j])["http.response.status_code"] != "503" {
		t.Errorf("a 503: %v", byName)
	}
	if j, ok := byName["_OTHER"]; !ok || attrs(spans[j])["http.request.method"] != "_OTHER" {
		t.Errorf("a made-up method: %v", byName)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
