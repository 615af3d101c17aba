package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
)

// planted is the secret the tests plant, and search every output for.
const planted = "sk-planted-Zq7x2Lw9"

func withPlanted() *redact.Set {
	s := &redact.Set{}
	s.Add(planted)
	return s
}

// TestSecretsRedacted: a secret in the input, in what the model says and
// in a tool's result reaches neither the model nor the events, the report
// or the journal; a replay of that journal is the same run.
func TestSecretsRedacted(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Prompt = "Label this: {{.text}}"
	})
	input := json.RawMessage(`{"text":"my key is ` + planted + `"}`)
	turns := func() *scripted {
		return &scripted{turns: []turn{
			call(10, "search", `{"q":"`+planted+`"}`),
			// The key again, written with a JSON escape: found once the
			// arguments are canonical.
			call(10, "search", `{"q":"\u0073`+planted[1:]+`"}`),
			// A server that echoes the key in a tool call's ID: the ID,
			// redacted, is what the conversation and the journal hold.
			func(req *agentrt.Request) (*agentrt.Response, error) {
				return &agentrt.Response{Message: agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "call_" + planted, Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}},
					// And in the provider's state, which goes back too.
					State: &agentrt.ProviderState{Provider: "openai-responses", Data: json.RawMessage(`[{"type":"reasoning","id":"rs_` + planted + `"}]`)}}, Usage: usage(10)}, nil
			},
			prose("The key was "+planted+".", 10),
			answer(`{"label":"bug"}`, 10),
		}}
	}
	var toolGot []string
	tool := &echoTool{name: "search", fn: func(args json.RawMessage) (agentrt.ToolResult, error) {
		toolGot = append(toolGot, string(args))
		return agentrt.ToolResult{Content: "found " + planted}, nil
	}}
	var events []agentrt.Event
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	model := turns()
	r, err := agentrt.New(p, agentrt.Options{Model: model, Tools: map[string]agentrt.Tool{"search": tool}, Secrets: withPlanted(),
		Journal: &agentrt.Journal{Writer: w}, Events: func(e agentrt.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(context.Background(), input)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rec, agentrt.OutcomeOK, agentrt.BoundNone, `{"label":"bug"}`)

	for i, req := range model.reqs {
		b, _ := json.Marshal(req)
		if strings.Contains(string(b), planted) {
			t.Errorf("request %d sent the secret: %s", i+1, b)
		}
	}
	if last, _ := json.Marshal(model.reqs[len(model.reqs)-1].Messages); !strings.Contains(string(last), "found [redacted]") || !strings.Contains(string(last), "my key is [redacted]") || !strings.Contains(string(last), `"call_[redacted]"`) {
		t.Errorf("the model did not get the redacted texts: %s", last)
	}
	if len(toolGot) != 3 || toolGot[0] != `{"q":"[redacted]"}` || toolGot[1] != `{"q":"[redacted]"}` {
		t.Errorf("the tool got %q", toolGot)
	}
	evs, _ := json.Marshal(events)
	report, _ := json.Marshal(rec)
	jn, _ := os.ReadFile(file)
	for what, text := range map[string][]byte{"events": evs, "report": report, "journal": jn} {
		if strings.Contains(string(text), planted) {
			t.Errorf("the %s hold the secret: %s", what, text)
		}
	}
	if !strings.Contains(string(jn), "found [redacted]") {
		t.Errorf("the journal does not hold the tool's result, redacted:\n%s", jn)
	}

	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}, Secrets: withPlanted(),
		Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "replay", rec, rep)
}

// TestProviderErrorRedacted: a provider error that echoes a secret is
// redacted in the report, the events and the journal, and replays so.
func TestProviderErrorRedacted(t *testing.T) {
	p := agent(t, nil)
	file := filepath.Join(t.TempDir(), "run.jsonl")
	var events []agentrt.Event
	opts := agentrt.Options{Secrets: withPlanted(), Events: func(e agentrt.Event) { events = append(events, e) }}
	rec := journaled(t, p, file, false, failing{errors.New("openai: 401 Unauthorized: Incorrect API key provided: " + planted)}, opts)
	want := "model m1: openai: 401 Unauthorized: Incorrect API key provided: [redacted]"
	if rec.Error != want {
		t.Errorf("report error %q, want %q", rec.Error, want)
	}
	evs, _ := json.Marshal(events)
	jn, _ := os.ReadFile(file)
	if strings.Contains(string(evs), planted) || strings.Contains(string(jn), planted) {
		t.Errorf("the secret is in the events or the journal:\n%s\n%s", evs, jn)
	}
	if rep := replay(t, p, file, agentrt.Options{Secrets: withPlanted()}); rep.Error != want {
		t.Errorf("replayed error %q, want %q", rep.Error, want)
	}
}

// TestJournalFullEndsRun: a run whose journal would pass the most a
// journal is read back at ends there, outcome error, saying so; the
// journal holds what came before and replays up to it.
func TestJournalFullEndsRun(t *testing.T) {
	defer func(fl int64) { journal.MaxFile = fl }(journal.MaxFile)
	journal.MaxFile = 6 << 10
	p := agent(t, withTool)
	var turns []turn
	for i := range 40 {
		turns = append(turns, call(10, "search", fmt.Sprintf(`{"q":"%s"}`, strings.Repeat("x", 100+i))))
	}
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, benchHeader)
	if err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: turns}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}},
		Journal: &agentrt.Journal{Writer: w}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(context.Background(), json.RawMessage(`{"title":"x"}`))
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != agentrt.OutcomeError || !strings.Contains(rec.Error, "the most a journal is read back at") {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	j, err := journal.Open(file)
	if err != nil {
		t.Fatalf("the journal does not read back: %v", err)
	}
	// A replay ends where the journal does, at the effect it lacks.
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}},
		Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), json.RawMessage(`{"title":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Divergence == nil || !strings.Contains(rep.Divergence.Reason, "the journal lacks effect") {
		t.Errorf("the replay: %s %s %+v", rep.Outcome, rep.Error, rep.Divergence)
	}
}
