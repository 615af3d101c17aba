package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// cutReply fails as a provider does whose reply was cut at the token
// limit, the reply billed: the error carries the usage reported.
func cutReply(*agentrt.Request) (*agentrt.Response, error) {
	return nil, agentrt.Spent(errors.New("the output was cut at the token limit"), agentrt.Usage{Input: 100, Output: 256})
}

// TestFailedCallCharged: a model call that failed after a whole reply its
// provider billed (cut at the token limit) is charged what the provider
// reported, to the round, the run and its cost; it was charged nothing.
// A journal records it, and its replay charges the same; a run counting as
// before (a Temporal run started before the change) charges nothing.
func TestFailedCallCharged(t *testing.T) {
	p := agent(t, func(a *plan.Agent) { a.Model.MaxOutputTokens = 256 })
	want := agentrt.Usage{Input: 100, Output: 256}
	res := runWith(t, p, agentrt.Options{}, cutReply)
	rep := res.rep
	expect(t, rep, "error", "none", "")
	if rep.Usage != want || len(rep.Rounds) != 1 || rep.Rounds[0].Usage != want {
		t.Fatalf("usage %+v, rounds %+v; want %+v charged to the round", rep.Usage, rep.Rounds, want)
	}
	if !strings.Contains(rep.Rounds[0].UsageNote, "the failed call was charged what the provider reported of its reply: 100 in, 256 out") {
		t.Errorf("note %q", rep.Rounds[0].UsageNote)
	}

	file := filepath.Join(t.TempDir(), "run.jsonl")
	rec := journaled(t, p, file, false, &scripted{turns: []turn{cutReply}}, agentrt.Options{})
	if rec.Usage != want {
		t.Errorf("recorded: usage %+v, want %+v", rec.Usage, want)
	}
	got := replay(t, p, file, agentrt.Options{})
	if got.Usage != want || got.UsageReplayed != want || got.Outcome != rec.Outcome {
		t.Errorf("replay: %s, usage %+v (replayed %+v); want %s, %+v", got.Outcome, got.Usage, got.UsageReplayed, rec.Outcome, want)
	}

	r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: []turn{cutReply}}})
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
