// Package replytest answers a provider client's requests with one reply,
// in process, and holds the client to what it must make of any reply: the
// provider packages' fuzz targets share it. WatchHeap measures what a
// reply costs, a live one (the providers' benchmarks) or a recorded one
// (the runtime's replay tests).
package replytest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	agentrt "agentc.dev/agentc/runtime"
)

// Reply answers every request with a status, a content type and a body.
// It reads and closes the request's body first, as a server would.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
}

func (r Reply) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: r.Status, Header: http.Header{"Content-Type": {r.ContentType}},
		Body: io.NopCloser(bytes.NewReader(r.Body)), ContentLength: int64(len(r.Body)), Request: req,
	}, nil
}

// Client is an HTTP client whose every request r answers.
func (r Reply) Client() *http.Client { return &http.Client{Transport: r} }

// Status makes a fuzzed number a status a server may answer with and a
// client does not follow: 200 for one outside 100–599 or a redirect.
func Status(n int) int {
	if n < 100 || n > 599 || n >= 300 && n < 400 {
		return 200
	}
	return n
}

// ContentType is the content type of a whole reply, or of a stream of
// server-sent events.
func ContentType(stream bool) string {
	if stream {
		return "text/event-stream"
	}
	return "application/json"
}

// Complete sends req to m, streamed when stream is set, and holds the
// client to what any reply must get from it: the key (the first secret)
// in no streamed delta, no secret in the error (read with %v, %+v and
// %#v), and a response that is the assistant's. Its usage is what the
// server reported, negative counts too: the runtime holds a turn's usage
// to its estimate (runtime/usage.go), not the client.
// The other secrets are what an error must not show beside the key (a
// header's name, the key escaped); a model may well write them. It
// returns the response, or nil when the call failed.
func Complete(t testing.TB, m agentrt.Model, req *agentrt.Request, stream bool, key string, secrets ...string) *agentrt.Response {
	t.Helper()
	secrets = append([]string{key}, secrets...)
	if stream {
		req.Stream = func(d agentrt.Delta) {
			if s, ok := holds(fmt.Sprintf("%+v", d), secrets[:1]); ok {
				t.Errorf("a streamed delta holds the secret %q: %+v", s, d)
			}
		}
	}
	resp, err := m.Complete(t.Context(), req)
	if err != nil {
		if s, ok := holds(fmt.Sprintf("%v %+v %#v", err, err, err), secrets); ok {
			t.Errorf("the error holds the secret %q: %v", s, err)
		}
		return nil
	}
	if resp == nil {
		t.Fatal("no response and no error")
	}
	if resp.Message.Role != agentrt.Assistant {
		t.Errorf("the response's role is %q", resp.Message.Role)
	}
	return resp
}

// NotIn returns those of words the reply's body does not hold: a word
// that is no secret (a header's name, "Bearer") but must not come from
// the request may still come from the server, whose message an error
// repeats.
func NotIn(body []byte, words ...string) []string {
	var out []string
	for _, w := range words {
		if !bytes.Contains(body, []byte(w)) {
			out = append(out, w)
		}
	}
	return out
}

func holds(s string, secrets []string) (string, bool) {
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			return secret, true
		}
	}
	return "", false
}

// Counting is a transport that counts the bytes of the response bodies
// read through it: what a client read from the server, before any bound
// of its own above the transport. Next nil is http.DefaultTransport.
type Counting struct {
	Next http.RoundTripper
	n    atomic.Int64
}

func (c *Counting) RoundTrip(req *http.Request) (*http.Response, error) {
	next := c.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countedBody{resp.Body, &c.n}
	}
	return resp, err
}

// Read is the bytes read so far.
func (c *Counting) Read() int64 { return c.n.Load() }

type countedBody struct {
	rc io.ReadCloser
	n  *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *countedBody) Close() error { return b.rc.Close() }
