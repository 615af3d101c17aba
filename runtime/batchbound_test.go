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

// TestCallsPastWindow: one reply calls a tool 40 times and each result is
// 10,000 bytes. Once the results put the conversation past what the
// model's window could hold (128,000 bytes, at 128 bytes a token of its
// 1,000), the calls left are not made: each has an error result saying
// why, and the next request, past the window, is not sent, nor written to
// the journal. A replay and a resume of the journal decide the same, call
// nothing and send nothing.
func TestCallsPastWindow(t *testing.T) {
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
	run := func(ctx context.Context, j *agentrt.Journal) *agentrt.Report {
		t.Helper()
		r, err := agentrt.New(p, agentrt.Options{Model: m, Provider: "openai", Prices: windowPrices(t),
			Tools: map[string]agentrt.Tool{"search": search}, Journal: j})
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
				strings.Contains(c.Error, "more than the 128000 bytes that model small-window's context window of 1000 tokens could hold at 128 bytes a token")
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
	check("run", run(context.Background(), &agentrt.Journal{Writer: w}), made, 1)
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
	if len(keys) != 1+made || keys[0] != "1.0" || keys[made] != fmt.Sprintf("1.%d", made) {
		t.Errorf("the journal holds %v, want the model call and the %d calls made, and nothing of calls not made or the request not sent", keys, made)
	}

	search.calls = 0
	check("replay", run(context.Background(), &agentrt.Journal{Recorded: rec, Replay: true}), 0, 1)
	check("resume", run(context.Background(), &agentrt.Journal{Recorded: rec}), 0, 1)

	// A run recorded before the bound made every call: its journal
	// replays as it ran, every call served.
	sent.Store(0)
	old := filepath.Join(t.TempDir(), "old.jsonl")
	if w, err = journal.Create(old, journal.Header{Plan: string(p.Digests.Plan), Run: "r2", CalleeBudget: true}); err != nil {
		t.Fatal(err)
	}
	rep := run(agentrt.WithCallsPastBound(context.Background()), &agentrt.Journal{Writer: w})
	w.Close()
	if rep.ToolCalls != 40 || search.calls != 40 {
		t.Fatalf("without the bound: %d calls made, want 40", rep.ToolCalls)
	}
	if rec, err = journal.Open(old); err != nil {
		t.Fatal(err)
	}
	search.calls = 0
	replay := run(context.Background(), &agentrt.Journal{Recorded: rec, Replay: true})
	if replay.Divergence != nil || replay.ToolCalls != 40 || search.calls != 0 || replay.Error != rep.Error {
		t.Errorf("the replay of a journal recorded without the bound: %d calls, divergence %v, error %q", replay.ToolCalls, replay.Divergence, replay.Error)
	}
}

// TestCallsPastFixedBound: a model the price table gives no window to
// has its conversation bounded all the same, at journal.MaxRequest bytes
// of text (32 MiB): of 40 calls that each return 1 MiB, those past it are
// not made.
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
	// 32 results of 1 MiB and the rest of the conversation pass 32 MiB.
	if search.calls != 32 || r.rep.ToolCalls != 32 {
		t.Errorf("the tool ran %d times (report %d), want 32", search.calls, r.rep.ToolCalls)
	}
	last := r.rep.Rounds[0].ToolCalls[39]
	if want := "more than the 33554432 bytes of text a conversation may hold, and no call of this reply past that is made"; !strings.Contains(last.Error, want) {
		t.Errorf("the last call's result %q, want it to say %q", last.Error, want)
	}
}
