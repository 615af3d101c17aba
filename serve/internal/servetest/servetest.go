// Package servetest holds the agents the tests of package serve and its
// bindings serve.
package servetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/serve"
)

// Reader is an agent that takes a text file, note, of at most 66 bytes
// (its base64 within 88), and a title, run by the test model, its files
// kept in a store of its own.
func Reader(t testing.TB) serve.Agent {
	t.Helper()
	p := &plan.Plan{Agent: plan.Agent{
		Name: "reader", Description: "Reads a note.", Model: plan.Model{Provider: "test", Name: "m"}, Instructions: "Say what the note is about.",
		Input: &plan.Input{Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},` +
			`"note":{"type":"string","contentEncoding":"base64","contentMediaType":"text/plain","maxLength":88}},"required":["note"]}`)},
		Capabilities: plan.Capabilities{Tools: map[string]plan.Tool{}},
		Output:       &plan.Output{Name: "answer", Description: "The topic.", Mode: "tool", Enforce: "local", Retries: 2, Schema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)},
		Strategy:     plan.Strategy{OnProse: "remind", Reminders: 2},
	}}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() }) // before the directory is removed

	r, err := agentrt.New(p, agentrt.Options{Model: &testmodel.Model{}, Files: store})
	if err != nil {
		t.Fatal(err)
	}
	return serve.Agent{Plan: p, Runner: r, Files: store}
}

// Log sets runs' log (Runs.SetLog) to one the test reads: lines returns
// what it has been told so far, read under its lock.
func Log(runs *serve.Runs) (lines func() []string) {
	var mu sync.Mutex
	var logged []string
	runs.SetLog(func(line string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, line)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), logged...)
	}
}

// StalledLength is the length a Stalled request's body says it has: past
// the 512 KiB whose share is the whole bound on reading (serve.BodyWeight).
const StalledLength = 1 << 20

// Stall is a request whose body stopped coming (Stalled).
type Stall struct {
	conn net.Conn
	br   *bufio.Reader
}

// Stalled sends, on a connection of its own, a POST of url with the bearer
// token and header, whose body says it is StalledLength bytes long but is
// only head, sent with the header, and no more. It asks the server to
// continue (Expect: 100-continue) and returns once told to, which the
// server tells as it begins to read the body: the request holds its share
// of the bound on reading by then, and its body is timed from then
// (serve.BoundReads).
func Stalled(t testing.TB, url, token string, header http.Header, head string) *Stall {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A bound on a test that fails, not a measure: the server answers in
	// the time the test's clock allows.
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n", u.RequestURI(), u.Host, token, StalledLength)
	for name, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", name, v)
		}
	}
	// The head in the same write: the server has it as it reads the
	// header, not some time after it was told to continue.
	req.WriteString("\r\n" + head)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	s := &Stall{conn: conn, br: bufio.NewReader(conn)}
	resp, err := http.ReadResponse(s.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusContinue {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("asked to continue: %s %.300s", resp.Status, b)
	}
	return s
}

// Send sends more of the body.
func (s *Stall) Send(t testing.TB, b string) {
	t.Helper()
	if _, err := io.WriteString(s.conn, b); err != nil {
		t.Fatal(err)
	}
}

// Answer reads the server's answer, and reports whether the server then
// closed the connection rather than wait for the rest of the body (EOF:
// it had read what was sent).
func (s *Stall) Answer(t testing.TB) (status int, body string, closed bool) {
	t.Helper()
	resp, err := http.ReadResponse(s.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.br.ReadByte()
	return resp.StatusCode, string(b), err == io.EOF
}
