package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/internal/leaf/bodyrate"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/serve/internal/servetest"
)

// TestBoundReads: a request's body is timed from the server's first read
// of it, on the clock the runs keep: it must begin within BodyWait and
// then come at bodyrate.Rate, to the nanosecond (a read just before its
// due is served, the read waiting at its due fails with a
// *serve.SlowBodyError, which says what came in what time), and the
// connection is closed after the answer, the rest of the body unread. A
// request that waited before it read its body is not held to the wait,
// and a body read whole is no longer timed: an hour later its request is
// answered, its context alive.
func TestBoundReads(t *testing.T) {
	clk := &bodyrate.Manual{}
	runs := newRuns(t, "", true)
	runs.SetClock(clk)
	type progress struct {
		n   int64
		err error
	}
	read := make(chan progress, 64)
	begin, answer := make(chan struct{}, 1), make(chan struct{}, 1)
	srv := httptest.NewServer(runs.BoundReads(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-begin
		var n int64
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Body.Read(buf)
			n += int64(k)
			if k > 0 || err != nil {
				read <- progress{n, err}
			}
			var slow *serve.SlowBodyError
			if errors.As(err, &slow) {
				http.Error(w, err.Error(), http.StatusRequestTimeout)
				return
			}
			if err != nil {
				break
			}
		}
		<-answer
		fmt.Fprintf(w, "read %d bytes; the request's context: %v", n, r.Context().Err())
	})))
	t.Cleanup(srv.Close)
	// upTo waits until the handler has read n bytes of the body, and
	// returns the error of the last read.
	upTo := func(n int64) error {
		t.Helper()
		for {
			p := <-read
			if p.n > n {
				t.Fatalf("read %d bytes, want %d", p.n, n)
			}
			if p.n == n || p.err != nil {
				return p.err
			}
		}
	}

	begin <- struct{}{}
	st := servetest.Stalled(t, srv.URL, apiToken, nil, "")
	start := clk.Now() // its first read
	clk.Advance(serve.BodyWait - 1)
	st.Send(t, "{")
	if err := upTo(1); err != nil {
		t.Fatalf("a first byte just within the wait: %v", err)
	}
	st.Send(t, strings.Repeat(" ", bodyrate.Rate))
	if err := upTo(1 + bodyrate.Rate); err != nil {
		t.Fatalf("%d bytes more: %v", bodyrate.Rate, err)
	}
	// Those bytes earned a second: a byte just before it is read.
	clk.Advance(bodyrate.Due(start, serve.BodyWait, 1+bodyrate.Rate).Sub(clk.Now()) - 1)
	st.Send(t, " ")
	if err := upTo(2 + bodyrate.Rate); err != nil {
		t.Fatalf("a byte just before its due: %v", err)
	}
	due := bodyrate.Due(start, serve.BodyWait, 2+bodyrate.Rate)
	clk.Advance(due.Sub(clk.Now()))
	var slow *serve.SlowBodyError
	if err := upTo(2 + bodyrate.Rate); !errors.As(err, &slow) || slow.Read != 2+bodyrate.Rate || slow.Took != due.Sub(start) {
		t.Fatalf("the read waiting at the body's due: %v, want a *serve.SlowBodyError of %d bytes in %v", err, 2+bodyrate.Rate, due.Sub(start))
	}
	status, body, closed := st.Answer(t)
	if want := fmt.Sprintf("the body came too slowly: %d bytes in 11s, where a request's body must begin within 10s of the server's reading it and then come at 16 KiB a second at least", 2+bodyrate.Rate); status != http.StatusRequestTimeout || !strings.Contains(body, want) || !closed {
		t.Errorf("answered %d %q, the connection closed: %v; want 408 saying %q, closed", status, body, closed, want)
	}

	// A request that waits an hour before it reads its body is timed
	// from its first read; read whole, it is timed no longer.
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"title": "Crash on start"}`))
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan string, 1)
	go func() { answers <- answerOf(req) }()
	clk.Advance(time.Hour)
	begin <- struct{}{}
	for p := range read {
		if p.err != nil {
			if p.err != io.EOF {
				t.Fatalf("a body that came at once, an hour after its request: %v", p.err)
			}
			break
		}
	}
	clk.Advance(time.Hour)
	answer <- struct{}{}
	if out, want := <-answers, "200 OK read 27 bytes; the request's context: <nil>"; out != want {
		t.Errorf("a body read whole, an hour on: %q, want %q", out, want)
	}
}

// TestSlowBody: a client that sends the head of a body of more than
// 512 KiB (its share the whole bound on reading) and then nothing, over
// the HTTP API (JSON and multipart) and MCP in a session, is answered 408
// once its body's time is out, and its share is given back at once:
// another client's request, which waited on it, is then served. Before,
// the other request waited as long as the body's sender liked. A body
// read under no share (a decision, the request that opens an MCP session)
// is timed too: a decision is answered 408, and the MCP SDK answers what
// it answers a body it could not read.
func TestSlowBody(t *testing.T) {
	clk := &bodyrate.Manual{}
	runs := newRuns(t, "", true)
	runs.SetClock(clk)
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
	srv := httptest.NewServer(serve.Mux(h, api, func() bool { return false }))
	t.Cleanup(srv.Close)
	t.Cleanup(runs.Stop)
	cs, err := connectHTTP(context.Background(), srv.URL+"/mcp", apiToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	waits := make(chan struct{}, 16)
	serve.OnReadingWait(t, func() { waits <- struct{}{} })

	apiRun := func() string {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agents/labeler/runs", strings.NewReader(`{"title": "Crash on start"}`))
		req.Header.Set("Authorization", "Bearer "+apiToken)
		return answerOf(req)
	}
	mcpCall := func() string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "labeler", Arguments: map[string]any{"title": "x"}})
		if err != nil {
			return err.Error()
		}
		if res.IsError {
			return fmt.Sprintf("an error result: %+v", res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		return fmt.Sprintf("a result: %s", b)
	}
	mcpHeader := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	session := mcpHeader.Clone()
	session.Set("Mcp-Session-Id", cs.ID())
	for _, c := range []struct {
		name, path string
		header     http.Header
		head       string
		// other, when set, is another client's request, which waits for
		// the bound while the body is held, and what its answer holds.
		other     func() string
		otherSays string
		status    int
		says      string
	}{
		{"the API, JSON", "/v1/agents/labeler/runs", http.Header{"Content-Type": {"application/json"}}, `{"title": "`,
			apiRun, `200 OK {"id":`, http.StatusRequestTimeout, `^\{"error":"reading the body: the body came too slowly: \d+ bytes in 10(\.\d+)?s, where`},
		{"the API, multipart", "/v1/agents/reader/runs", http.Header{"Content-Type": {"multipart/form-data; boundary=b"}}, "--b\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n{\"title\": \"",
			apiRun, `200 OK {"id":`, http.StatusRequestTimeout, `^\{"error":"reading part input: the body came too slowly: \d+ bytes in 10(\.\d+)?s`},
		{"MCP in a session", "/mcp", session, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"labeler","arguments":{"title":"`,
			mcpCall, `a result: {"confidence":`, http.StatusRequestTimeout, `^the body came too slowly: \d+ bytes in 10(\.\d+)?s`},
		{"a decision", "/v1/runs/0123456789abcdef0123456789abcdef/approvals/k", http.Header{"Content-Type": {"application/json"}}, `{"approve": `,
			nil, "", http.StatusRequestTimeout, `^\{"error":"the body came too slowly: \d+ bytes in 10(\.\d+)?s`},
		{"MCP, a session's first request", "/mcp", mcpHeader, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":`,
			nil, "", http.StatusRequestTimeout, `^the body came too slowly: \d+ bytes in 10(\.\d+)?s`},
	} {
		st := servetest.Stalled(t, srv.URL+c.path, apiToken, c.header, c.head)
		others := make(chan string, 1)
		if c.other != nil {
			go func() { others <- c.other() }()
			<-waits // for the bound, which the body holds
		}
		clk.Advance(serve.BodyWait + time.Second)
		if status, body, closed := st.Answer(t); status != c.status || !regexp.MustCompile(c.says).MatchString(body) || !closed {
			t.Errorf("%s: answered %d %q, the connection closed: %v; want %d saying %q, closed", c.name, status, body, closed, c.status, c.says)
		}
		if c.other != nil {
			if out := <-others; !strings.HasPrefix(out, c.otherSays) {
				t.Errorf("%s: another client's request, once the body was given up: %.300s", c.name, out)
			}
		}
	}
}
