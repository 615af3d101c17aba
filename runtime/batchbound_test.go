package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/provider/openai"
)

// manyCallsServer is an OpenAI Chat Completions server whose first turn
// calls tool search n times in one reply; a later turn gives the answer.
// It counts the requests it is sent.
func manyCallsServer(t *testing.T, n int, sent *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []json.RawMessage `json:"messages"`
			Tools    []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var calls []string
		if len(req.Messages) <= 2 {
			for i := range n {
				calls = append(calls, fmt.Sprintf(`{"id":"call_%d","type":"function","function":{"name":"search","arguments":"{\"q\":\"%d\"}"}}`, i, i))
			}
		} else {
			for _, tl := range req.Tools {
				if strings.HasPrefix(tl.Function.Name, "answer") {
					calls = append(calls, fmt.Sprintf(`{"id":"call_a","type":"function","function":{"name":%q,"arguments":"{\"label\":\"bug\"}"}}`, tl.Function.Name))
				}
			}
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"small-window",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[%s]}}],
"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, strings.Join(calls, ","))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCallsPastBound: one reply calls a tool 40 times and each result is
// 10,000 bytes. Once the results put the conversation past
// MaxConversation (lowered here to 128,000 bytes), the calls left are not
// made: each has an error result saying why. The next request goes to
// the model, whose window (1,000 tokens, the price table's) it is past:
// it is refused before it is sent, and journaled as a call that failed. A
// replay and a resume of the journal decide the same, call nothing and
// send nothing, whatever price table they read.
func TestCallsPastBound(t *testing.T) {
	defer func(m int) { agentrt.MaxConversation = m }(agentrt.MaxConversation)
	agentrt.MaxConversation = 128_000
	var sent atomic.Int32
	m, err := openai.New(openai.Config{BaseURL: manyCallsServer(t, 40, &sent), APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "small-window"}
	})
	search := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: strings.Repeat("r", 10_000)}, nil
	}}
	run := func(ctx context.Context, j *agentrt.Journal, prices bool) *agentrt.Report {
		t.Helper()
		o := agentrt.Options{Model: m, Provider: "openai", Tools: map[string]agentrt.Tool{"search": search}, Journal: j}
		if prices {
			o.Prices = windowPrices(t)
		}
		r, err := agentrt.New(p, o)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// Each result adds about 10,020 bytes to a conversation that starts
	// with a few thousand (the instructions, the tools, the reply): after
	// the thirteenth it holds more than 128,000, and the fourteenth call
	// is not made.
	const made = 13
	check := func(what string, rep *agentrt.Report, calls, requests int) {
		t.Helper()
		expect(t, rep, "error", "none", "")
		if !strings.Contains(rep.Error, "the request was not sent") || !strings.Contains(rep.Error, "context window of 1000 tokens") {
			t.Errorf("%s: error %q, want the next request refused", what, rep.Error)
		}
		if search.calls != calls || int(sent.Load()) != requests {
			t.Errorf("%s: the tool ran %d times and %d requests were sent, want %d and %d", what, search.calls, sent.Load(), calls, requests)
		}
		if rep.ToolCalls != made || len(rep.Rounds) != 2 || len(rep.Rounds[0].ToolCalls) != 40 {
			t.Fatalf("%s: %d calls made, %d rounds, want %d made of 40 in the first of 2", what, rep.ToolCalls, len(rep.Rounds), made)
		}
		for i, c := range rep.Rounds[0].ToolCalls {
			notCalled := strings.HasPrefix(c.Error, "not called: the conversation holds ") &&
				strings.Contains(c.Error, "more than the 128000 a conversation may hold, and no call of this reply past that is made")
			if (i >= made) != notCalled || c.IsError != (i >= made) {
				t.Errorf("%s: call %d: error %v %q", what, i+1, c.IsError, c.Error)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(path, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", CalleeBudget: true})
	if err != nil {
		t.Fatal(err)
	}
	check("run", run(context.Background(), &agentrt.Journal{Writer: w}, true), made, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range rec.Entries {
		keys = append(keys, e.Key.String())
	}
	if len(keys) != 2+made || keys[0] != "1.0" || keys[made] != fmt.Sprintf("1.%d", made) || keys[made+1] != "2.0" {
		t.Errorf("the journal holds %v, want the model call, the %d calls made and the refused request, nothing of the calls not made", keys, made)
	}

	// A replay or a resume without the price table that gave the window
	// serves the refused request as recorded.
	search.calls = 0
	check("replay", run(context.Background(), &agentrt.Journal{Recorded: rec, Replay: true}, false), 0, 1)
	check("resume", run(context.Background(), &agentrt.Journal{Recorded: rec}, true), 0, 1)

	// A run recorded before the bound made every call: its journal
	// replays as it ran, every call served.
	sent.Store(0)
	old := filepath.Join(t.TempDir(), "old.jsonl")
	if w, err = journal.Create(old, journal.Header{Plan: string(p.Digests.Plan), Run: "r2", CalleeBudget: true}); err != nil {
		t.Fatal(err)
	}
	rep := run(agentrt.WithCallsPastBound(context.Background()), &agentrt.Journal{Writer: w}, true)
	w.Close()
	if rep.ToolCalls != 40 || search.calls != 40 {
		t.Fatalf("without the bound: %d calls made, want 40", rep.ToolCalls)
	}
	if rec, err = journal.Open(old); err != nil {
		t.Fatal(err)
	}
	search.calls = 0
	replay := run(context.Background(), &agentrt.Journal{Recorded: rec, Replay: true}, true)
	if replay.Divergence != nil || replay.ToolCalls != 40 || search.calls != 0 || replay.Error != rep.Error {
		t.Errorf("the replay of a journal recorded without the bound: %d calls, divergence %v, error %q", replay.ToolCalls, replay.Divergence, replay.Error)
	}
}

// TestCallsPastFixedBound: the bound is MaxConversation (16 MiB) for a
// model the price table gives no window to as for any: of 40 calls that
// each return 1 MiB, those past it are not made.
func TestCallsPastFixedBound(t *testing.T) {
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Model = plan.Model{Provider: "openai", Name: "no-window"}
	})
	var nameArgs []string
	for i := range 40 {
		nameArgs = append(nameArgs, "search", fmt.Sprintf(`{"q":"%d"}`, i))
	}
	search := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: strings.Repeat("r", 1<<20)}, nil
	}}
	r := runWith(t, p, agentrt.Options{Provider: "openai", Prices: windowPrices(t), Tools: map[string]agentrt.Tool{"search": search}},
		call(10, nameArgs...), answer(`{"label":"bug"}`, 10))
	expect(t, r.rep, "ok", "none", `{"label":"bug"}`)
	// 16 results of 1 MiB and the rest of the conversation pass 16 MiB.
	if search.calls != 16 || r.rep.ToolCalls != 16 {
		t.Errorf("the tool ran %d times (report %d), want 16", search.calls, r.rep.ToolCalls)
	}
	last := r.rep.Rounds[0].ToolCalls[39]
	if want := "more than the 16777216 a conversation may hold, and no call of this reply past that is made"; !strings.Contains(last.Error, want) {
		t.Errorf("the last call's result %q, want it to say %q", last.Error, want)
	}
}

// TestOldJournalPastBound: a journal recorded before the bound, whose
// reply's calls went past it, replays as it ran: a call the journal holds
// only under its key (a denial, decided and journaled, with no effect of
// its own) is not taken for one the bound left unmade.
func TestOldJournalPastBound(t *testing.T) {
	defer func(m int) { agentrt.MaxConversation = m }(agentrt.MaxConversation)
	agentrt.MaxConversation = 50_000
	p := agent(t, func(a *plan.Agent) {
		withTool(a)
		a.Capabilities.Tools["sh"] = plan.Tool{Kind: "exec", Description: "Runs a command."}
	})
	var nameArgs []string
	for i := range 10 {
		nameArgs = append(nameArgs, "search", fmt.Sprintf(`{"q":"%d"}`, i))
	}
	for i := range 10 {
		nameArgs = append(nameArgs, "sh", fmt.Sprintf(`{"q":"rm %d"}`, i))
	}
	search := &echoTool{name: "search", fn: func(json.RawMessage) (agentrt.ToolResult, error) {
		return agentrt.ToolResult{Content: strings.Repeat("r", 10_000)}, nil
	}}
	sh := &echoTool{name: "sh"}
	approver := func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		if req.Tool == "search" {
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByHost}, nil
		}
		return agentrt.ApprovalDecision{By: agentrt.ByHost, Reason: "no commands"}, nil
	}
	run := func(ctx context.Context, j *agentrt.Journal) *agentrt.Report {
		t.Helper()
		r, err := agentrt.New(p, agentrt.Options{Model: &scripted{turns: []turn{call(10, nameArgs...), answer(`{"label":"bug"}`, 10)}},
			Tools: map[string]agentrt.Tool{"search": search, "sh": sh}, Approver: approver, Journal: j})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := r.Run(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	path := filepath.Join(t.TempDir(), "old.jsonl")
	w, err := journal.Create(path, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", CalleeBudget: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := run(agentrt.WithCallsPastBound(context.Background()), &agentrt.Journal{Writer: w})
	w.Close()
	if rec.Outcome != "ok" || search.calls != 10 || sh.calls != 0 {
		t.Fatalf("recorded without the bound: %s, search ran %d times, sh %d; want ok, 10 and none", rec.Outcome, search.calls, sh.calls)
	}
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	search.calls = 0
	replay := run(context.Background(), &agentrt.Journal{Recorded: j, Replay: true})
	if replay.Divergence != nil || replay.Outcome != "ok" || search.calls != 0 {
		t.Errorf("the replay: %s, divergence %+v, search ran %d times", replay.Outcome, replay.Divergence, search.calls)
	}
}
