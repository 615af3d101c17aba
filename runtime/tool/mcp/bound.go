package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/runtime/internal/origin"
)

// MaxMessageBytes bounds one message a streamable HTTP server sends: a
// response body read whole (application/json, or anything but an event
// stream), or one event of a text/event-stream body, from the end of the
// blank line before it through the blank line that ends it. It is what the
// SDK holds a stdio server's messages to (mcp.DefaultMaxLineLength). The
// result's text is cut much sooner, at MaxResultBytes; this bound is on what
// is read and held before the result is decoded.
const MaxMessageBytes = 16 << 20

// tooLargeError is the error of a message a server sent past the bound:
// the reading of its response stops there, and the call it answers fails.
type tooLargeError struct {
	event bool  // an event of an event stream, not a body read whole
	limit int64 // the bound, in bytes
}

func (e *tooLargeError) Error() string {
	what := "a response body"
	if e.event {
		what = "an event of a stream"
	}
	return fmt.Sprintf("the server sent a message (%s) larger than %s, the most agentc reads of one message", what, userfile.Size(e.limit))
}

// boundedClient returns a copy of c (http.DefaultClient when c is nil),
// with its redirect policy (within origin's rule), cookie jar and
// timeout, whose transport bounds every message of a response's body to
// limit bytes; and what cuts every request under way and to come. ended,
// when not nil, is told the session ID of each POST the server answers 404
// Not Found: the server has ended that session.
func boundedClient(c *http.Client, limit int64, ended func(sessionID string)) (*http.Client, context.CancelFunc) {
	if c == nil {
		c = http.DefaultClient
	}
	// A redirect is followed to the server's own origin only: the
	// manifest named that server, not the one it sends agentc on to.
	b := origin.Client(c)
	stop, cut := context.WithCancel(context.Background())
	b.Transport = &boundedTransport{base: c.Transport, limit: limit, stop: stop, ended: ended}
	return b, cut
}

// boundedTransport wraps each response's body in a bodyReader.
type boundedTransport struct {
	base  http.RoundTripper // nil: http.DefaultTransport
	limit int64
	stop  context.Context // done: every request is cut
	ended func(sessionID string)
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	release := func() {}
	if t.stop != nil {
		ctx, cancel := context.WithCancel(req.Context())
		unhook := context.AfterFunc(t.stop, cancel)
		req = req.WithContext(ctx)
		release = func() { unhook(); cancel() }
	}
	post, _ := req.Context().Value(postKey{}).(*postRecord)
	if req.Method != http.MethodPost {
		post = nil
	}
	if post != nil {
		post.sent.Store(true)
	}
	resp, err := base.RoundTrip(req)
	if id := req.Header.Get("Mcp-Session-Id"); err == nil && resp.StatusCode == http.StatusNotFound && id != "" {
		// The server has ended the session (the SDK's ErrSessionMissing):
		// told before the SDK reads the answer and fails the session's
		// other calls.
		if post != nil {
			post.notFound.Store(true)
		}
		if t.ended != nil {
			t.ended(id)
		}
	}
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		release()
		return resp, err
	}
	// The SDK reads a successful body as an event stream exactly when
	// this parses as text/event-stream; a failed one it reads whole,
	// whatever it says it is, so that one is one message however many
	// events it holds.
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		mt = ""
	}
	events := mt == "text/event-stream" && resp.StatusCode >= 200 && resp.StatusCode < 300
	r := &bodyReader{body: resp.Body, limit: t.limit, events: events, lineStart: true, release: release}
	r.over, _ = req.Context().Value(tooLargeKey{}).(context.CancelCauseFunc)
	resp.Body = r
	return resp, nil
}

// bodyReader passes a response's body on until one message passes limit
// bytes, then fails with a *tooLargeError, and goes on failing, without
// passing on the byte that went past it.
//
// In an event stream (events), lines end with CR, LF or CR LF, and a blank
// line ends an event: the count starts again after it, so a long stream of
// small events is never cut.
type bodyReader struct {
	body   io.ReadCloser
	limit  int64
	events bool
	over   context.CancelCauseFunc // nil, or ends the request's call with the error
	err    error
	// release lets go of the request's tie to the transport's stop, once
	// the body is closed; nil for none.
	release func()

	n         int64 // bytes of the message so far
	lineStart bool  // the next byte starts a line
	cr        bool  // the last byte was a CR that ended a line with text
	blankCR   bool  // the last byte was a CR that ended a blank line
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.events {
		// One message: never ask for more than one byte past it.
		if room := r.limit + 1 - r.n; int64(len(p)) > room {
			p = p[:room]
		}
		n, err := r.body.Read(p)
		r.n += int64(n)
		if r.n > r.limit {
			return n - int(r.n-r.limit), r.fail(false)
		}
		return n, err
	}
	n, err := r.body.Read(p)
	for i := 0; i < n; {
		// A run of bytes that end no line only adds to the count.
		if !r.blankCR {
			j := bytes.IndexAny(p[i:n], "\r\n")
			if j < 0 {
				j = n - i
			}
			if j > 0 {
				if room := r.limit - r.n; int64(j) > room {
					return i + int(room), r.fail(true)
				}
				r.n += int64(j)
				r.lineStart, r.cr = false, false
				i += j
				continue
			}
		}
		if !r.event(p[i]) {
			return i, r.fail(true)
		}
		i++
	}
	return n, err
}

// event counts one byte of an event stream, and reports whether the event
// it belongs to is still within the limit.
func (r *bodyReader) event(c byte) bool {
	wasCR := r.cr
	r.cr = false
	if r.blankCR {
		r.blankCR = false
		if c == '\n' { // the LF of a blank line's CR LF: the event ends after it
			r.n++
			if r.n > r.limit {
				return false
			}
			r.n = 0
			return true
		}
		r.n = 0 // the blank line was a CR alone
	}
	r.n++
	if r.n > r.limit {
		return false
	}
	switch {
	case c == '\n' && wasCR: // the LF of a CR LF: the line ended at the CR
	case c == '\n':
		if r.lineStart {
			r.n = 0
		}
		r.lineStart = true
	case c == '\r':
		if r.lineStart {
			r.blankCR = true
		} else {
			r.cr = true
		}
		r.lineStart = true
	default:
		r.lineStart = false
	}
	return true
}

func (r *bodyReader) fail(event bool) error {
	r.err = &tooLargeError{event: event, limit: r.limit}
	if r.over != nil {
		r.over(r.err)
	}
	return r.err
}

func (r *bodyReader) Close() error {
	if r.release != nil {
		r.release()
		r.release = nil
	}
	return r.body.Close()
}

// postKey is the context key of the *postRecord of a call's POSTs.
type postKey struct{}

// postRecord is what became of the POSTs made under a context: whether one
// left for the server, and whether the server answered one 404 Not Found,
// having ended the session, so that it did not run the call.
type postRecord struct{ sent, notFound atomic.Bool }

// watchPosts returns a context, derived from ctx, whose POSTs are recorded
// in the *postRecord returned.
func watchPosts(ctx context.Context) (context.Context, *postRecord) {
	r := new(postRecord)
	return context.WithValue(ctx, postKey{}, r), r
}

// unrun says whether the server cannot have run a call whose POSTs r
// recorded: none left, or the server answered 404 (it runs nothing in a
// session it has ended).
func (r *postRecord) unrun() bool { return !r.sent.Load() || r.notFound.Load() }

// tooLargeKey is the context key of the function that ends a call, with a
// *tooLargeError as its cause, when a message answering it is past the
// bound.
type tooLargeKey struct{}

// watchSize returns a context, derived from ctx, that a message past the
// bound in an answer to a request made under it ends, with the
// *tooLargeError as its cause; stop releases it. Without it the SDK would
// report a stream cut short as a request "terminated without response",
// or resume it from the server.
func watchSize(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	return context.WithValue(ctx, tooLargeKey{}, cancel), func() { cancel(nil) }
}

// tooLarge returns the *tooLargeError that ended ctx, or nil.
func tooLarge(ctx context.Context) *tooLargeError {
	var e *tooLargeError
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return nil
}
