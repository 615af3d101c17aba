package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// Tokens of a server that serves labeler and actor: one for each, and
// one for both.
const (
	labelerToken = "token-of-the-labeler-only"
	actorToken   = "token-of-the-actor-only"
	bothToken    = "token-of-every-agent-here"
)

func twoTokens(t *testing.T) *serve.Tokens {
	t.Helper()
	tokens, err := serve.NewTokens([]serve.Token{{Token: labelerToken, Agents: []string{"labeler"}}, {Token: actorToken, Agents: []string{"actor"}}, {Token: bothToken}})
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}

// TestNewTokens: a token too short, two equal tokens, an empty agent
// name and no token at all are refused, and no refusal says a token.
func TestNewTokens(t *testing.T) {
	for _, tc := range []struct {
		tokens []serve.Token
		says   string
	}{
		{[]serve.Token{{Token: labelerToken}, {Token: "short-one"}}, "token 2: the token is shorter than 16 bytes"},
		{[]serve.Token{{Token: labelerToken}, {Token: actorToken}, {Token: labelerToken, Agents: []string{"actor"}}}, "tokens 1 and 3 are the same token"},
		{[]serve.Token{{Token: labelerToken, Agents: []string{"labeler", ""}}}, "token 1: an agent's name is empty"},
		{nil, "no token"},
	} {
		_, err := serve.NewTokens(tc.tokens)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%d tokens: %v, want %q", len(tc.tokens), err, tc.says)
			continue
		}
		for _, tok := range tc.tokens {
			if strings.Contains(err.Error(), tok.Token) {
				t.Errorf("the error %q says a token", err)
			}
		}
	}
	if _, err := serve.NewTokens([]serve.Token{{Token: labelerToken, Agents: []string{"labeler", "labeler"}}, {Token: actorToken, Agents: []string{"labeler"}}}); err != nil {
		t.Errorf("two tokens of one set: %v", err)
	}
}

// TestTokensAPI: over the HTTP API, a token for some agents sees only
// them: another agent cannot be run (404, as for no such agent), is not
// listed, nor in the OpenAPI document; another agent's run record is not
// found, its calls waiting for approval are not listed, and cannot be
// decided (404, and the call still waits); a token for every agent sees
// all.
func TestTokensAPI(t *testing.T) {
	runs := newRuns(t, "", true)
	waiting := pendings(runs)
	act, sh := actor(t, runs.Ask)
	h, err := serve.API([]serve.Agent{labeler(t), act}, runs, twoTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Running: only the agents the token admits to.
	type answer struct {
		code int
		body []byte
	}
	refused := make(chan answer, 1)
	go func() {
		code, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs", labelerToken, `{"task": "list"}`)
		refused <- answer{code, body}
	}()
	var code int
	var body []byte
	select {
	case a := <-refused:
		code, body = a.code, a.body
	case p := <-waiting:
		runs.Decide(p.Run, p.Key, serve.Decision{Approve: ptr(false)})
		t.Fatalf("the labeler's token ran actor: %s", (<-refused).body)
	}
	_, none := call(t, srv, http.MethodPost, "/v1/agents/nobody/runs", labelerToken, `{}`)
	if code != 404 || string(body) != strings.ReplaceAll(string(none), "nobody", "actor") {
		t.Errorf("the labeler's token runs actor: %d %s; want 404 as for no such agent, %s", code, body, none)
	}
	code, body = call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", labelerToken, `{"title": "Crash on start"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || res.Outcome != agentrt.OutcomeOK {
		t.Fatalf("the labeler's token runs labeler: %d %s", code, body)
	}

	// Listing and describing: only the agents the token admits to.
	for _, tc := range []struct {
		token     string
		has, lack []string
	}{
		{labelerToken, []string{"labeler"}, []string{"actor"}},
		{actorToken, []string{"actor"}, []string{"labeler"}},
		{bothToken, []string{"labeler", "actor"}, nil},
	} {
		for _, path := range []string{"/v1/agents", "/openapi.json"} {
			code, body := call(t, srv, http.MethodGet, path, tc.token, "")
			if code != 200 {
				t.Errorf("GET %s: %d %s", path, code, body)
			}
			for _, name := range tc.has {
				if !strings.Contains(string(body), `"`+name+`"`) && !strings.Contains(string(body), "/v1/agents/"+name+"/runs") {
					t.Errorf("GET %s with the token of %v: %s lacks %s", path, tc.has, body, name)
				}
			}
			for _, name := range tc.lack {
				if strings.Contains(string(body), name) {
					t.Errorf("GET %s with the token of %v: %s shows %s", path, tc.has, body, name)
				}
			}
		}
	}

	// A run's record: only of an agent the token admits to.
	code, body = call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, actorToken, "")
	_, none = call(t, srv, http.MethodGet, "/v1/runs/0123456789abcdef0123456789abcdef", actorToken, "")
	if code != 404 || string(body) != strings.ReplaceAll(string(none), "0123456789abcdef0123456789abcdef", res.ID) {
		t.Errorf("the actor's token reads the labeler's run: %d %s; want 404 as for no such run, %s", code, body, none)
	}
	for _, tok := range []string{labelerToken, bothToken} {
		if code, body := call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, tok, ""); code != 200 || !strings.Contains(string(body), `"agent":"labeler"`) {
			t.Errorf("reading the labeler's run: %d %s", code, body)
		}
	}

	// A call waiting for approval: listed to, and decided by, a token of
	// its agent alone.
	done := make(chan []byte, 1)
	go func() {
		_, body := call(t, srv, http.MethodPost, "/v1/agents/actor/runs", actorToken, `{"task": "list"}`)
		done <- body
	}()
	var p *serve.Pending
	select {
	case body := <-done:
		t.Fatalf("the run ended before it asked: %s", body)
	case p = <-waiting:
	}
	if code, body := call(t, srv, http.MethodGet, "/v1/approvals", labelerToken, ""); code != 200 || strings.TrimSpace(string(body)) != `{"approvals":[]}` {
		t.Errorf("the labeler's token lists approvals: %d %s", code, body)
	}
	for _, tok := range []string{actorToken, bothToken} {
		if code, body := call(t, srv, http.MethodGet, "/v1/approvals", tok, ""); code != 200 || !strings.Contains(string(body), `"run":"`+p.Run+`"`) {
			t.Errorf("listing approvals: %d %s", code, body)
		}
	}
	path := "/v1/runs/" + p.Run + "/approvals/" + p.Key
	code, body = call(t, srv, http.MethodPost, path, labelerToken, `{"approve": true}`)
	_, none = call(t, srv, http.MethodPost, "/v1/runs/"+p.Run+"/approvals/nokey", labelerToken, `{"approve": true}`)
	if code != 404 || string(body) != strings.ReplaceAll(string(none), "nokey", p.Key) {
		t.Errorf("the labeler's token decides the actor's call: %d %s; want 404 as for no such call, %s", code, body, none)
	}
	if code, body := call(t, srv, http.MethodGet, "/v1/approvals", actorToken, ""); !strings.Contains(string(body), `"run":"`+p.Run+`"`) {
		t.Fatalf("the call no longer waits: %d %s", code, body)
	}
	if code, body := call(t, srv, http.MethodPost, path, actorToken, `{"approve": true}`); code != 200 {
		t.Fatalf("the actor's token decides: %d %s", code, body)
	}
	body = <-done
	if err := json.Unmarshal(body, &res); err != nil || res.Outcome != agentrt.OutcomeOK || sh.calls.Load() != 1 {
		t.Errorf("the actor's run: %s, the tool ran %d times", body, sh.calls.Load())
	}
	if code, _ := call(t, srv, http.MethodGet, "/v1/runs/"+res.ID, labelerToken, ""); code != 404 {
		t.Errorf("the labeler's token reads the actor's run: %d", code)
	}
}

// TestTokensMCP: over MCP's HTTP transport, a token's client lists and
// calls only the agents the token admits to: another is an unknown tool.
// A session opened with one token is refused to another.
func TestTokensMCP(t *testing.T) {
	runs := newRuns(t, "", false) // a call that needs approval is denied at once
	act, sh := actor(t, runs.Ask)
	h, err := serve.MCPHandler("test", []serve.Agent{labeler(t), act}, runs, twoTokens(t), serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the sessions' own
	ctx := context.Background()
	session := func(token string) *mcp.ClientSession {
		client := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	for token, want := range map[string]string{labelerToken: "labeler", actorToken: "actor", bothToken: "labeler actor"} {
		list, err := session(token).ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		if strings.Join(names, " ") != want && (token != bothToken || strings.Join(names, " ") != "actor labeler") {
			t.Errorf("the tools listed to the token of %s: %v", want, names)
		}
	}
	cs := session(labelerToken)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash on start"}})
	if err != nil || res.IsError {
		t.Fatalf("the labeler's token calls labeler: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "actor", Arguments: map[string]any{"task": "list"}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("the labeler's token calls actor: %v %+v", err, res)
	}
	if sh.calls.Load() != 0 {
		t.Errorf("the actor's tool ran %d times", sh.calls.Load())
	}

	// The labeler's session, asked with another token.
	for _, token := range []string{actorToken, bothToken} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "labeler") {
			t.Errorf("the labeler's session with another token: %d %s", resp.StatusCode, body)
		}
	}
}
