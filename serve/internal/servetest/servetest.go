// Package servetest holds the agents the tests of package serve and its
// bindings serve.
package servetest

import (
	"encoding/json"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
)

// Reader is an agent that takes a text file, note, of at most 66 bytes
// (its base64 within 88), and a title, run by the test model, its files
// kept in a store of its own.
func Reader(t testing.TB) serve.Agent {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "reader", Description: "Reads a note.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Say what the note is about.",
		Input: &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},` +
			`"note":{"type":"string","contentEncoding":"base64","contentMediaType":"text/plain","maxLength":88}},"required":["note"]}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       &plan.Output{Name: "answer", Description: "The topic.", Mode: "tool", Enforce: "local", Retries: 2, Schema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() }) // before the directory is removed

	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r, Files: store}
}

// Log sets runs' log (Runs.SetLog) to one the test reads: lines returns
// what it has been told so far, read under its lock.
func Log(runs *serve.Runs) (lines func() []string) {
	var mu sync.Mutex
	var logged []string
	runs.SetLog(func(line string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, line)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), logged...)
	}
}
