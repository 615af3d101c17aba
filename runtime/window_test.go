package runtime_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// windowPrices gives two models context windows: 1,000 tokens, which no
// request of more than 128,000 bytes of text can fit whatever its
// tokeniser (no token is longer than 128 bytes), and 1,000,000.
func windowPrices(t *testing.T) *cost.Table {
	t.Helper()
	tab, err := cost.Parse("p.json", []byte(`{"as_of": "2025-01-01", "models": {"openai": {
		"small-window": {"input": 1, "output": 1, "context_window": 1000},
		"big-window": {"input": 1, "output": 1, "context_window": 1000000}}}}`), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// flood calls the search tool beside text of n bytes: the conversation
// grows past the small window in one reply.
func flood(n int) turn {
	return func(req *agentrt.Request) (*agentrt.Response, error) {
		resp, err := call(10, "search", `{"q":"x"}`)(req)
		resp.Message.Content = strings.Repeat("a", n)
		return resp, err
	}
}

// TestContextWindow: a request whose text is more than the model's
// context window could hold at the longest token any tokeniser has (128
// bytes) is not sent: the run ends, outcome error and no bound (exit 1,
// as the provider's refusal would), naming the window. The failed call is
// journaled: a replay ends there too, calling nothing, and a resume
// refuses it again. A request within the bound is sent.
func TestContextWindow(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "small-window"}
	})
	tab := windowPrices(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(path, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: tab, Journal: &agentrt.Journal{Writer: w}},
		flood(200_000), answer(`{"label":"bug"}`, 10))
	w.Close()
	expect(t, r.rep, "error", "none", "")
	const why = "model small-window: the request was not sent: it holds 200"
	if !strings.HasPrefix(r.rep.Error, why) || !strings.Contains(r.rep.Error, "at least 1565 tokens at 128 bytes a token") ||
		!strings.Contains(r.rep.Error, "more than the model's context window of 1000 tokens (the price table's for openai small-window)") {
		t.Errorf("error %q", r.rep.Error)
	}
	if len(r.model.reqs) != 1 || len(r.rep.Rounds) != 2 {
		t.Errorf("%d requests sent over %d rounds, want 1 over 2", len(r.model.reqs), len(r.rep.Rounds))
	}

	rec, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	replay := runWith(t, p, agentrt.Options{Provider: "openai", Prices: tab, Journal: &agentrt.Journal{Recorded: rec, Replay: true}})
	if replay.rep.Error != r.rep.Error || replay.rep.Divergence != nil || len(replay.model.reqs) != 0 {
		t.Errorf("replay: %d requests, error %q", len(replay.model.reqs), replay.rep.Error)
	}

	resume := runWith(t, p, agentrt.Options{Provider: "openai", Prices: tab, Journal: &agentrt.Journal{Recorded: rec}})
	if resume.rep.Error != r.rep.Error || len(resume.model.reqs) != 0 {
		t.Errorf("resume: %d requests, error %q", len(resume.model.reqs), resume.rep.Error)
	}

	// 127,000 bytes: at least 992 tokens, which the window may hold.
	within := runWith(t, p, agentrt.Options{Provider: "openai", Prices: tab}, flood(127_000), answer(`{"label":"bug"}`, 10))
	expect(t, within.rep, "ok", "none", `{"label":"bug"}`)
}

// TestContextWindowFallsBack: a request past the model's window is a
// failure of class too_long, which a fallback of a larger window serves.
func TestContextWindowFallsBack(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "small-window", Fallback: &plan.Fallback{Models: []string{"openai:big-window"}}}
	})
	p.Fallbacks = []plan.FallbackModel{{Model: plan.Model{Provider: "openai", Name: "big-window"}}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	big := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: windowPrices(t),
		FallbackModel: func(*plan.Plan) (agentrt.Model, error) { return big, nil }},
		flood(200_000))
	expect(t, r.rep, "ok", "none", `{"label":"bug"}`)
	if len(r.model.reqs) != 1 || len(big.reqs) != 1 {
		t.Errorf("%d requests to the small window, %d to the big one; want 1 and 1", len(r.model.reqs), len(big.reqs))
	}
	if len(r.rep.Fallbacks) != 1 || r.rep.Fallbacks[0].Class != agentrt.FailureTooLong || r.rep.Fallbacks[0].To.Model != "big-window" {
		t.Errorf("fallbacks %+v", r.rep.Fallbacks)
	}
}

// TestRequestsUnderTheirWindow: a conversation grown by many replies is
// counted whole (five of 30,000 bytes pass the small window's 128,000, and
// the sixth request is not sent), and a model the price table gives no
// window is never refused.
func TestRequestsUnderTheirWindow(t *testing.T) {
	for _, tc := range []struct {
		model string
		sent  int
	}{{"small-window", 5}, {"no-window", 6}} {
		p := agent(t, func(a *plan.Agent) {
			withTool(a)
			a.Model = plan.Model{Provider: "openai", Name: tc.model}
		})
		turns := []turn{}
		for range 5 {
			turns = append(turns, flood(30_000))
		}
		r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: windowPrices(t)}, append(turns, answer(`{"label":"bug"}`, 10))...)
		if len(r.model.reqs) != tc.sent {
			t.Errorf("%s: %d requests sent, want %d (%s)", tc.model, len(r.model.reqs), tc.sent, r.rep.Error)
		}
	}
}

// TestContextWindowTextFile: a text file is text: its bytes count toward
// the window's bound as a message's do, and a request carrying one past it
// is not sent.
func TestContextWindowTextFile(t *testing.T) {
	store, bs := storeWith(t, pdfBytes, strings.Repeat("Some notes.\n", 11_000)) // 132,000 bytes
	in := json.RawMessage(`{"doc": {"digest": "` + bs[0].Digest + `"}, "extra": {"digest": "` + bs[1].Digest + `"}}`)
	p := agent(t, func(a *plan.Agent) {
		a.Input = &plan.Input{Schema: json.RawMessage(fileSchema)}
		a.Model = plan.Model{Provider: "openai", Name: "small-window"}
	})
	model := &scripted{turns: []turn{answer(`{"label":"bug"}`, 10)}}
	r, err := agentrt.New(p, agentrt.Options{Model: model, Files: store, Provider: "openai", Prices: windowPrices(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(model.reqs) != 0 || !strings.Contains(rep.Error, "more than the model's context window of 1000 tokens") {
		t.Errorf("%d requests sent; %s", len(model.reqs), rep.Error)
	}
}

// TestContextWindowBoundExact: the bound is 128 bytes of text for each
// token of the window: a request of 128 × 1000 bytes, which 1000 tokens
// of 128 bytes may hold, is sent to the model of a 1000-token window, and
// one of a byte more, which needs 1001, is not. The byte more was sent:
// the fewest tokens were counted rounding down.
func TestContextWindowBoundExact(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "small-window"}
	})
	// The second request's text beside the flood's, measured on a model
	// without a window.
	probe := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "no-window"}
	})
	r := runWith(t, probe, agentrt.Options{Provider: "openai", Prices: windowPrices(t)}, flood(1000), answer(`{"label":"bug"}`, 10))
	if len(r.model.reqs) != 2 {
		t.Fatalf("%d requests", len(r.model.reqs))
	}
	rest := agentrt.RequestText(r.model.reqs[1]) - 1000
	for _, tc := range []struct {
		text int
		sent bool
	}{{128 * 1000, true}, {128*1000 + 1, false}} {
		r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: windowPrices(t)}, flood(tc.text-rest), answer(`{"label":"bug"}`, 10))
		if got := len(r.model.reqs) == 2; got != tc.sent {
			t.Errorf("a request of %d bytes of text: sent %v, want %v (%s)", tc.text, got, tc.sent, r.rep.Error)
		}
		if !tc.sent && !strings.Contains(r.rep.Error, "holds 128001 bytes of text, at least 1001 tokens") {
			t.Errorf("error %q", r.rep.Error)
		}
	}
	// A Temporal run started before counted rounding down, and sent it.
	m := &scripted{turns: []turn{flood(128*1000 + 1 - rest), answer(`{"label":"bug"}`, 10)}}
	old, err := agentrt.New(p, agentrt.Options{Model: m, Provider: "openai", Prices: windowPrices(t), Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := old.Run(agentrt.WithWindowFloor(context.Background()), nil); err != nil || len(m.reqs) != 2 {
		t.Errorf("rounding down: %d requests sent, want 2 (%v, %s)", len(m.reqs), err, rep.Error)
	}
}
