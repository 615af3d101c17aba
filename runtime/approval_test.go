package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/provider/openai"
	"agentc.dev/agentc/runtime/redact"
)

// approvalAgent is an agent with an exec tool sh (which asks for approval
// by default), its model answered by approvalServer, and the results the
// model was sent.
func approvalAgent(t *testing.T) (agentrt.Model, *plan.Plan, func() []map[string]any) {
	srv, results := approvalServer(t)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := agent(t, func(a *plan.Agent) {
		a.Model.Provider = "openai"
		a.Output.KeepsTools = true
		a.Capabilities.Tools["sh"] = plan.Tool{Kind: "exec", Description: "Runs a command."}
	})
	return m, p, results
}

// approvalServer is an OpenAI Chat Completions server that asks for two
// calls of tool sh in its first turn, then answers, keeping the tool
// results it was sent.
func approvalServer(t *testing.T) (*httptest.Server, func() []map[string]any) {
	var mu sync.Mutex
	var results []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []map[string]any `json:"messages"`
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
		var tools []map[string]any
		for _, m := range req.Messages {
			if m["role"] == "tool" {
				tools = append(tools, m)
			}
		}
		if len(tools) == 0 {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
"tool_calls":[{"id":"call_1","type":"function","function":{"name":"sh","arguments":"{\"q\":\"git log\"}"}},
{"id":"call_2","type":"function","function":{"name":"sh","arguments":"{\"q\":\"rm -rf /\"}"}}]}}],
"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
			return
		}
		mu.Lock()
		results = tools
		mu.Unlock()
		answer := ""
		for _, tl := range req.Tools {
			if strings.HasPrefix(tl.Function.Name, "answer") {
				answer = tl.Function.Name
			}
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m1",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
"tool_calls":[{"id":"call_3","type":"function","function":{"name":%q,"arguments":"{\"label\":\"bug\"}"}}]}}],
"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return results
	}
}

// TestApproverByRule: a Go host approves the calls of an exec tool (which
// asks by default) by its own rule: git log runs, anything else is denied
// with a reason the model reads as the call's result, and the run goes
// on. Every decision is journaled: the replay serves them and asks
// nothing.
func TestApproverByRule(t *testing.T) {
	m, p, results := approvalAgent(t)
	var asked []agentrt.ApprovalRequest
	approver := func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		asked = append(asked, *req)
		var args struct{ Q string }
		_ = json.Unmarshal(req.Arguments, &args)
		if strings.HasPrefix(args.Q, "git log") {
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByHost}, nil
		}
		return agentrt.ApprovalDecision{By: agentrt.ByHost, Reason: "only git log may run"}, nil
	}
	sh := &echoTool{name: "sh"}
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Agent: "label"})
	if err != nil {
		t.Fatal(err)
	}
	var events []agentrt.Event
	r, err := agentrt.New(p, agentrt.Options{Model: m, Tools: map[string]agentrt.Tool{"sh": sh}, Approver: approver,
		Journal: &agentrt.Journal{Writer: w}, Events: func(e agentrt.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "ok" || sh.calls != 1 {
		t.Fatalf("run ended %s (%s), the tool ran %d times, want ok and once", rep.Outcome, rep.Error, sh.calls)
	}
	if len(asked) != 2 || asked[0].Key != "1.1" || asked[1].Key != "1.2" || asked[0].Mode != plan.ApproveAsk ||
		!strings.Contains(asked[0].Why, `exec tool sh: approve "ask" (the default for its kind)`) {
		t.Fatalf("asked %+v, want calls 1.1 and 1.2, asked by the exec default", asked)
	}
	got := results()
	if len(got) != 2 || got[0]["content"] != `{"q":"git log"}` ||
		got[1]["content"] != "the call was not made: it was denied approval (by host): only git log may run" {
		t.Fatalf("the model read %v, want the first call's result and the second's denial", got)
	}
	if len(rep.Approvals) != 2 || !rep.Approvals[0].Approved || rep.Approvals[1].Approved || rep.Approvals[1].By != agentrt.ByHost ||
		rep.Approvals[1].Reason != "only git log may run" || rep.Approvals[0].Replayed {
		t.Fatalf("report approvals %+v", rep.Approvals)
	}
	var kinds []string
	for _, e := range events {
		if strings.HasPrefix(e.Type, "approval") {
			kinds = append(kinds, e.Type+":"+e.Message)
		}
	}
	if want := []string{"approval_asked:" + asked[0].Why, "approval:approved by host", "approval_asked:" + asked[0].Why, "approval:denied by host: only git log may run"}; fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("approval events %q, want %q", kinds, want)
	}

	// The replay asks nothing and ends as the run did.
	j, err := journal.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range j.Entries {
		if e.Kind == journal.KindApproval {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("the journal holds %d approvals, want 2", n)
	}
	refuse := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		t.Error("the replay asked for approval")
		return agentrt.ApprovalDecision{}, fmt.Errorf("asked")
	}
	r, err = agentrt.New(p, agentrt.Options{Model: refusingModel{}, Tools: map[string]agentrt.Tool{"sh": &echoTool{name: "sh"}}, Approver: refuse,
		Journal: &agentrt.Journal{Recorded: j, Replay: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Outcome != "ok" || len(rep2.Approvals) != 2 || !rep2.Approvals[1].Replayed || rep2.Approvals[1].Reason != "only git log may run" {
		t.Fatalf("replay ended %s (%s) with approvals %+v", rep2.Outcome, rep2.Error, rep2.Approvals)
	}
}

// TestApprovalReasonBounded: a denial's reason enters the run cut to
// MaxApprovalReason bytes, saying how long it was, whoever gave it: the
// model, the report, the events and the journal hold the cut reason, not
// the megabytes a client sent; a secret in it is redacted before the cut,
// so none of it is left at the edge.
func TestApprovalReasonBounded(t *testing.T) {
	m, p, results := approvalAgent(t)
	const secret = "sk-secret-at-the-edge-0123456789"
	secrets := &redact.Set{}
	secrets.Add(secret)
	// The secret straddles the bound.
	reason := strings.Repeat("n", agentrt.MaxApprovalReason-10) + secret + strings.Repeat("o", 7<<20)
	approver := func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
		return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: reason}, nil
	}
	file := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := journal.Create(file, journal.Header{Plan: string(p.Digests.Plan), Run: "r1", Agent: "label"})
	if err != nil {
		t.Fatal(err)
	}
	var events []agentrt.Event
	r, err := agentrt.New(p, agentrt.Options{Model: m, Tools: map[string]agentrt.Tool{"sh": &echoTool{name: "sh"}}, Approver: approver, Secrets: secrets,
		Journal: &agentrt.Journal{Writer: w}, Events: func(e agentrt.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cut := func(what, s string) {
		t.Helper()
		if len(s) > agentrt.MaxApprovalReason+200 || !strings.Contains(s, fmt.Sprintf("… (%d bytes in all)", len(reason)-len(secret)+len("[redacted]"))) ||
			strings.Contains(s, secret[:8]) {
			t.Errorf("%s: %d bytes, ending %q: want the reason cut, saying so, the secret redacted", what, len(s), s[max(0, len(s)-80):])
		}
	}
	got := results()
	if len(got) != 2 {
		t.Fatalf("the model read %d tool results, want 2", len(got))
	}
	for _, res := range got {
		cut("the model's tool result", res["content"].(string))
	}
	if len(rep.Approvals) != 2 {
		t.Fatalf("report approvals: %d", len(rep.Approvals))
	}
	for _, a := range rep.Approvals {
		cut("the report's reason", a.Reason)
	}
	for _, e := range events {
		if e.Type == agentrt.EventApproval {
			cut("the event", e.Message)
		}
	}
	if st, err := os.Stat(file); err != nil || st.Size() > 64<<10 {
		t.Errorf("the journal: %v, %d bytes", err, st.Size())
	}
}

// TestApprovalRefused: an approver that cannot decide ends the run, and
// says so in the report; the tool never runs.
func TestApprovalRefused(t *testing.T) {
	m, p, _ := approvalAgent(t)
	sh := &echoTool{name: "sh"}
	r, err := agentrt.New(p, agentrt.Options{Model: m, Tools: map[string]agentrt.Tool{"sh": sh},
		Approver: func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
			return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: "no one to ask"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "error" || !rep.Unapproved || sh.calls != 0 || !strings.Contains(rep.Error, "the call 1.1 of tool sh needs approval: no one to ask") {
		t.Fatalf("run ended %s, unapproved %v, error %q; the tool ran %d times", rep.Outcome, rep.Unapproved, rep.Error, sh.calls)
	}
}
