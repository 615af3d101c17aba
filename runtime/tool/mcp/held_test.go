package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
)

// TestUnansweredBounded: a server that sends requests and reads none of
// the answers (over an unbuffered pipe, so each answer's write blocks)
// ends its session once it has more unanswered than agentc holds, by
// their number or by their bytes, and the error says why.
func TestUnansweredBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    flooding
		want string
	}{
		{"count", flooding{n: MaxUnanswered + 1}, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
		{"bytes", flooding{n: 70, pad: 1 << 20}, "the server sent 64 requests (64.0 MiB of parameters)"},
		// One id sent again and again: the SDK forgets an id once it
		// starts writing its answer, and takes the next as a request of
		// its own.
		{"one id", flooding{n: MaxUnanswered + 1, sameID: true}, fmt.Sprintf("the server sent %d requests", MaxUnanswered+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := net.Pipe()
			flooded := make(chan error, 1)
			held := heldTransport{Transport: &sdk.IOTransport{Reader: ours, Writer: ours}, flooded: func(err error) { flooded <- err }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan struct{})
			go func() { handServer(theirs, theirs, tc.f, ctx.Done()); theirs.Close(); close(served) }()
			client := sdk.NewClient(&sdk.Implementation{Name: "agentc", Version: "test"}, nil)
			session, err := client.Connect(ctx, held, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The server floods while the call is under way; the call
			// ends with the session.
			if _, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "echo"}); err == nil {
				t.Error("a call the server never answered succeeded")
			}
			err = <-flooded
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "whose answers it has not read") {
				t.Errorf("the session ended with %q, want %q", err, tc.want)
			}
			if err := session.Wait(); err == nil {
				t.Error("the session ended without an error")
			}
			cancel()
			<-served
		})
	}
}

// TestUnansweredBoundedHTTP: a server over HTTP that streams pings in its
// answer to a call and never answers the requests that carry agentc's
// answers (each holds a goroutine and a connection until it is answered:
// 100,000 pings took 20,000 file descriptors and 2 GB) ends its session
// once more than MaxUnansweredHTTP are unanswered; the call fails saying
// why, the connections stay under the bound, and the requests held open
// are ended at once, not at Close.
func TestUnansweredBoundedHTTP(t *testing.T) {
	const pings = 10_000
	const most = 100 // past it the server gives up, to end a test of a client without the bound
	var mu sync.Mutex
	conns, maxConns := 0, 0 // connections open at once
	held, maxHeld := 0, 0   // requests carrying answers, held unanswered at once
	heldChanged := make(chan struct{}, 1)
	over := make(chan struct{})
	overOnce := sync.Once{}
	count := func(n *int, peak *int, d int) {
		mu.Lock()
		defer mu.Unlock()
		*n += d
		*peak = max(*peak, *n)
		if *peak > most {
			overOnce.Do(func() { close(over) })
		}
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readCall(w, r)
		if !ok {
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		switch {
		case m.Method == "": // an answer to a ping: held
			count(&held, &maxHeld, 1)
			select {
			case <-r.Context().Done():
			case <-over:
			}
			count(&held, &maxHeld, -1)
			select {
			case heldChanged <- struct{}{}:
			default:
			}
		case m.ID == nil: // a notification
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			m.answer(w, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}`)
		case m.Method == "tools/list":
			m.answer(w, `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`)
		case m.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			rc := http.NewResponseController(w)
			for i := range pings {
				if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i); err != nil {
					return
				}
				if i%100 == 0 && rc.Flush() != nil {
					return
				}
			}
			rc.Flush()
			select { // never answers the call
			case <-r.Context().Done():
			case <-over:
			}
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			count(&conns, &maxConns, 1)
		case http.StateClosed, http.StateHijacked:
			count(&conns, &maxConns, -1)
		}
	}
	ts.Start()
	defer ts.Close()
	decl := plan.Tool{Kind: "mcp", Description: "A flood.", URL: ts.URL, Allow: []string{"echo"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := fmt.Sprintf("the server sent %d requests", MaxUnansweredHTTP+1)
	if _, err := callTool(s, "echo", `{}`); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("more than agentc holds (%d requests", MaxUnansweredHTTP)) {
		t.Errorf("a call while the server floods: %v, want it to say %q and name the bound", err, want)
	}
	// The requests held open end with the session, not at Close.
	bound := time.After(time.Minute) // a bound, not a measure
	for {
		mu.Lock()
		n := held
		mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-heldChanged:
		case <-bound:
			t.Fatalf("%d requests carrying answers are still held open a minute after the session ended", n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if maxHeld > MaxUnansweredHTTP || maxConns > most {
		t.Errorf("at once, %d requests carrying answers were held open (the bound is %d) and %d connections were open", maxHeld, MaxUnansweredHTTP, maxConns)
	}
}

// TestStartFloodedHTTP: a server over HTTP that answers initialize with a
// stream of pings and never answers the requests carrying agentc's answers
// (nor initialize) fails the start once its timeout has passed, within
// Close's grace: the SDK's close of the session it failed to start waited
// for those requests, for good.
func TestStartFloodedHTTP(t *testing.T) {
	over := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readCall(w, r)
		if !ok {
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
			http.NewResponseController(w).Flush()
		case m.Method == "": // an answer to a ping: held, as initialize is
		default:
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		select {
		case <-r.Context().Done():
		case <-over:
		}
	}))
	defer ts.Close()
	defer close(over)
	startTimesOut(t, plan.Tool{Kind: "mcp", Description: "A flood.", URL: ts.URL, Allow: []string{"echo"}}, WithHTTPClient(ts.Client()))
}

// TestRenewedHeldCut: the requests carrying agentc's answers to what a
// server over HTTP asked in a session it then ended, left unanswered, are
// ended with that session: the SDK's close of the old session waited on
// them, and nothing else ended them, past the server's Close too, so that
// a server ending session after session held 64 connections more each time.
func TestRenewedHeldCut(t *testing.T) {
	var mu sync.Mutex
	sessions, held := 0, 0
	heldChanged := make(chan struct{}, 1)
	over := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readCall(w, r)
		if !ok {
			return
		}
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case m.Method == "initialize":
			mu.Lock()
			sessions++
			w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", sessions))
			mu.Unlock()
			m.answer(w, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"held","version":"1"}}`)
		case m.ID == nil: // a notification
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "": // an answer to a ping: held
			mu.Lock()
			held++
			mu.Unlock()
			select {
			case heldChanged <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
			case <-over:
			}
			mu.Lock()
			held--
			mu.Unlock()
			select {
			case heldChanged <- struct{}{}:
			default:
			}
		case m.Method == "tools/list":
			m.answer(w, `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`)
		case m.Method == "tools/call" && id == "s1":
			// Three pings, then the answer; the next call finds the
			// session ended.
			mu.Lock()
			first := held == 0 && sessions == 1
			mu.Unlock()
			if !first {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
			http.NewResponseController(w).Flush()
			// The answer once the pings' answers are held.
			for {
				mu.Lock()
				n := held
				mu.Unlock()
				if n == 3 {
					break
				}
				select {
				case <-heldChanged:
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"one\"}]}}\n\n", m.ID)
		case m.Method == "tools/call":
			m.answer(w, `{"content":[{"type":"text","text":"two"}]}`)
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	defer ts.Close()
	defer close(over)
	decl := plan.Tool{Kind: "mcp", Description: "A server.", URL: ts.URL, Allow: []string{"echo"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		if res, err := callTool(s, "echo", `{}`); err != nil || res != want {
			t.Fatalf("a call: %v, %v; want %q", res, err, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	bound := time.After(time.Minute) // a bound, not a measure
	for {
		mu.Lock()
		n := held
		mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-heldChanged:
		case <-bound:
			t.Fatalf("%d requests carrying answers in the ended session are still held open a minute after Close", n)
		}
	}
}

// TestRenewFloodedHTTP: a server over HTTP that ends its session, then
// answers the new session's tool listing with pings and never answers the
// requests carrying agentc's answers, fails the call that renews it once
// its context ends: closing the session that failed waited on those
// requests for good, holding every call and Close with it.
func TestRenewFloodedHTTP(t *testing.T) {
	var mu sync.Mutex
	sessions := 0
	over := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readCall(w, r)
		if !ok {
			return
		}
		mu.Lock()
		n := sessions
		mu.Unlock()
		switch {
		case m.Method == "initialize":
			mu.Lock()
			sessions++
			w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", sessions))
			mu.Unlock()
			m.answer(w, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"held","version":"1"}}`)
			return
		case m.ID == nil: // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		case m.Method == "tools/list" && n == 1:
			m.answer(w, `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`)
			return
		case m.Method == "tools/list":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
			http.NewResponseController(w).Flush()
		case m.Method == "tools/call":
			http.Error(w, "session not found", http.StatusNotFound)
			return
		case m.Method == "": // an answer to a ping: held, as the listing is
		default:
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		select {
		case <-r.Context().Done():
		case <-over:
		}
	}))
	defer ts.Close()
	defer close(over)
	decl := plan.Tool{Kind: "mcp", Description: "A server.", URL: ts.URL, Allow: []string{"echo"}}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := s.call(ctx, "echo", json.RawMessage(`{}`))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "a new one could not be made") {
			t.Errorf("a call whose new session's listing floods: %v", err)
		}
	case <-time.After(time.Minute): // a bound, not a measure
		t.Fatal("the call did not end a minute after its context")
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// rpcCall is a JSON-RPC message a fake server over HTTP was sent: a request
// (an ID and a method), a notification (no ID) or an answer (no method).
type rpcCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readCall reads the message a POST carries; ok is false for another
// method (the session's DELETE) and for a body that is not one, which is
// answered 400.
func readCall(w http.ResponseWriter, r *http.Request) (m rpcCall, ok bool) {
	if r.Method != http.MethodPost {
		return m, false
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return m, false
	}
	return m, true
}

// answer answers the request with result, as JSON.
func (m rpcCall) answer(w http.ResponseWriter, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}
