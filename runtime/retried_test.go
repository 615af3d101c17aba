package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// retriedNote reads what a round's note says its answered attempts that
// failed were charged.
func retriedCharge(t *testing.T, note string) agentrt.Usage {
	t.Helper()
	_, after, ok := strings.Cut(note, "failed were charged as estimated: ")
	if !ok {
		_, after, ok = strings.Cut(note, "failed was charged as estimated: ")
	}
	var u agentrt.Usage
	if !ok {
		t.Fatalf("the note %q says nothing of the attempts", note)
	}
	if _, err := fmt.Sscanf(after, "%d in, %d out", &u.Input, &u.Output); err != nil {
		t.Fatalf("the note %q: %v", note, err)
	}
	return u
}

// TestRetriedAttemptsCharged: a reply that came after attempts the
// provider answered and that failed (Retried) is charged for them too, as
// estimated: the request's input for each, and the reply they read (400
// bytes, 100 tokens), to the round, the run and its cost. A journal records
// them with the reply, and its replay charges the same.
func TestRetriedAttemptsCharged(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { a.Model.MaxOutputTokens = 256 })
	retriedAnswer := func(req *agentrt.Request) (*agentrt.Response, error) {
		resp, err := answer(`{"label":"bug"}`, 200)(req)
		resp.Retried = agentrt.Retried{Attempts: 2, Bytes: 400}
		return resp, err
	}
	rep := runWith(t, p, agentrt.Options{}, retriedAnswer).rep
	expect(t, rep, "ok", "none", `{"label":"bug"}`)
	lost := retriedCharge(t, rep.Rounds[0].UsageNote)
	if lost.Output != 100 || lost.Input <= 0 || lost.Input%2 != 0 {
		t.Errorf("the attempts were charged %+v: want 100 out, and the request's input twice", lost)
	}
	want := usage(200).Add(lost)
	if rep.Usage != want || rep.Rounds[0].Usage != want || !rep.UsageEstimated {
		t.Errorf("usage %+v (round %+v, estimated %v), want %+v, estimated", rep.Usage, rep.Rounds[0].Usage, rep.UsageEstimated, want)
	}

	file := filepath.Join(t.TempDir(), "run.jsonl")
	rec := journaled(t, p, file, false, &scripted{turns: []turn{retriedAnswer}}, agentrt.Options{})
	if rec.Usage != want {
		t.Errorf("recorded: usage %+v, want %+v", rec.Usage, want)
	}
	got := replay(t, p, file, agentrt.Options{})
	if got.Usage != want || got.UsageReplayed != want {
		t.Errorf("replay: usage %+v (replayed %+v), want %+v", got.Usage, got.UsageReplayed, want)
	}
}

// TestRetriedAttemptsEndBudget: attempts made again are charged against
// the token budget: a run whose first call's lost attempts spent the
// budget makes no second call. Before they were charged, it went on.
func TestRetriedAttemptsEndBudget(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model.MaxOutputTokens = 256
		a.Budgets.Tokens = 1000
	})
	search := func(req *agentrt.Request) (*agentrt.Response, error) {
		resp, err := call(40, "search", `{"q":"x"}`)(req)
		resp.Retried = agentrt.Retried{Attempts: 4, Bytes: 4 * 1000}
		return resp, err
	}
	res := runWith(t, p, agentrt.Options{}, search, answer(`{"label":"bug"}`, 10))
	expect(t, res.rep, "error", agentrt.BoundTokenBudget, "")
	if n := len(res.model.reqs); n != 1 {
		t.Errorf("%d model calls, want 1: the lost attempts spent the budget", n)
	}
	if res.rep.Usage.Output != 20+1000 {
		t.Errorf("output charged %d, want the reply's 20 and the attempts' 1,000", res.rep.Usage.Output)
	}
}

// TestRetriedFailureCharged: a call that failed after attempts the
// provider answered (every stream cut) is charged for them, within what
// they could make (three attempts of at most 256 tokens: 768, not the 1,500
// their bytes would count), and a journal's replay charges the same; a run
// counting as before (a Temporal run started before failed calls were
// charged) charges nothing.
func TestRetriedFailureCharged(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { a.Model.MaxOutputTokens = 256 })
	cut := func(*agentrt.Request) (*agentrt.Response, error) {
		return nil, agentrt.WithRetried(errors.New("the stream ended before the reply did"), agentrt.Retried{Attempts: 3, Bytes: 6000})
	}
	rep := runWith(t, p, agentrt.Options{}, cut).rep
	expect(t, rep, "error", "none", "")
	lost := retriedCharge(t, rep.Rounds[0].UsageNote)
	if lost.Output != 768 || lost.Input <= 0 || lost.Input%3 != 0 || rep.Usage != lost {
		t.Errorf("usage %+v, attempts charged %+v: want 768 out and the request's input three times", rep.Usage, lost)
	}

	file := filepath.Join(t.TempDir(), "run.jsonl")
	rec := journaled(t, p, file, false, &scripted{turns: []turn{cut}}, agentrt.Options{})
	got := replay(t, p, file, agentrt.Options{})
	if rec.Usage != lost || got.Usage != lost || got.UsageReplayed != lost {
		t.Errorf("recorded %+v, replayed %+v (%+v); want %+v", rec.Usage, got.Usage, got.UsageReplayed, lost)
	}

	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: []turn{cut}}})
	if err != nil {
		t.Fatal(err)
	}
	old, err := r.Run(agentrt.WithFailedUnspent(context.Background()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if old.Usage != (agentrt.Usage{}) {
		t.Errorf("counted as before: usage %+v, want none", old.Usage)
	}
}

// TestRetriedFromJournalHeld: a journal's figures of lost attempts are as
// untrusted as the rest of it: attempts and bytes past any count charge no
// more than a call could, and negative ones give nothing back.
func TestRetriedFromJournalHeld(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { a.Model.MaxOutputTokens = 256 })
	for _, r := range []agentrt.Retried{{Attempts: 1 << 62, Bytes: 1 << 62}, {Attempts: 2, Bytes: -1 << 40}} {
		turn := func(req *agentrt.Request) (*agentrt.Response, error) {
			resp, err := answer(`{"label":"bug"}`, 10)(req)
			resp.Retried = r
			return resp, err
		}
		rep := runWith(t, p, agentrt.Options{}, turn).rep
		if rep.Usage.Input < 5 || rep.Usage.Output < 5 || rep.Usage.Input > 1<<32+1000 || rep.Usage.Output > 1<<32+1000 {
			t.Errorf("%+v: usage %+v", r, rep.Usage)
		}
	}
}

// TestRetriedAttemptsPricedEach: a call's attempts the provider answered
// and lost are calls of their own, each priced at the tier its own input
// reaches, not at the tier of their inputs summed. A model whose tier
// starts above one call's input priced a round of a reply and two lost
// attempts, its input three times that, at the tier for every token,
// twice the base price; so did a failed call with its lost attempts.
func TestRetriedAttemptsPricedEach(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		a.Model = plan.Model{Provider: "openai", Name: "tiered", MaxOutputTokens: 256}
	})
	retried := func(req *agentrt.Request) (*agentrt.Response, error) {
		resp, err := answer(`{"label":"bug"}`, 200)(req)
		resp.Retried = agentrt.Retried{Attempts: 2, Bytes: 400}
		return resp, err
	}
	cut := func(*agentrt.Request) (*agentrt.Response, error) {
		return nil, agentrt.WithRetried(errors.New("the stream ended before the reply did"), agentrt.Retried{Attempts: 2, Bytes: 400})
	}
	// The request's input, as a lost attempt is charged it.
	first := runWith(t, p, agentrt.Options{Provider: "openai"}, retried).rep
	in := retriedCharge(t, first.Rounds[0].UsageNote).Input / 2
	above := max(in, usage(200).Input) + 1 // past any one call's input, below two
	if 2*in <= above {
		t.Fatalf("a lost attempt's input is %d: two do not pass the tier at %d", in, above)
	}
	table, err := cost.Parse("p.json", []byte(fmt.Sprintf(`{"as_of": "2025-01-01", "models": {"openai": {"tiered": {
		"input": 1, "output": 4, "context_window": 100000, "tiers": [{"above": %d, "input": 2, "output": 8}]}}}}`, above)), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, turn := range map[string]turn{"answered": retried, "failed": cut} {
		rep := runWith(t, p, agentrt.Options{Provider: "openai", Prices: table}, turn).rep
		u := rep.Usage
		if u.Input <= above {
			t.Fatalf("%s: %d in charged, not past the tier at %d", name, u.Input, above)
		}
		want := (float64(u.Input)*1 + float64(u.Output)*4) / 1e6 // each call below the tier
		if d := rep.Cost.USD - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: usage %+v cost $%v, want $%v: each call at the price its own input reaches", name, u, rep.Cost.USD, want)
		}
	}
}
