package runtime_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// denseText is n bytes of base64 of random bytes, the same every time:
// text of about 0.69 tokens a byte in o200k_base, where English makes
// about a quarter.
func denseText(n int) string {
	b := make([]byte, n*3/4)
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// underReporting is a model that gathers once, calling search with dense
// arguments, then answers, reporting a token for every 30 bytes of its
// request and its reply: above an eighth of a quarter of the bytes, and a
// twentieth of the real count.
func underReporting(q string) []turn {
	report := func(req *agentrt.Request, msg agentrt.Message) (*agentrt.Response, error) {
		in, _ := json.Marshal(req)
		out, _ := json.Marshal(msg)
		return &agentrt.Response{Message: msg, Usage: agentrt.Usage{Input: len(in)/30 + 1, Output: len(out)/30 + 1}}, nil
	}
	return []turn{
		func(req *agentrt.Request) (*agentrt.Response, error) {
			args, _ := json.Marshal(map[string]string{"q": q})
			return report(req, agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "c1", Name: "search", Arguments: args}}})
		},
		func(req *agentrt.Request) (*agentrt.Response, error) {
			return report(req, agentrt.Message{ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: json.RawMessage(`{"label":"bug"}`)}}})
		},
	}
}

func denseAgent(t *testing.T, doc string) *plan.Plan {
	return agent(t, func(a *plan.Agent) {
		keepsTools(a)
		a.Model = plan.Model{Provider: "openai", Name: "gpt-4o-2024-08-06", MaxOutputTokens: 4000}
		a.Instructions = "Check the document: " + doc
		a.Budgets.Tokens = 30000
		a.Budgets.AnswerReserve = 500
	})
}

// pooled are a run's options with a pool, whose reservations count each
// request with the model's tokeniser.
func pooled() agentrt.Options {
	return agentrt.Options{Provider: "openai", Pool: agentrt.NewPool(1 << 40)}
}

// TestCountedUsageDense: where agentc has the model's own tokeniser
// (OpenAI's models), a provider's usage report is held to half its count
// of the request and the reply, not to an eighth of a quarter of their
// bytes alone. On 20 KB of base64 a provider reporting a token for every
// 30 bytes passed that floor, 1/20 of the real count, and a run under a
// budget of 30,000 tokens ended ok having spent about 45,000.
func TestCountedUsageDense(t *testing.T) {
	doc, q := denseText(20000), denseText(4000)
	p := denseAgent(t, doc)
	res := runWith(t, p, pooled(), underReporting(q)...)
	rep := res.rep
	expect(t, rep, "ok", "token_budget", `{"label":"bug"}`)
	if !rep.UsageEstimated || len(rep.Rounds) != 2 {
		t.Fatalf("usage %+v, estimated %v, %d rounds: want both rounds counted by the tokeniser", rep.Usage, rep.UsageEstimated, len(rep.Rounds))
	}
	for i, rr := range rep.Rounds {
		req := res.model.reqs[i]
		// No files, no text past a mebibyte: the count is the request's.
		if in := agentrt.InputTokens("openai", req); rr.Usage.Input != in {
			t.Errorf("round %d: input %d, want the tokeniser's count %d", i+1, rr.Usage.Input, in)
		}
		if !rr.UsageEstimated || !strings.Contains(rr.UsageNote, "under half the") {
			t.Errorf("round %d: note %q", i+1, rr.UsageNote)
		}
	}
	// The dense arguments: about 0.69 tokens a byte, where the local
	// estimate is a quarter.
	if out := rep.Rounds[0].Usage.Output; out < len(q)/2 {
		t.Errorf("round 1: output %d for %d bytes of base64 arguments", out, len(q))
	}
	if rep.Usage.Total() < 2*len(doc)/2 {
		t.Errorf("usage %+v: two requests of %d bytes of base64 each", rep.Usage, len(doc))
	}

	// A run counting as before (a Temporal run started before the
	// change) takes the reports as they are.
	r, err := agentrt.New(p, agentrt.Options{Provider: "openai", Pool: agentrt.NewPool(1 << 40), Model: &scripted{turns: underReporting(q)},
		Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
	if err != nil {
		t.Fatal(err)
	}
	old, err := r.Run(agentrt.WithUsageByBytes(context.Background()), nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, old, "ok", "none", `{"label":"bug"}`)
	if old.UsageEstimated || old.Usage.Total() > 2000 {
		t.Errorf("counted as before: usage %+v, estimated %v; want the reports as they were", old.Usage, old.UsageEstimated)
	}
}

// TestCountedUsageWhereCounted: a report is held to the tokeniser's
// count only in a run that counts its requests with it anyway, to reserve
// them in a pool: loading its vocabulary for this alone doubled a
// one-call run's time. Without a pool, the report of a token every 30
// bytes stands, as it did before.
func TestCountedUsageWhereCounted(t *testing.T) {
	doc, q := denseText(2000), denseText(400)
	for _, pool := range []bool{false, true} {
		opts := agentrt.Options{Provider: "openai"}
		if pool {
			opts = pooled()
		}
		res := runWith(t, denseAgent(t, doc), opts, underReporting(q)...)
		if rep := res.rep; rep.UsageEstimated != pool {
			t.Errorf("pool %v: usage %+v, estimated %v", pool, rep.Usage, rep.UsageEstimated)
		}
	}
}

// TestCountedUsageDenseReplays: a journal says in its header whether its
// run held usage to the tokeniser's count; each replays as it ran, one
// recorded before the change (no exact_usage) with the reports as they
// were, one since with the tokeniser's count.
func TestCountedUsageDenseReplays(t *testing.T) {
	doc, q := denseText(20000), denseText(4000)
	p := denseAgent(t, doc)
	for _, exact := range []bool{true, false} {
		file := filepath.Join(t.TempDir(), "run.jsonl")
		h := benchHeader
		h.ExactUsage = exact
		w, err := journal.Create(file, h)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if !exact {
			ctx = agentrt.WithUsageByBytes(ctx) // as the agentc that recorded it ran
		}
		r, err := agentrt.New(p, agentrt.Options{Provider: "openai", Pool: agentrt.NewPool(1 << 40), Model: &scripted{turns: underReporting(q)}, Journal: &agentrt.Journal{Writer: w},
			Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Run(ctx, nil)
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rec.UsageEstimated != exact {
			t.Fatalf("exact %v: recorded usage %+v, estimated %v", exact, rec.Usage, rec.UsageEstimated)
		}
		sameRun(t, "replay", rec, replay(t, p, file, agentrt.Options{Provider: "openai", Pool: agentrt.NewPool(1 << 40), Tools: map[string]agentrt.Tool{"search": &echoTool{name: "search"}}}))
	}
}
