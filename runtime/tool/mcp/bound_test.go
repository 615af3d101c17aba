package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentc.dev/agentc/plan"
)

// TestMaxMessageBytes: an HTTP server's messages are held to what the SDK
// holds a stdio server's.
func TestMaxMessageBytes(t *testing.T) {
	if MaxMessageBytes != sdk.DefaultMaxLineLength {
		t.Errorf("MaxMessageBytes is %d, a stdio server's messages are held to %d", MaxMessageBytes, sdk.DefaultMaxLineLength)
	}
}

// intercepted serves the test server over streamable HTTP, but answers
// the requests match picks (by JSON-RPC method and, for tools/call, the
// tool's name) with answer, given the request's id. wrote counts the
// bytes answer wrote; done is closed when it returns.
type intercepted struct {
	*httptest.Server
	wrote atomic.Int64
	done  chan struct{}
}

func intercept(t *testing.T, match func(method, tool string) bool, answer func(w io.Writer, id json.RawMessage) error, contentType string) *intercepted {
	t.Helper()
	return interceptStatus(t, http.StatusOK, match, answer, contentType)
}

// interceptStatus is intercept answering with status.
func interceptStatus(t *testing.T, status int, match func(method, tool string) bool, answer func(w io.Writer, id json.RawMessage) error, contentType string) *intercepted {
	t.Helper()
	srv := testServer("")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ic := &intercepted{done: make(chan struct{})}
	ic.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && len(msg.ID) > 0 && match(msg.Method, msg.Params.Name) {
				defer close(ic.done)
				w.Header().Set("Content-Type", contentType)
				w.WriteHeader(status)
				answer(&counting{w: w, n: &ic.wrote}, msg.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ic.Close)
	return ic
}

// counting counts what is written through it, and flushes each write.
type counting struct {
	w http.ResponseWriter
	n *atomic.Int64
}

func (c *counting) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	if err == nil {
		err = http.NewResponseController(c.w).Flush()
	}
	return n, err
}

// wait waits for the handler's answer to end, which it does once the client
// stops reading (a write fails) or it has written all it would.
func (ic *intercepted) wait(t *testing.T) int64 {
	t.Helper()
	select {
	case <-ic.done:
	case <-time.After(time.Minute):
		t.Fatalf("the server is still writing its answer after a minute (%d bytes)", ic.wrote.Load())
	}
	return ic.wrote.Load()
}

// serverCap is the most an intercepted answer writes: four bounds, so
// that a client that read it all is told from one that stopped at the
// bound (with what the sockets between them hold).
const serverCap = 4 * MaxMessageBytes

// resultStart and resultEnd frame a call's result with one text part.
func resultStart(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`
}

const resultEnd = `"}]}}`

// writeLong writes prefix, then 'a's until the whole is serverCap bytes
// or a write fails, then suffix.
func writeLong(w io.Writer, prefix, suffix string) error {
	if _, err := io.WriteString(w, prefix); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for n := len(prefix); n < serverCap-len(suffix); n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, suffix)
	return err
}

func connectURL(t *testing.T, ic *intercepted, allow ...string) (*Server, error) {
	t.Helper()
	decl := plan.Tool{Kind: "mcp", Description: "The test server.", URL: ic.URL, Allow: allow}
	s, err := Connect(context.Background(), "srv", decl, t.TempDir(), WithHTTPClient(ic.Client()))
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func callTool(s *Server, name, args string) (string, error) {
	res, err := s.call(context.Background(), name, json.RawMessage(args))
	return res.Content, err
}

func isTool(name string) func(method, tool string) bool {
	return func(method, tool string) bool { return method == "tools/call" && tool == name }
}

// TestHTTPBodyPastBound: a server that answers a call with a JSON body
// past MaxMessageBytes (here, one text part of 64 MiB) fails the call with
// the bound's error, and the client stops reading at the bound.
func TestHTTPBodyPastBound(t *testing.T) {
	ic := intercept(t, isTool("big"), func(w io.Writer, id json.RawMessage) error {
		return writeLong(w, resultStart(id), resultEnd)
	}, "application/json")
	s, err := connectURL(t, ic, "big", "echo")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	content, err := callTool(s, "big", `{}`)
	want := `mcp server "srv": tool "big": the server sent a message (a response body) larger than 16 MiB, the most agentc reads of one message`
	if err == nil || err.Error() != want {
		t.Fatalf("a call answered by a 64 MiB body: %.200q, %v; want the error %q", content, err, want)
	}
	wrote := ic.wait(t)
	if wrote > 2*MaxMessageBytes {
		t.Errorf("the server wrote %d bytes before the client stopped reading, more than twice the bound", wrote)
	}
	t.Logf("the call failed in %s; the server wrote %d bytes", time.Since(start), wrote)
	// The SDK ends a session whose answer it could not read: the server's
	// later calls fail, as after any broken connection, and say why.
	if _, err := callTool(s, "echo", `{"text":"hi"}`); err == nil || err.Error() != `mcp server "srv": tool "echo": the connection to the server is closed: `+want[len(`mcp server "srv": tool "big": `):] {
		t.Errorf("a call after the body past the bound: %v", err)
	}
}

// TestHTTPFailedEventsPastBound: a failed answer (here 400) is read whole
// by the SDK whatever its Content-Type says, so an event stream of small
// events is one message there, held to the bound as a body is; it was
// read to its end, however long.
func TestHTTPFailedEventsPastBound(t *testing.T) {
	ic := interceptStatus(t, http.StatusBadRequest, isTool("big"), func(w io.Writer, _ json.RawMessage) error {
		chunk := strings.Repeat("a\n\n", 16<<10)
		for written := 0; written < 4*MaxMessageBytes; written += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return err
			}
		}
		return nil
	}, "text/event-stream")
	s, err := connectURL(t, ic, "big", "echo")
	if err != nil {
		t.Fatal(err)
	}
	_, err = callTool(s, "big", `{}`)
	want := "the server sent a message (a response body) larger than 16 MiB"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a 400 answered by 64 MiB of small events: %v; want %q", err, want)
	}
	if wrote := ic.wait(t); wrote > 2*MaxMessageBytes {
		t.Errorf("the server wrote %d bytes before the client stopped reading, more than twice the bound", wrote)
	}
}

// TestHTTPEventsPastBound: an answer streamed as events holds each event
// to MaxMessageBytes, never the stream: many small events more than the
// bound in all pass; one event past it fails the call, the client stops
// reading there, and the session goes on.
func TestHTTPEventsPastBound(t *testing.T) {
	small := func(w io.Writer, id json.RawMessage) error {
		// Notifications, and events of a name the client skips (they are
		// read and counted as well, without decoding 20 MiB of JSON),
		// their lines ending with LF and with CR LF, as the format allows.
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 64<<10) + `"}}`
		for i := 0; i*len(note) < MaxMessageBytes+MaxMessageBytes/4; i++ {
			var ev string
			switch i % 4 {
			case 0:
				ev = "data: " + note + "\n\n"
			case 1:
				ev = "event: message\r\ndata: " + note + "\r\n\r\n"
			case 2:
				ev = "event: padding\ndata: " + note + "\n\n"
			case 3:
				ev = ": a comment\r\nevent: padding\r\ndata: " + note + "\r\n\r\n"
			}
			if _, err := io.WriteString(w, ev); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "data: "+resultStart(id)+"all read"+resultEnd+"\n\n")
		return err
	}
	big := func(w io.Writer, id json.RawMessage) error {
		if _, err := io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"before\"}}\n\n"); err != nil {
			return err
		}
		return writeLong(w, "data: "+resultStart(id), resultEnd+"\n\n")
	}
	for _, tc := range []struct {
		name   string
		answer func(io.Writer, json.RawMessage) error
		want   string // the content, or the error
		isErr  bool
	}{
		{name: "many small events", answer: small, want: "all read"},
		{name: "one event past the bound", answer: big, isErr: true,
			want: `mcp server "srv": tool "big": the server sent a message (an event of a stream) larger than 16 MiB, the most agentc reads of one message`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ic := intercept(t, isTool("big"), tc.answer, "text/event-stream")
			s, err := connectURL(t, ic, "big", "echo")
			if err != nil {
				t.Fatal(err)
			}
			content, err := callTool(s, "big", `{}`)
			wrote := ic.wait(t)
			if !tc.isErr {
				if err != nil || content != tc.want {
					t.Fatalf("a call answered by %d bytes of small events: %.200q, %v; want %q", wrote, content, err, tc.want)
				}
				if wrote <= MaxMessageBytes {
					t.Errorf("the events were %d bytes in all, not past the bound", wrote)
				}
			} else {
				if err == nil || err.Error() != tc.want {
					t.Fatalf("a call answered by an event of 64 MiB: %.200q, %v; want the error %q", content, err, tc.want)
				}
				if wrote > 2*MaxMessageBytes {
					t.Errorf("the server wrote %d bytes before the client stopped reading, more than twice the bound", wrote)
				}
			}
			// Either way the session goes on.
			if content, err := callTool(s, "echo", `{"text":"still here"}`); err != nil || content != "still here" {
				t.Errorf("a call after: %q, %v", content, err)
			}
		})
	}
}

// TestHTTPStartPastBound: a server whose answer to initialize or
// tools/list is past the bound fails Connect with the bound's error.
func TestHTTPStartPastBound(t *testing.T) {
	for _, tc := range []struct{ method, contentType, want string }{
		{"initialize", "application/json", `mcp server "srv": starting the session: the server sent a message (a response body) larger than 16 MiB`},
		{"tools/list", "text/event-stream", `mcp server "srv": listing its tools: the server sent a message (an event of a stream) larger than 16 MiB`},
	} {
		t.Run(tc.method, func(t *testing.T) {
			ic := intercept(t, func(method, _ string) bool { return method == tc.method }, func(w io.Writer, id json.RawMessage) error {
				prefix, suffix := `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"x":"`, `"}}`
				if tc.contentType == "text/event-stream" {
					prefix, suffix = "data: "+prefix, suffix+"\n\n"
				}
				return writeLong(w, prefix, suffix)
			}, tc.contentType)
			_, err := connectURL(t, ic, "echo")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Connect: %v; want %q", err, tc.want)
			}
			if wrote := ic.wait(t); wrote > 2*MaxMessageBytes {
				t.Errorf("the server wrote %d bytes before the client stopped reading", wrote)
			}
		})
	}
}

// TestBoundedClient: the client given to the SDK is the host's, with its
// redirect policy, jar and timeout, over its transport.
func TestBoundedClient(t *testing.T) {
	jar, _ := cookiejar.New(nil)
	redirect := func(*http.Request, []*http.Request) error { return errors.New("no") }
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer ts.Close()
	host := ts.Client() // its transport trusts the server's certificate
	host.Jar, host.CheckRedirect, host.Timeout = jar, redirect, time.Minute
	c, _ := boundedClient(host, 10, nil)
	if c == host || c.Jar != jar || c.CheckRedirect == nil || c.Timeout != time.Minute || c.Transport.(*boundedTransport).base != host.Transport {
		t.Fatalf("the bounded client is not the host's: %+v", c)
	}
	if host.Transport == c.Transport {
		t.Fatal("the host's client was changed")
	}
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if len(data) != 10 || err == nil || err.Error() != "the server sent a message (a response body) larger than 10 bytes, the most agentc reads of one message" {
		t.Errorf("a 100-byte body bounded to 10: %d bytes, %v", len(data), err)
	}
	if d, _ := boundedClient(nil, 10, nil); d.Transport.(*boundedTransport).base != nil || d.Timeout != 0 {
		t.Errorf("no client: %+v, want http.DefaultClient's settings", d)
	}
}

// TestEventBound: in an event stream the count starts again after each
// blank line, however lines end, whatever the reads' sizes.
func TestEventBound(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		limit        int64
		kept         int // bytes passed on before the error; -1: no error
	}{
		{"LF", "data: 1234\n\ndata: 5678\n\n", 12, -1},
		{"CR LF", "data: 1234\r\n\r\ndata: 5678\r\n\r\n", 14, -1},
		{"CR", "data: 1234\r\rdata: 5678\r\r", 12, -1},
		{"mixed", "data: 1234\r\n\ndata: 5678\r\r\ndata: 9\n\r\n", 13, -1},
		{"CR LF one short", "data: 1234\r\n\r\ndata: 5678\r\n\r\n", 13, 13},
		{"LF one short", "data: 1234\n\ndata: 5678\n\n", 11, 11},
		{"lines are not events", "data: 12\ndata: 34\r\ndata: 56\rdata: 78\n\n", 16, 16},
		{"a CR LF is one line end", "a\r\nb\r\nc\r\n\r\n", 8, 8},
		{"a second event past", "data: 1\n\ndata: 123456789\n\n", 10, 9 + 10},
		{"no line end at all", strings.Repeat("x", 50), 20, 20},
		{"leading blank lines", "\n\r\n\r" + strings.Repeat("x", 20), 20, -1},
	} {
		for _, whole := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/whole=%v", tc.name, whole), func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.stream)
				if !whole {
					src = iotest.OneByteReader(src)
				}
				r := &bodyReader{body: io.NopCloser(src), limit: tc.limit, events: true, lineStart: true}
				got, err := io.ReadAll(r)
				if tc.kept < 0 {
					if err != nil || string(got) != tc.stream {
						t.Fatalf("read %q, %v; want it all", got, err)
					}
					return
				}
				var e *tooLargeError
				if !errors.As(err, &e) || !e.event || string(got) != tc.stream[:tc.kept] {
					t.Fatalf("read %q, %v; want %q and the bound's error", got, err, tc.stream[:tc.kept])
				}
				if n, err2 := r.Read(make([]byte, 10)); n != 0 || err2 != err {
					t.Errorf("a read after the error: %d, %v", n, err2)
				}
			})
		}
	}
}

// TestErrorCut: a server's error answering a call is its text as a
// result's is, cut at MaxResultBytes, the secrets replaced first: an
// error of 8 MiB went whole to the model.
func TestErrorCut(t *testing.T) {
	ic := intercept(t, isTool("echo"), func(w io.Writer, id json.RawMessage) error {
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"%s"}}`, id, strings.Repeat("a", 8<<20))
		return err
	}, "application/json")
	s, err := connectURL(t, ic, "echo")
	if err != nil {
		t.Fatal(err)
	}
	_, err = callTool(s, "echo", `{"text":"x"}`)
	if err == nil {
		t.Fatal("a call the server failed succeeded")
	}
	if len(err.Error()) > MaxResultBytes+1024 || !strings.Contains(err.Error(), `mcp server "srv": tool "echo": `) || !strings.Contains(err.Error(), "[result cut: the first") {
		t.Errorf("the call's error is %d bytes (%.200q…), want it cut at %d", len(err.Error()), err, MaxResultBytes)
	}
}

// TestErrorCutListing: a server's error answering the tool listing is cut
// the same way in the start's error.
func TestErrorCutListing(t *testing.T) {
	ic := intercept(t, func(method, _ string) bool { return method == "tools/list" }, func(w io.Writer, id json.RawMessage) error {
		_, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"%s"}}`, id, strings.Repeat("a", 8<<20))
		return err
	}, "application/json")
	_, err := connectURL(t, ic, "echo")
	if err == nil || len(err.Error()) > MaxResultBytes+1024 || !strings.Contains(err.Error(), `mcp server "srv": listing its tools: `) || !strings.Contains(err.Error(), "[result cut: the first") {
		n := 0
		if err != nil {
			n = len(err.Error())
		}
		t.Errorf("the start's error is %d bytes (%.200v…), want it cut at %d", n, err, MaxResultBytes)
	}
}
