// Package echotest is for the providers' tests: it runs an agent against
// a provider's Model whose server echoes the credentials it was sent, in
// errors and in answers, and finds them in what the run wrote — its
// report (which holds the answer), its events and its journal.
package echotest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
)

// Plan is an agent on provider's model whose answer is the JSON object
// {"note": TEXT}, asked for in its instructions (prompted mode): a
// server's answer text is the answer.
func Plan(t testing.TB, provider, model string) *plan.Plan {
	t.Helper()
	schema := json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"],"additionalProperties":false}`)
	p := &plan.Plan{Agent: plan.Agent{
		Name:         "echo",
		Model:        plan.Model{Provider: provider, Name: model},
		Instructions: "Say what you were sent.",
		Output:       &plan.Output{Name: "answer", Description: "What was sent.", Mode: plan.ModePrompted, Enforce: "local", Schema: schema},
	}}
	p.Output = &plan.Lowering{Provider: provider, Mode: plan.ModePrompted, Schema: schema}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Outputs is what a run wrote, each as text.
type Outputs struct {
	Report  string // the report, as agentc run --report writes it (its answer and error in it)
	Events  string // the events, one JSON object a line
	Journal string // the journal file
	Rep     *agentrt.Report
}

// Run runs p once against m, with secrets the run's secret set,
// recording its journal and its events, and returns what it wrote.
func Run(t testing.TB, p *plan.Plan, m agentrt.Model, secrets *redact.Set) Outputs {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: string(p.Digests.Plan), Run: "echo", Agent: p.Agent.Name, Started: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events bytes.Buffer
	enc := json.NewEncoder(&events)
	opts := agentrt.Options{Model: m, Secrets: secrets, Journal: &agentrt.Journal{Writer: w},
		Events: func(ev agentrt.Event) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(ev)
		}}
	r, err := agentrt.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := r.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return Outputs{Report: string(b), Events: events.String(), Journal: string(data), Rep: rep}
}

// NoneShows fails t for each of values that shows, in any letter case,
// in what the run wrote.
func (o Outputs) NoneShows(t testing.TB, values ...string) {
	t.Helper()
	for _, v := range values {
		for what, text := range map[string]string{"the report": o.Report, "the events": o.Events, "the journal": o.Journal} {
			if i := strings.Index(strings.ToLower(text), strings.ToLower(v)); i >= 0 {
				t.Errorf("%s shows %q: …%s…", what, v, text[max(i-120, 0):min(i+len(v)+40, len(text))])
			}
		}
	}
}

// Shows fails t unless text shows in what the run wrote: the echo was
// there to find, redacted.
func (o Outputs) Shows(t testing.TB, where, text string) {
	t.Helper()
	var hay string
	switch where {
	case "report":
		hay = o.Report
	case "events":
		hay = o.Events
	case "journal":
		hay = o.Journal
	}
	if !strings.Contains(hay, text) {
		t.Errorf("the %s does not show %q:\n%s", where, text, hay)
	}
}
