package bedrock

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/retry"
)

// TestRequestBodyClosedEarly: the SDK closes the request body it built
// as soon as the response's head arrives, while net/http may not yet
// have made its last read of that body (the one that looks for bytes
// past the declared length). gated holds that last read until the SDK
// has closed the body and begins to read the reply, the order a loopback
// server that answers at once sometimes brought about: the call is made
// once and its reply is read whole.
func TestRequestBodyClosedEarly(t *testing.T) {
	text := strings.Repeat("x", 600<<10)
	f := newFake(t, ok(textReply(text, "end_turn")))
	var retried []error
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL,
		HTTPClient: &http.Client{Transport: gated{t: t}},
		Retry: retry.Policy{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond,
			OnAttempt: func(_ int, err error, wait time.Duration) {
				if wait > 0 {
					retried = append(retried, err)
				}
			}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), &agentrt.Request{Model: claude, MaxOutputTokens: 8192,
		Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.Content) != len(text) {
		t.Errorf("%d bytes of text, want %d", len(resp.Message.Content), len(text))
	}
	if n := len(f.requests()); n != 1 || len(retried) != 0 {
		t.Errorf("%d requests, attempts made again after %v; want one", n, retried)
	}
}

// gated sends requests through a transport of its own. A read of a
// request's body past its declared length waits until the reply's body
// is first read (the SDK closes the request body before it reads the
// reply), and that first read waits until the late read of the request
// body has been made (or net/http has closed the body without one).
type gated struct{ t *testing.T }

func (g gated) RoundTrip(r *http.Request) (*http.Response, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	g.t.Cleanup(tr.CloseIdleConnections)
	if r.Body == nil || r.Body == http.NoBody {
		return tr.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	b := &gate{rc: r.Body, left: r.ContentLength, release: make(chan struct{}), late: make(chan struct{}), closed: make(chan struct{}), done: r.Context().Done()}
	if _, ok := b.rc.(io.WriterTo); ok {
		r.Body = gateWriterTo{b}
	} else {
		r.Body = b
	}
	resp, err := tr.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	resp.Body = &replyBody{rc: resp.Body, g: b}
	return resp, nil
}

type gate struct {
	rc      io.ReadCloser
	left    int64
	release chan struct{} // closed at the reply's first read
	late    chan struct{} // closed once the late read is made
	closed  chan struct{} // closed when net/http closes the body
	once    sync.Once
	shut    sync.Once
	done    <-chan struct{}
}

// hold makes a read past the declared length wait for the release, and
// reports it made.
func (b *gate) hold(read func() (int64, error)) (int64, error) {
	if b.left > 0 {
		n, err := read()
		b.left -= n
		return n, err
	}
	select {
	case <-b.release:
	case <-b.done:
	}
	defer b.once.Do(func() { close(b.late) })
	return read()
}

func (b *gate) Read(p []byte) (int, error) {
	n, err := b.hold(func() (int64, error) { n, err := b.rc.Read(p); return int64(n), err })
	return int(n), err
}

func (b *gate) Close() error {
	b.shut.Do(func() { close(b.closed) })
	return b.rc.Close()
}

// gateWriterTo is gate for a body with WriteTo, which net/http uses.
type gateWriterTo struct{ *gate }

func (b gateWriterTo) WriteTo(w io.Writer) (int64, error) {
	return b.hold(func() (int64, error) { return b.rc.(io.WriterTo).WriteTo(w) })
}

// replyBody releases the late read at its first read and waits for it.
type replyBody struct {
	rc    io.ReadCloser
	g     *gate
	first sync.Once
}

func (r *replyBody) Read(p []byte) (int, error) {
	r.first.Do(func() {
		close(r.g.release)
		select {
		case <-r.g.late:
		case <-r.g.closed: // no late read was made
		case <-r.g.done:
		}
	})
	return r.rc.Read(p)
}

func (r *replyBody) Close() error { return r.rc.Close() }

// TestSignedOnly: with SignedOnly, a Bedrock API key in the environment,
// which the SDK's client would send in place of a signature, is not
// sent: the request is signed (the fake checks the signature) and
// carries no bearer token.
func TestSignedOnly(t *testing.T) {
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-not-to-be-sent")
	var auth string
	f := newFake(t, ok(textReply("Paris.", "end_turn")))
	seen := roundTrip(func(r *http.Request) (*http.Response, error) {
		auth = r.Header.Get("Authorization")
		return http.DefaultTransport.RoundTrip(r)
	})
	m, err := New(Config{Region: testRegion, Credentials: staticCreds, BaseURL: f.srv.URL, HTTPClient: &http.Client{Transport: seen}, SignedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(t.Context(), &agentrt.Request{Model: claude, Messages: []agentrt.Message{{Role: agentrt.User, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || strings.Contains(auth, "ABSK") || f.badSig != 0 {
		t.Errorf("Authorization %q (bad signatures %d), want a signature and no API key", auth, f.badSig)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
