package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/internal/servetest"
)

// shTool is a tool that needs approval (an exec tool asks by default),
// counting its calls; schema is its input's, a command's by default.
type shTool struct {
	calls  atomic.Int32
	schema string
}

func (t *shTool) Spec() agentrt.ToolSpec {
	schema := `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`
	if t.schema != "" {
		schema = t.schema
	}
	return agentrt.ToolSpec{Name: "sh", Description: "Runs a command.", Schema: json.RawMessage(schema)}
}

func (t *shTool) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	t.calls.Add(1)
	return agentrt.ToolResult{Content: "done"}, nil
}

// actor is an agent whose one tool needs approval; the test model calls
// it, then answers. approve decides its calls.
func actor(t *testing.T, approve agentrt.Approver) (serve.Agent, *shTool) {
	t.Helper()
	return actorWith(t, approve, "")
}

// actorWith is actor whose tool's input has the schema given ("" for a
// command's).
func actorWith(t *testing.T, approve agentrt.Approver, schema string) (serve.Agent, *shTool) {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "actor", Description: "Acts.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Run the command, then say so.",
		Input:        &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{"sh": {Kind: "exec", Description: "Runs a command."}}},
		Output:       &plan.Output{Name: "answer", Description: "What was done.", Mode: "tool", Enforce: "local", Retries: 2, KeepsTools: true, Schema: json.RawMessage(`{"type":"object","properties":{"done":{"type":"string"}},"required":["done"]}`)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
		Budgets:      plan.Budgets{Deadline: "60s"},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	sh := &shTool{schema: schema}
	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": sh}, Approver: approve})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r}, sh
}

func newRuns(t *testing.T, dir string, api bool) *serve.Runs {
	t.Helper()
	runs, err := serve.NewRuns(dir, 0, api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runs.Stop(); runs.Wait() })
	return runs
}

// pendings hears the calls that come to wait for approval.
func pendings(runs *serve.Runs) <-chan *serve.Pending {
	ch := make(chan *serve.Pending, 16)
	runs.OnPending(func(p *serve.Pending) { ch <- p })
	return ch
}

// TestRunsKept: a run the API makes is kept under its id: its record
// (GET /v1/runs/ID) while the server lives, and with a journal directory
// its journal and record on disk, readable by the owner alone, which a
// later server finds. An input the contract refuses leaves nothing, and
// an id that is not one names no file.
func TestRunsKept(t *testing.T) {
	dir := t.TempDir()
	ag := labeler(t)
	h, err := serve.API([]serve.Agent{ag}, newRuns(t, dir, true), serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "Crash on start"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || len(res.ID) != 32 {
		t.Fatalf("%d %s", code, body)
	}
	for _, name := range []string{res.ID + ".jsonl", res.ID + ".json"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v, want a file for the owner alone", name, err, st.Mode())
		}
	}
	code, body = call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, apiToken, "")
	var rec serve.Record
	if err := json.Unmarshal(body, &rec); err != nil || code != 200 || rec.State != serve.StateDone || rec.Result == nil ||
		rec.Result.Outcome != agentrt.OutcomeOK || rec.Report == nil || string(rec.Input) != `{"title":"Crash on start"}` {
		t.Fatalf("GET the run: %d %s", code, body)
	}
	// A later server on the directory finds it on disk.
	h2, err := serve.API([]serve.Agent{ag}, newRuns(t, dir, true), serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	if code, body := call(t, srv2, http.MethodGet, "/v1/runs/"+res.ID, apiToken, ""); code != 200 || !strings.Contains(string(body), `"state":"done"`) {
		t.Errorf("a later server: %d %s", code, body)
	}
	for _, path := range []string{"/v1/runs/" + strings.ToUpper(res.ID), "/v1/runs/..%2F" + res.ID, "/v1/runs/0123456789abcdef0123456789abcdef"} {
		if code, _ := call(t, srv2, http.MethodGet, path, apiToken, ""); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	if code, _ := call(t, srv2, http.MethodGet, "/v1/runs/"+res.ID, "", ""); code != 401 {
		t.Errorf("GET without the token: %d, want 401", code)
	}
	before, _ := os.ReadDir(dir)
	if code, _ := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": ""}`); code != 422 {
		t.Errorf("a refused input: %d, want 422", code)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("a refused input left files: %d entries, then %d", len(before), len(after))
	}
}

// TestApprovalOverAPI: with the API's approvals, a call that needs one
// waits, listed at /v1/approvals, until it is decided there; a decision
// is taken once; one that is not a decision (a member named twice, or
// named otherwise than exactly, as "Approve") is refused, and decides
// nothing.
func TestApprovalOverAPI(t *testing.T) {
	runs := newRuns(t, "", true)
	waiting := pendings(runs)
	ag, sh := actor(t, runs.Ask)
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, approve := range []bool{true, false} {
		done := make(chan []byte, 1)
		go func() {
			_, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs", apiToken, `{"task": "list"}`)
			done <- body
		}()
		var p *serve.Pending
		select {
		case body := <-done:
			t.Fatalf("the run ended before it asked: %s", body)
		case p = <-waiting:
		}
		code, body := call(t, srv, http.MethodGet, "/v1/approvals", apiToken, "")
		if code != 200 || !strings.Contains(string(body), `"tool":"sh"`) || !strings.Contains(string(body), `"run":"`+p.Run+`"`) {
			t.Fatalf("GET /v1/approvals: %d %s", code, body)
		}
		path := "/v1/runs/" + p.Run + "/approvals/" + p.Key
		for _, bad := range []string{`{"approve": "yes"}`, `{}`, `{"approve": true, "also": 1}`, `not json`, `{"approve": false, "approve": true}`, `{"approve": true, "reason": "a", "reason": "b"}`,
			// Named otherwise than exactly: encoding/json would match
			// each to its field, the last winning.
			`{"approve": false, "Approve": true}`, `{"APPROVE": true, "FOR_RUN": true}`, `{"approve": true, "Reason": "x"}`,
			`{"approve": null}`, `{"approve": true, "for_run": null}`, `[{"approve": true}]`, `null`} {
			if code, _ := call(t, srv, http.MethodPost, path, apiToken, bad); code != 400 {
				t.Errorf("decision %s: %d, want 400", bad, code)
			}
		}
		if code, _ := call(t, srv, http.MethodPost, path, "", `{"approve": true}`); code != 401 {
			t.Errorf("a decision without the token: %d, want 401", code)
		}
		decision := `{"approve": true}`
		if !approve {
			decision = `{"approve": false, "reason": "not today"}`
		}
		if code, body := call(t, srv, http.MethodPost, path, apiToken, decision); code != 200 {
			t.Fatalf("deciding: %d %s", code, body)
		}
		if code, _ := call(t, srv, http.MethodPost, path, apiToken, decision); code != 404 {
			t.Errorf("a second decision: %d, want 404", code)
		}
		body = <-done
		var res serve.RunResult
		if err := json.Unmarshal(body, &res); err != nil || res.Outcome != agentrt.OutcomeOK {
			t.Fatalf("the run: %s", body)
		}
		code, body = call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, apiToken, "")
		want := `"approved":true,"by":"person"`
		if !approve {
			want = `"approved":false,"by":"person","reason":"not today"`
		}
		if code != 200 || !strings.Contains(string(body), want) {
			t.Errorf("the run's report: %d %s, want %s", code, body, want)
		}
	}
	if n := sh.calls.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once: approved, then denied", n)
	}
}

// TestElicitation: over MCP, a call that needs approval is asked of the
// client's user where the client can be asked (elicitation); an accepted
// form decides it, a declined one denies it. A client that cannot be
// asked, with no API to decide over, is refused: the run ends saying why.
func TestElicitation(t *testing.T) {
	runs := newRuns(t, "", false)
	ag, sh := actor(t, runs.Ask)
	s, err := serve.MCP("test", []serve.Agent{ag}, runs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var mu sync.Mutex
	var asked []string
	action, approve := "accept", true
	connectTo := func(s *mcp.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	connectWith := func(opts *mcp.ClientOptions, version string) *mcp.ClientSession { return connectTo(s, opts, version) }
	form := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: action, Content: map[string]any{"approve": approve}}, nil
	}}
	// The newest revision: the call's result asks, the client calls again.
	cs := connectWith(form, "")
	callActor := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "actor", Arguments: map[string]any{"task": "list"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := callActor(cs); res.IsError || sh.calls.Load() != 1 {
		t.Fatalf("approved: %s, the tool ran %d times", res.Content[0].(*mcp.TextContent).Text, sh.calls.Load())
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "tool sh") || !strings.Contains(asked[0], `exec tool sh: approve "ask"`) || !strings.Contains(asked[0], "Arguments: {") {
		t.Errorf("asked %q", asked)
	}
	action = "decline"
	mu.Unlock()
	if res := callActor(cs); res.IsError || sh.calls.Load() != 1 {
		t.Fatalf("declined: %+v, the tool ran %d times, want not again", res.Content, sh.calls.Load())
	}
	// An older revision: the server asks in the middle of the call.
	mu.Lock()
	action, asked = "accept", nil
	mu.Unlock()
	old := connectWith(form, "2025-11-25")
	if res := callActor(old); res.IsError || sh.calls.Load() != 2 {
		t.Fatalf("an older client, approved: %+v, the tool ran %d times", res.Content, sh.calls.Load())
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "tool sh") {
		t.Errorf("an older client was asked %q", asked)
	}
	mu.Unlock()
	// Arguments past the form's bound keep their start and their end:
	// the path after 4,100 characters of message is shown, with how much
	// is not, escaped as the terminal's prompt shows it.
	hider, hidden := actorWith(t, runs.Ask, `{"type":"object","properties":{"message":{"type":"string","minLength":4100},"path":{"const":"/etc/\u202epasswd"}},"required":["message","path"],"additionalProperties":false}`)
	hs, err := serve.MCP("test", []serve.Agent{hider}, runs)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	action, approve, asked = "accept", false, nil
	mu.Unlock()
	for _, version := range []string{"", "2025-11-25"} {
		if res := callActor(connectTo(hs, form, version)); res.IsError || hidden.calls.Load() != 0 {
			t.Fatalf("long arguments, denied (%q): %+v, the tool ran %d times", version, res.Content, hidden.calls.Load())
		}
	}
	mu.Lock()
	if len(asked) != 2 {
		t.Fatalf("asked %d times about long arguments, want 2", len(asked))
	}
	for _, msg := range asked {
		if !strings.Contains(msg, `"path":"/etc/\u202epasswd"`) || !strings.Contains(msg, "not shown") || len(msg) > 4500 {
			t.Errorf("the form for long arguments (%d bytes) hides the path or is unbounded: …%s", len(msg), msg[max(0, len(msg)-200):])
		}
	}
	action, approve = "accept", true
	mu.Unlock()
	// A state no call was given is refused, and runs nothing.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "actor", RequestState: "0123456789abcdef0123456789abcdef",
		InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no call waits under this request state") || sh.calls.Load() != 2 {
		t.Errorf("a made-up request state: %v %+v", err, res)
	}
	// A client without elicitation, and no API: no one can decide.
	plain := connectWith(nil, "")
	res = callActor(plain)
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "no one can be asked") || sh.calls.Load() != 2 {
		t.Errorf("a client that cannot be asked: %v %s", res.IsError, text)
	}
}

// TestResumeInterrupted: a run the server's stop interrupts is kept as
// interrupted, and a server started again on the directory resumes it
// from its journal: the tool call it approved before does not run again,
// and what the model said is served from the journal.
func TestResumeInterrupted(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	waiting := pendings(runs)
	ag, sh := actor(t, runs.Ask)
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan []byte, 1)
	go func() {
		_, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs", apiToken, `{"task": "list"}`)
		done <- body
	}()
	id := (<-waiting).Run
	runs.Stop()
	body := <-done
	if !strings.Contains(string(body), "the server stopped before the run ended") {
		t.Fatalf("the client was told %s", body)
	}
	runs.Wait()
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if err != nil || !strings.Contains(string(b), `"state":"interrupted"`) {
		t.Fatalf("the record: %v %s", err, b)
	}

	runs2 := newRuns(t, dir, true)
	waiting2 := pendings(runs2)
	ag2, sh2 := actor(t, runs2.Ask)
	var notes []string
	if err := runs2.Resume([]serve.Agent{ag2}, func(s string) { notes = append(notes, s) }); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "resuming run "+id+" of actor: 1 effect recorded") {
		t.Fatalf("notes %q", notes)
	}
	p := <-waiting2
	if p.Run != id {
		t.Fatalf("pending %+v, want the resumed run %s", p, id)
	}
	runs2.Decide(p.Run, p.Key, serve.Decision{Approve: ptr(true)})
	runs2.Wait()
	b, err = os.ReadFile(filepath.Join(dir, id+".json"))
	var rec serve.Record
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.State != serve.StateDone || rec.Resumed != 1 || rec.Result.Outcome != agentrt.OutcomeOK ||
		rec.Report.Replayed != 1 {
		t.Fatalf("the resumed run: %v %s", err, b)
	}
	if sh.calls.Load() != 0 || sh2.calls.Load() != 1 {
		t.Errorf("the tool ran %d then %d times, want 0 then 1", sh.calls.Load(), sh2.calls.Load())
	}
	// Ended, it is not resumed again.
	runs3 := newRuns(t, dir, true)
	ag3, _ := actor(t, runs3.Ask)
	notes = nil
	if err := runs3.Resume([]serve.Agent{ag3}, func(s string) { notes = append(notes, s) }); err != nil || len(notes) != 0 {
		t.Errorf("a third server: %v %q", err, notes)
	}
}

func ptr[T any](v T) *T { return &v }

// TestBudgets: a client narrows a run's bounds, over the HTTP API (the
// query) and MCP (_meta agentc/budgets); the run's record keeps them, and
// bounds that are not bounds are refused before anything runs.
func TestBudgets(t *testing.T) {
	runs := newRuns(t, "", true)
	ag, sh := actor(t, func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPolicy}, nil
	})
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs?tools=0", apiToken, `{"task": "list"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || res.Bound != agentrt.BoundToolBudget || sh.calls.Load() != 0 {
		t.Fatalf("tools=0: %d %s, the tool ran %d times", code, body, sh.calls.Load())
	}
	if code, body := call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, apiToken, ""); code != 200 || !strings.Contains(string(body), `"budgets":{"tools":0}`) {
		t.Errorf("the record: %d %s", code, body)
	}
	// Wider than the agent's: the agent's hold, and the run answers.
	code, body = call(t, srv, http.MethodPost, "/v1/agents/actor/runs?rounds=1000&deadline=24h&tokens=100000000", apiToken, `{"task": "list"}`)
	if code != 200 || !strings.Contains(string(body), `"outcome":"ok"`) {
		t.Errorf("wide bounds: %d %s", code, body)
	}
	for _, q := range []string{"tools=-1", "rounds=0", "tokens=0", "deadline=soon", "deadline=-5s", "tools=many", "colour=red", "tools=1&tools=2", "tokens=99999999999999999999"} {
		if code, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs?"+q, apiToken, `{"task": "list"}`); code != 400 || !strings.Contains(string(body), "budgets: ") {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
	s, err := serve.MCP("test", []serve.Agent{ag}, runs)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callWith := func(meta mcp.Meta) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "actor", Arguments: map[string]any{"task": "list"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := callWith(mcp.Meta{serve.MetaBudgets: map[string]any{"rounds": 1}}); !res.IsError || res.Meta[serve.MetaBound] != agentrt.BoundRounds {
		t.Errorf("rounds 1 over MCP: %+v", res.Meta)
	}
	for _, bad := range []any{map[string]any{"rounds": 0}, map[string]any{"turns": 3}, "ten", map[string]any{"deadline": 30}, map[string]any{"Rounds": 1}} {
		res := callWith(mcp.Meta{serve.MetaBudgets: bad})
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "budgets: ") {
			t.Errorf("_meta budgets %v: %v %s", bad, res.IsError, text)
		}
	}
	// The wide run's call, and the first round's of the run bound to one.
	if n := sh.calls.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want twice", n)
	}
}

// lockThief removes the journal locks in a directory when called, so
// that closing the run's journal fails.
type lockThief struct{ dir string }

func (*lockThief) Spec() agentrt.ToolSpec {
	return agentrt.ToolSpec{Name: "sh", Description: "Runs a command.", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}
}

func (l *lockThief) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	locks, _ := filepath.Glob(filepath.Join(l.dir, "*.lock"))
	for _, f := range locks {
		os.Remove(f)
	}
	return agentrt.ToolResult{Content: "done"}, nil
}

// TestJournalCloseFails: a run that ran, its tool too, is kept and
// answered when its journal cannot be closed; the server's log says so.
// Its journal and record stay.
func TestJournalCloseFails(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, false)
	logged := servetest.Log(runs)
	approve := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPolicy}, nil
	}
	ag, _ := actor(t, approve)
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": &lockThief{dir}}, Approver: approve})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	rec, err := runs.Run(context.Background(), ag, json.RawMessage(`{"task": "x"}`), nil, serve.Budgets{}, nil)
	if err != nil || rec == nil || rec.Result == nil || rec.Result.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the run: %v %+v", err, rec)
	}
	for _, name := range []string{rec.ID + ".jsonl", rec.ID + ".json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the run's %s is gone: %v", name, err)
		}
	}
	if log := logged(); len(log) != 1 || !strings.Contains(log[0], "run "+rec.ID+": closing its journal: ") {
		t.Errorf("the server's log: %q", log)
	}
}

// heedless is a model that does not heed its call's end until released:
// a provider slow to notice. It says when a call has reached it.
type heedless struct{ reached, release chan struct{} }

func (m heedless) Complete(ctx context.Context, _ *agentrt.Request) (*agentrt.Response, error) {
	m.reached <- struct{}{}
	<-m.release
	return nil, ctx.Err()
}

// TestCancelThenStop: a run cancelled, then caught by the server's stop
// before it noticed, is recorded cancelled, not interrupted, and a
// server started again on the directory does not resume it.
func TestCancelThenStop(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	ag, sh := actor(t, nil)
	m := heedless{reached: make(chan struct{}, 1), release: make(chan struct{})}
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: m, Tools: map[string]agentrt.Tool{"sh": sh}})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	ids := make(chan string, 1)
	ended := make(chan *serve.Record, 1)
	go func() {
		rec, _ := runs.Run(context.Background(), ag, json.RawMessage(`{"task": "x"}`), nil, serve.Budgets{}, func(id string) { ids <- id })
		ended <- rec
	}()
	id := <-ids
	<-m.reached
	if !runs.Cancel(id) {
		t.Fatal("the run is not in flight")
	}
	runs.Stop()
	close(m.release)
	rec := <-ended
	if rec == nil || rec.State != serve.StateCancelled || !strings.Contains(rec.Result.Error, "cancelled") {
		t.Fatalf("the record: %+v", rec)
	}
	runs.Wait()
	var notes []string
	if err := newRuns(t, dir, true).Resume([]serve.Agent{ag}, func(s string) { notes = append(notes, s) }); err != nil || len(notes) != 0 {
		t.Errorf("a cancelled run resumed: %v %q", err, notes)
	}
}

// TestKeepBytes: the ended runs kept in memory are bounded by their
// records' size as well as by their number: a client sending large
// inputs cannot have the server hold a thousand of them. The oldest go
// first; the run that ended last is kept whatever its size.
func TestKeepBytes(t *testing.T) {
	runs := newRuns(t, "", false)
	runs.SetKeepBytes(20_000)
	ag := labeler(t)
	var ids []string
	for i := range 6 {
		in, _ := json.Marshal(map[string]string{"title": strings.Repeat(string(rune('a'+i)), 6_000)})
		rec, err := runs.Run(context.Background(), ag, in, nil, serve.Budgets{}, nil)
		if err != nil || rec.Result == nil {
			t.Fatalf("run %d: %v %+v", i, err, rec)
		}
		ids = append(ids, rec.ID)
	}
	var held []int
	for i, id := range ids {
		if runs.Get(id) != nil {
			held = append(held, i)
		}
	}
	// Each record holds its 6,000-byte input and a report: two or three
	// fit in 20,000 bytes, and they are the last ones.
	if len(held) < 1 || len(held) > 3 || held[len(held)-1] != len(ids)-1 || held[0] != len(ids)-len(held) {
		t.Errorf("runs held %v of %d, want the last two or three", held, len(ids))
	}
	// One record past the bound alone is still kept.
	runs.SetKeepBytes(10)
	in, _ := json.Marshal(map[string]string{"title": strings.Repeat("z", 6_000)})
	rec, err := runs.Run(context.Background(), ag, in, nil, serve.Budgets{}, nil)
	if err != nil || runs.Get(rec.ID) == nil {
		t.Errorf("the last run past the bound alone: %v, kept %v", err, runs.Get(rec.ID) != nil)
	}
	if runs.Get(ids[len(ids)-1]) != nil {
		t.Error("the run before it is kept past the bound")
	}
}

// TestDeepInputRecord: a client's input nested 2,000 deep costs its record
// about its own size on disk; indented, 60 KB of brackets made a record of
// hundreds of megabytes (and a server that held it, out of memory).
func TestDeepInputRecord(t *testing.T) {
	dir := t.TempDir()
	h, err := serve.API([]serve.Agent{labeler(t)}, newRuns(t, dir, true), serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	const depth = 2000
	input := `{"title": "x", "pad": ` + strings.Repeat("[", depth) + strings.Repeat("0,", 20000) + "0" + strings.Repeat("]", depth) + "}"
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs?deadline=1ns", apiToken, input)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || len(res.ID) != 32 {
		t.Fatalf("%d %s", code, body)
	}
	st, err := os.Stat(filepath.Join(dir, res.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 4*int64(len(input))+64<<10 {
		t.Errorf("the record of a %d-byte input is %d bytes", len(input), st.Size())
	}
}

// TestReadingBounded: an input is read, decoded and checked against its
// contract only within the bound on the bytes of inputs read at once
// (serve.MaxReading): with the bound taken, a request waits, and is read
// once the bytes are given back; one whose client goes while it waits
// reads nothing.
func TestReadingBounded(t *testing.T) {
	runs := newRuns(t, "", true)
	h, err := serve.API([]serve.Agent{labeler(t)}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := runs.HoldReading(t, serve.MaxReading)
	waiting := make(chan struct{}, 2)
	serve.OnReadingWait(t, func() { waiting <- struct{}{} })

	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader(`{"title": ""}`))
	req.Header.Set("Authorization", "Bearer "+apiToken)
	gone := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	done := make(chan int, 1)
	go func() {
		code, _ := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": ""}`)
		done <- code
	}()
	for range 2 {
		select {
		case code := <-done:
			t.Fatalf("an input was read with the bound taken: %d", code)
		case err := <-gone:
			t.Fatalf("a request ended with the bound taken: %v", err)
		case <-waiting:
		}
	}
	cancel()
	if err := <-gone; err == nil {
		t.Error("the request whose client went was answered")
	}
	release()
	if code := <-done; code != http.StatusUnprocessableEntity {
		t.Errorf("the waiting input, refused by its contract: %d, want 422", code)
	}
}

// TestReadingBoundedRemote: an agent run elsewhere has its input read
// within the same bound.
func TestReadingBoundedRemote(t *testing.T) {
	runs := newRuns(t, "", true)
	ag := labeler(t)
	ag.Runner = nil
	ag.Remote = func(context.Context, string, json.RawMessage, agentrt.Overrides, func(agentrt.Event)) (*agentrt.Report, error) {
		return &agentrt.Report{}, nil
	}
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := runs.HoldReading(t, serve.MaxReading)
	waiting := make(chan struct{}, 1)
	serve.OnReadingWait(t, func() { waiting <- struct{}{} })
	done := make(chan int, 1)
	go func() {
		code, _ := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": ""}`)
		done <- code
	}()
	select {
	case code := <-done:
		t.Fatalf("an input was read with the bound taken: %d", code)
	case <-waiting:
	}
	release()
	if code := <-done; code != http.StatusUnprocessableEntity {
		t.Errorf("the waiting input, refused by its contract: %d, want 422", code)
	}
}

// TestReadingWeighsValues: an input weighs on the bound on reading by its
// values where they cost more than its bytes (300 KB of text weighs its
// bytes, 100,000 small values, decoded each to a hundred bytes and more,
// 12.8 MB), and a body is read under as much as an input of its length
// may weigh (serve.BodyWeight, 64 bytes a byte): with a megabyte of the
// bound left, an input of 8 KB of text is read at once, and one of
// 200 KB of small values waits its turn.
func TestReadingWeighsValues(t *testing.T) {
	if w := serve.Weight([]byte(`{"title":"` + strings.Repeat("a", 300000) + `"}`)); w > 300100 {
		t.Errorf("300 KB of text weighs %d", w)
	}
	dense := `{"title":"x","n":[` + strings.Repeat("0,", 100000) + `0]}`
	if w := serve.Weight([]byte(dense)); w < 100000*serve.ValueBytes {
		t.Errorf("100,000 values weigh %d", w)
	}
	runs := newRuns(t, "", true)
	h, err := serve.API([]serve.Agent{labeler(t)}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := runs.HoldReading(t, serve.MaxReading-1<<20)
	waiting := make(chan struct{}, 1)
	serve.OnReadingWait(t, func() { waiting <- struct{}{} })
	if w := serve.BodyWeight(8000 + 14); w > 1<<20 {
		t.Fatalf("a body of 8 KB is read under %d bytes of the bound", w)
	}
	if code, _ := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "`+strings.Repeat("a", 8000)+`"}`); code == 0 {
		t.Fatal("8 KB of text was not answered")
	}
	select {
	case <-waiting:
		t.Fatal("8 KB of text waited, with a megabyte of the bound left")
	default:
	}
	done := make(chan int, 1)
	go func() {
		code, _ := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, dense)
		done <- code
	}()
	select {
	case code := <-done:
		t.Fatalf("100,000 values were read with a megabyte of the bound left: %d", code)
	case <-waiting:
	}
	release()
	if code := <-done; code == 0 {
		t.Error("the waiting input was not answered")
	}
}

// TestResumeRefusedKeepsJournal: a run a server resumes whose input the
// agent's contract now refuses (the agent changed while the server was
// down) is left as it was, its journal and record kept on disk, not
// removed as an input refused to a new run is: they hold what the run
// did, and a server given the agent it ran resumes it.
func TestResumeRefusedKeepsJournal(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	waiting := pendings(runs)
	ag, _ := actor(t, runs.Ask)
	h, err := serve.API([]serve.Agent{ag}, runs, serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, srv, http.MethodPost, "/v1/agents/actor/runs", apiToken, `{"task": "list"}`)
	}()
	id := (<-waiting).Run
	runs.Stop()
	<-done
	runs.Wait()
	journalBefore, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	// The agent now takes a number for its task.
	p := *ag.Plan
	p.Agent.Input = &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"task":{"type":"integer"}},"required":["task"]}`)}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	r, err := agentrt.New(&p, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": &shTool{}}})
	if err != nil {
		t.Fatal(err)
	}
	runs2 := newRuns(t, dir, true)
	notes := make(chan string, 8)
	if err := runs2.Resume([]serve.Agent{{Plan: &p, Runner: r}}, func(s string) { notes <- s }); err != nil {
		t.Fatal(err)
	}
	runs2.Wait()
	close(notes)
	var said []string
	for n := range notes {
		said = append(said, n)
	}
	if len(said) == 0 || !strings.Contains(said[len(said)-1], "left run "+id) {
		t.Errorf("notes %q: want the run said left", said)
	}
	journalAfter, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil || string(journalAfter) != string(journalBefore) {
		t.Errorf("the journal after the refused resume: %v, %d bytes, was %d", err, len(journalAfter), len(journalBefore))
	}
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	var rec serve.Record
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.State != serve.StateInterrupted {
		t.Errorf("the record after the refused resume: %v %s", err, b)
	}
	if got := runs2.Get(id); got == nil || got.State != serve.StateInterrupted {
		t.Errorf("GET of the run: %+v", got)
	}
}

// recordThief puts a directory where the records in a directory are
// when called, so that keeping the run's record as it ends fails.
type recordThief struct{ lockThief }

func (r *recordThief) Call(context.Context, json.RawMessage) (agentrt.ToolResult, error) {
	recs, _ := filepath.Glob(filepath.Join(r.dir, "*.json"))
	for _, f := range recs {
		os.Remove(f)
		os.MkdirAll(filepath.Join(f, "in-the-way"), 0o700)
	}
	return agentrt.ToolResult{Content: "done"}, nil
}

// TestRecordSaveFails: a run whose record cannot be kept on disk as it
// ends is answered, and the server's log says its record was not kept:
// the file left says it is running, and a later server would resume it.
func TestRecordSaveFails(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, false)
	logged := servetest.Log(runs)
	approve := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPolicy}, nil
	}
	ag, _ := actor(t, approve)
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": &recordThief{lockThief{dir}}}, Approver: approve})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	rec, err := runs.Run(context.Background(), ag, json.RawMessage(`{"task": "x"}`), nil, serve.Budgets{}, nil)
	if err != nil || rec == nil || rec.Result == nil || rec.Result.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the run: %v %+v", err, rec)
	}
	if log := logged(); len(log) != 1 || !strings.Contains(log[0], "run "+rec.ID+": keeping its record: ") {
		t.Errorf("the server's log: %q", log)
	}
}

// TestResumedJournalCloseFails: a resumed run whose journal cannot be
// closed once it has run is said in the server's log, as a new run's is.
func TestResumedJournalCloseFails(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	waiting := pendings(runs)
	ag, _ := actor(t, runs.Ask)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runs.Run(context.Background(), ag, json.RawMessage(`{"task": "x"}`), nil, serve.Budgets{}, nil)
	}()
	id := (<-waiting).Run
	runs.Stop()
	<-done
	runs.Wait()

	approve := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPolicy}, nil
	}
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: &testmodel.Model{}, Tools: map[string]agentrt.Tool{"sh": &lockThief{dir}}, Approver: approve})
	if err != nil {
		t.Fatal(err)
	}
	runs2 := newRuns(t, dir, true)
	logged := servetest.Log(runs2)
	if err := runs2.Resume([]serve.Agent{{Plan: ag.Plan, Runner: r}}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	runs2.Wait()
	if rec := runs2.Get(id); rec == nil || rec.State != serve.StateDone {
		t.Fatalf("the resumed run: %+v", rec)
	}
	if log := logged(); len(log) != 1 || !strings.Contains(log[0], "run "+id+": closing its journal: ") {
		t.Errorf("the server's log: %q", log)
	}
}
