package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/internal/servetest"
)

// TestRunsPerToken: the clients of one token have at most so many runs
// going at once, whichever front starts them (the HTTP API, MCP over
// HTTP): one more is refused, 429 over the API (before its body is read)
// and an error result over MCP, saying why, and nothing of it runs; another token's clients start
// theirs; once a run ends, its token may start another.
func TestRunsPerToken(t *testing.T) {
	const first, second = "first-token-of-the-server", "second-token-of-the-server"
	tokens, err := serve.NewTokens([]serve.Token{{Token: first}, {Token: second}})
	if err != nil {
		t.Fatal(err)
	}
	runs := newRuns(t, "", true)
	runs.SetRunsPerToken(1)
	ag, gate := waiter(t)
	srv := serveAll(t, ag, runs, tokens)

	// hold starts a run of token's over the API that waits until it is
	// cancelled, and returns its id and its response, to read to its end.
	hold := func(token string) (string, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/waiter/runs", strings.NewReader(`{"task":"wait"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		<-gate.entered
		return resp.Header.Get(serve.RunIDHeader), resp
	}
	id, held := hold(first)

	// refused makes a request that the bound must refuse, and returns
	// what it was told; a run of it that starts fails the test (and is
	// stopped with the server's runs).
	refused := func(what string, do func() (string, error)) string {
		t.Helper()
		told := make(chan string, 1)
		go func() {
			got, err := do()
			if err != nil {
				got = err.Error()
			}
			told <- got
		}()
		select {
		case got := <-told:
			return got
		case <-gate.entered:
			t.Fatalf("%s: a run past the token's bound started", what)
			return ""
		}
	}
	const busy = "the clients of this token have as many runs going as the server allows at once (1)"
	got := refused("the API", func() (string, error) {
		// Refused before its body is read: a body that never comes.
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/waiter/runs", pr)
		req.Header.Set("Authorization", "Bearer "+first)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b), nil
	})
	if !strings.HasPrefix(got, "429 ") || !strings.Contains(got, busy) {
		t.Errorf("a second run of one token over the API: %s", got)
	}
	cs, err := connectHTTP(context.Background(), srv.URL+"/mcp", first, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	got = refused("MCP", func() (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "waiter", Arguments: map[string]any{"task": "wait"}})
		if err != nil {
			return "", err
		}
		if !res.IsError || len(res.Content) == 0 {
			return "not an error result", nil
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	})
	if !strings.Contains(got, busy) {
		t.Errorf("a second run of one token over MCP: %s", got)
	}
	if n := runs.InFlight(); n != 1 {
		t.Errorf("%d runs in flight, want the first token's one", n)
	}

	// Another token's clients are not held to the first's runs.
	other, otherResp := hold(second)

	// The first token's run ends (cancelled); its response ends after
	// the run is uncounted, and the token may start another.
	if status, body := call(t, srv, http.MethodPost, "/v1/runs/"+id+"/cancel", first, ""); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if _, err := io.ReadAll(held.Body); err != nil {
		t.Fatal(err)
	}
	again, againResp := hold(first)
	for _, r := range []struct {
		id   string
		resp *http.Response
	}{{again, againResp}, {other, otherResp}} {
		if status, body := call(t, srv, http.MethodPost, "/v1/runs/"+r.id+"/cancel", first, ""); status != http.StatusOK {
			t.Errorf("cancel: %d %s", status, body)
		}
		io.ReadAll(r.resp.Body)
	}
}

// TestMinFree holds runs to the room on the disks where the server keeps
// them: short of it, a run is refused over the API (507) and MCP, saying
// so without naming the disk, before anything of it is kept; the log
// names the disk, once for a burst of refusals; with room, runs start.
func TestMinFree(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	logged := servetest.Log(runs)
	runs.SetMinFree(math.MaxUint64, "", dir)
	srv := serveAll(t, labeler(t), runs, serve.AllAgents(apiToken))

	const short = "the server is short of disk space where it keeps runs"
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "Crash on start"}`)
	if code != http.StatusInsufficientStorage || !strings.Contains(string(body), short) || strings.Contains(string(body), dir) {
		t.Errorf("a run short of room over the API: %d %s", code, body)
	}
	cs, err := connectHTTP(context.Background(), srv.URL+"/mcp", apiToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "Crash on start"}})
	if err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, short) {
		t.Errorf("a run short of room over MCP: %v %+v", err, res)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("runs refused for want of room left %v", names)
	}
	if l := logged(); len(l) != 1 || !strings.Contains(l[0], "refusing runs: "+dir+" has ") || !strings.Contains(l[0], "--min-free") {
		t.Errorf("the log said %q, want one line naming the disk", l)
	}

	runs.SetMinFree(1, dir)
	if code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "Crash on start"}`); code != http.StatusOK {
		t.Errorf("a run with room: %d %s", code, body)
	}
}

// serveAll serves ag over the HTTP API and MCP together, as agentc serve
// --http does, to tokens; the runs are stopped first at the test's end,
// since the server's close waits for them.
func serveAll(t *testing.T, ag serve.Agent, runs *serve.Runs, tokens *serve.Tokens) *httptest.Server {
	t.Helper()
	api, err := serve.API([]serve.Agent{ag}, runs, tokens)
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.MCPHandler("test", []serve.Agent{ag}, runs, tokens, serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.Mux(h, api, func() bool { return false }))
	t.Cleanup(srv.Close)
	t.Cleanup(runs.Stop)
	return srv
}

// bodyReads serves h, saying on read the path of each POST whose body
// the handler begins to read.
func bodyReads(h http.Handler, read chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r.Body = &firstRead{ReadCloser: r.Body, read: func() { read <- r.URL.Path }}
		}
		h.ServeHTTP(w, r)
	})
}

type firstRead struct {
	io.ReadCloser
	once sync.Once
	read func()
}

func (f *firstRead) Read(p []byte) (int, error) {
	f.once.Do(f.read)
	return f.ReadCloser.Read(p)
}

// TestBodyReadBounded: over the HTTP API (JSON and multipart) and MCP in
// a session, a request's body is read within the bound on reading, as
// much of it as the body may be taken before a byte of it is read: with
// less of the bound left than a body may be, a request whose body says
// no length waits, its body unread (many requests at once cannot each
// hold a body read whole before its input is weighed), and is answered
// once the bound is given back; a small body that says its length is
// read at once.
func TestBodyReadBounded(t *testing.T) {
	runs := newRuns(t, "", true)
	agents := []serve.Agent{labeler(t), reader(t)}
	tokens := serve.AllAgents(apiToken)
	api, err := serve.API(agents, runs, tokens)
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.MCPHandler("test", agents, runs, tokens, serve.SessionBounds{})
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 16)
	srv := httptest.NewServer(bodyReads(serve.Mux(h, api, func() bool { return false }), read))
	t.Cleanup(srv.Close)
	t.Cleanup(runs.Stop)
	cs, err := connectHTTP(context.Background(), srv.URL+"/mcp", apiToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for len(read) > 0 {
		<-read // the session's own requests
	}
	waits := make(chan struct{}, 16)
	serve.OnReadingWait(t, func() { waits <- struct{}{} })

	// Less of the bound is left than a body of 8 MiB.
	// What is held is given back at the latest as the test ends, so that
	// a failing test's requests end.
	hold := func() func() {
		release := sync.OnceFunc(runs.HoldReading(t, serve.MaxReading-serve.MaxBodyBytes+1))
		t.Cleanup(release)
		return release
	}
	release := hold()
	if code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs", apiToken, `{"title": "Crash on start"}`); code != http.StatusOK {
		t.Errorf("a small body of said length, with most of the bound taken: %d %s", code, body)
	}
	<-read
	release()

	multipart, ct := form(t, "input", `{"title": "Lunch"}`, "note", "Lunch is at noon on Friday.")
	for _, c := range []struct{ name, path, contentType, body, want string }{
		{"the API, JSON", "/v1/agents/labeler/runs", "application/json", `{"title": "Crash on start"}`, `"outcome":"ok"`},
		{"the API, multipart", "/v1/agents/reader/runs", ct, multipart, `"outcome":"ok"`},
		{"MCP in a session", "/mcp", "application/json", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"labeler","arguments":{"title":"x"}}}`, `"result"`},
		{"MCP opening a session", "/mcp-open", "application/json", fmt.Sprintf(initializeMessage, "opener"), `"protocolVersion"`},
	} {
		release := hold()
		// A body of no length said, sent once the request has waited.
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		path, opening := strings.CutSuffix(c.path, "-open")
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		req.Header.Set("Content-Type", c.contentType)
		if path == "/mcp" {
			req.Header.Set("Accept", "application/json, text/event-stream")
			if !opening {
				req.Header.Set("Mcp-Session-Id", cs.ID())
			}
		}
		answers := make(chan string, 1)
		go func() { answers <- answerOf(req) }()
		select {
		case out := <-answers:
			t.Fatalf("%s: answered with the bound taken and no body sent: %.300s", c.name, out)
		case path := <-read:
			t.Fatalf("%s: the body of %s was read with less of the bound left than it may be", c.name, path)
		case <-waits:
		}
		release()
		if _, err := io.WriteString(pw, c.body); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		if out := <-answers; !strings.HasPrefix(out, "200 ") || !strings.Contains(out, c.want) {
			t.Errorf("%s, once the bound was given back: %.300s", c.name, out)
		}
		<-read
	}
}

// TestBodyHeldWithinBound: a body read within the bound on reading stays
// within it until its run has checked its input: its request takes, before
// reading it, as much as an input of its length may weigh
// (serve.BodyWeight), and its run checks the input under that share, over
// the HTTP API and MCP in a session. With the bound taken, eight requests
// of 200 KB of small values (each weighing 12.8 MB) each wait once, their
// bodies unread; once it is given back, none waits again: a request that
// gave its share back once its body was read, and waited for its run to
// take the input's weight, held its body outside the bound while it
// waited, and every body sent at once was read before the first was
// checked (20 of 32 MiB, 2.8 GB).
func TestBodyHeldWithinBound(t *testing.T) {
	runs := newRuns(t, "", true)
	srv := serveAll(t, labeler(t), runs, serve.AllAgents(apiToken))
	cs, err := connectHTTP(context.Background(), srv.URL+"/mcp", apiToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// Refused by the contract (an empty title), once checked: no run.
	dense := `{"title":"","n":[` + strings.Repeat("0,", 100000) + `0]}`
	if w := serve.Weight([]byte(dense)); w <= serve.MaxReading/3 || w > serve.MaxReading/2 {
		t.Fatalf("the input weighs %d: two at once must fit the bound, three not", w)
	}
	var waits atomic.Int32
	waited := make(chan struct{}, 64)
	serve.OnReadingWait(t, func() {
		waits.Add(1)
		waited <- struct{}{}
	})
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"the API", "/v1/agents/labeler/runs", dense, "422 "},
		{"MCP in a session", "/mcp", `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"labeler","arguments":` + dense + `}}`, `"isError":true`},
	} {
		const n = 8
		waits.Store(0)
		// Given back at the latest as the test ends, so that a failing
		// test's requests end.
		release := sync.OnceFunc(runs.HoldReading(t, serve.MaxReading))
		t.Cleanup(release)
		answers := make(chan string, n)
		for i := range n {
			body := c.body
			if c.path == "/mcp" {
				body = fmt.Sprintf(body, 100+i) // each call of the session its own id
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+apiToken)
			req.Header.Set("Content-Type", "application/json")
			if c.path == "/mcp" {
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", cs.ID())
			}
			go func() { answers <- answerOf(req) }()
		}
		for range n {
			select {
			case out := <-answers:
				t.Fatalf("%s: answered with the bound taken: %.300s", c.name, out)
			case <-waited:
			}
		}
		release()
		for range n {
			if out := <-answers; !strings.Contains(out, c.want) {
				t.Errorf("%s: %.300s", c.name, out)
			}
		}
		if w := waits.Load(); w != n {
			t.Errorf("%s: %d waits for the bound, want %d: a request waited again, its body read", c.name, w, n)
		}
		for len(waited) > 0 {
			<-waited
		}
	}
}

// TestGetRecordBounded: GET /v1/runs/{id} reads and encodes a run's
// record within the bound on reading, weighed by its size, held until
// the answer is written: with all but a megabyte of the bound taken, a
// GET of the record of a 2 MiB input waits, seven more at once wait too,
// none answered, and each is answered whole once the bound is given
// back; the same of the record in memory, and read back from its file by
// a later server.
func TestGetRecordBounded(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	srv := serveAll(t, labeler(t), runs, serve.AllAgents(apiToken))
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs?deadline=1ns", apiToken, `{"title":"`+strings.Repeat("a", 2<<20)+`"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK || res.ID == "" {
		t.Fatalf("%d %.300s", code, body)
	}
	later := newRuns(t, dir, true)
	laterSrv := serveAll(t, labeler(t), later, serve.AllAgents(apiToken))
	waits := make(chan struct{}, 16)
	serve.OnReadingWait(t, func() { waits <- struct{}{} })
	for _, c := range []struct {
		name string
		runs *serve.Runs
		srv  *httptest.Server
	}{{"in memory", runs, srv}, {"on disk", later, laterSrv}} {
		// Given back at the latest as the test ends, so that a failing
		// test's requests end.
		release := sync.OnceFunc(c.runs.HoldReading(t, serve.MaxReading-1<<20))
		t.Cleanup(release)
		answers := make(chan string, 8)
		for range 8 {
			req, _ := http.NewRequest(http.MethodGet, c.srv.URL+"/v1/runs/"+res.ID, nil)
			req.Header.Set("Authorization", "Bearer "+apiToken)
			go func() { answers <- answerOf(req) }()
			select {
			case out := <-answers:
				t.Fatalf("%s: a GET was answered with the bound taken: %.300s", c.name, out)
			case <-waits:
			}
		}
		release()
		for range 8 {
			if out := <-answers; !strings.HasPrefix(out, "200 ") || !strings.Contains(out, res.ID) || len(out) < 2<<20 {
				t.Errorf("%s: a GET: %.300s", c.name, out)
			}
		}
	}
}

// answerOf makes req and returns its status and body, or the error that
// ended it.
func answerOf(req *http.Request) string {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + string(out)
}

// startClock is a run's clock that, the first time the run reads it (as
// it starts, before it reads its input), records whether the whole bound
// on reading was free.
type startClock struct {
	runs      *serve.Runs
	once      sync.Once
	freeFirst atomic.Bool
}

func (c *startClock) Now() time.Time {
	c.once.Do(func() { c.freeFirst.Store(c.runs.ReadingFree(serve.MaxReading)) })
	return time.Now()
}

// freeModel answers as the test model does, and records whether the
// whole bound on reading was free when the run called it.
type freeModel struct {
	runs *serve.Runs
	free atomic.Bool
	testmodel.Model
}

func (m *freeModel) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	m.free.Store(m.runs.ReadingFree(serve.MaxReading))
	return m.Model.Complete(ctx, req)
}

// TestRunReadsInputWithinBound: a run here reads its input again (decodes
// it, checks it, renders its prompt) under the share its request checked
// it under, given back once the run has read it: the run started with
// the bound still held, and called its model with it free. The share was
// given back once the input was checked, and each of many runs read its
// input outside the bound.
func TestRunReadsInputWithinBound(t *testing.T) {
	runs := newRuns(t, "", true)
	ag := labeler(t)
	clock := &startClock{runs: runs}
	model := &freeModel{runs: runs}
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: model, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ag.Runner = r
	srv := serveAll(t, ag, runs, serve.AllAgents(apiToken))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader(`{"title":"It crashes."}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	if out := answerOf(req); !strings.Contains(out, "200 ") {
		t.Fatalf("%.300s", out)
	}
	if clock.freeFirst.Load() {
		t.Error("the run started with the bound on reading free: its input's share was given back before the run read it")
	}
	if !model.free.Load() {
		t.Error("the run called its model with its input's share held")
	}
}

// TestCancelRecordBounded: POST /v1/runs/ID/cancel of a run kept on disk
// reads its record within the bound on reading, as GET does: a record of
// a 2 MiB input was read whole, and decoded, by each request outside it.
func TestCancelRecordBounded(t *testing.T) {
	dir := t.TempDir()
	runs := newRuns(t, dir, true)
	srv := serveAll(t, labeler(t), runs, serve.AllAgents(apiToken))
	code, body := call(t, srv, http.MethodPost, "/v1/agents/labeler/runs?deadline=1ns", apiToken, `{"title":"`+strings.Repeat("a", 2<<20)+`"}`)
	var res serve.RunResult
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK || res.ID == "" {
		t.Fatalf("%d %.300s", code, body)
	}
	later := newRuns(t, dir, true)
	laterSrv := serveAll(t, labeler(t), later, serve.AllAgents(apiToken))
	waits := make(chan struct{}, 16)
	serve.OnReadingWait(t, func() { waits <- struct{}{} })
	release := sync.OnceFunc(later.HoldReading(t, serve.MaxReading-1<<20))
	t.Cleanup(release)
	answers := make(chan string, 8)
	for range 8 {
		req, _ := http.NewRequest(http.MethodPost, laterSrv.URL+"/v1/runs/"+res.ID+"/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		go func() { answers <- answerOf(req) }()
		select {
		case out := <-answers:
			t.Fatalf("a cancel was answered with the bound taken: %.300s", out)
		case <-waits:
		}
	}
	release()
	for range 8 {
		if out := <-answers; !strings.HasPrefix(out, "409 ") || !strings.Contains(out, "not in flight here (it is done)") {
			t.Errorf("a cancel: %.300s", out)
		}
	}
}
