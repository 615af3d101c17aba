// Package limit bounds what a provider's server may send: a response body past
// replylimit.MaxResponse bytes fails the call, so a broken or hostile server
// cannot make a run hold more memory than that.
package limit

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/retry"
)

// MaxErrorBody is the most bytes of an error response's body (a status
// outside 2xx) that a provider call reads. An error's message is a
// sentence or two; a server sending megabytes of one, to a streamed
// request too, had them read and copied into the call's error.
const MaxErrorBody = 64 << 10

// TooLargeError is a response body past the limit.
type TooLargeError struct {
	Provider string
	Limit    int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the response is larger than the %d MiB agentc accepts from a provider", e.Provider, e.Limit>>20)
}

// Middleware returns an SDK middleware (the shape both SDKs' option packages
// take) that cuts every response body at limit bytes, failing the read past it
// with a *TooLargeError naming provider. A request whose context says the
// output tokens it allowed (WithWhole) has its response cut sooner, past
// replylimit.BodyBound, with a *replylimit.ReplyError. An error response's body
// ends at MaxErrorBody.
//
// The bound holds for the bytes a server sends as well as for what they
// decode to: a request that asks for no encoding of its own is sent
// asking for gzip, as Go's client would, but a gzip body is decompressed
// here, each side counted, where Go's client would count only what it
// decompressed (a server sending empty gzip members for ever was read
// for as long as it sent them).
func Middleware(provider string, limit int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		ownGzip := false
		if req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" {
			req = req.Clone(req.Context())
			req.Header.Set("Accept-Encoding", "gzip")
			ownGzip = true
		}
		resp, err := next(req)
		if err != nil || resp == nil || resp.Body == nil {
			return resp, err
		}
		tokens, whole := req.Context().Value(wholeKey{}).(int64)
		bound, over := limit, error(&TooLargeError{provider, limit})
		if whole {
			bound, over = wholeBound(provider, limit, tokens, req)
		}
		var counted *retry.Attempt
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			// An error's body is read for its message, whether or not the
			// request streams: past MaxErrorBody it ends, as if it had
			// (the call fails by its status, not by its size).
			bound, over = min(bound, MaxErrorBody), io.EOF
		} else {
			// Taken: the provider bills the attempt from here, whatever
			// becomes of its reply (retry.Tally). A whole reply is
			// counted by its body's bytes, a stream by its pieces (Reply).
			a := retry.AttemptOf(req.Context())
			a.Answered()
			if whole {
				counted = a
			}
			if resp.ContentLength > bound {
				resp.Body.Close()
				return nil, over
			}
		}
		if ownGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
			// What is sent may be a little more than what it decodes to
			// (gzip's headers, data that does not compress).
			wire := &body{rc: resp.Body, left: bound + bound>>6 + 4<<10, err: over}
			resp.Body = &gunzip{wire: wire}
			resp.Header.Del("Content-Encoding")
			resp.Header.Del("Content-Length")
			resp.ContentLength = -1
			resp.Uncompressed = true
		}
		resp.Body = &body{rc: resp.Body, left: bound, err: over, counted: counted}
		if p, streamed := req.Context().Value(progressKey{}).(*progress); streamed && resp.StatusCode >= 200 && resp.StatusCode <= 299 && wholeReply(resp) {
			bound, over := wholeBound(provider, limit, p.tokens, req)
			return readWhole(resp, req, bound, over)
		}
		return resp, nil
	}
}

// readWhole reads the reply a server sent a streamed request as a JSON
// body (wholeReply; it ignores "stream") as the whole reply it is: bounded
// as one (replylimit.BodyBound), its bytes counted to the attempt, and
// returned as an *Unstreamed. A body that does not begin as a JSON object
// or array (an event stream its server labelled JSON) is handed on as the
// stream it is.
func readWhole(resp *http.Response, req *http.Request, bound int64, over error) (*http.Response, error) {
	br := bufio.NewReader(resp.Body)
	if !jsonFirst(br) {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{br, resp.Body}
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(&body{rc: io.NopCloser(br), left: bound, err: over, counted: retry.AttemptOf(req.Context())})
	if err != nil {
		return nil, err
	}
	return nil, &Unstreamed{Body: data}
}

// wholeBound is the bound of a whole reply's body to req, which allowed
// tokens output tokens, and the error of a body past it: what such a
// reply can take (replylimit.BodyBound), within limit.
func wholeBound(provider string, limit, tokens int64, req *http.Request) (int64, error) {
	if b := replylimit.BodyBound(tokens, req.ContentLength); req.ContentLength >= 0 && b > 0 && b < limit {
		return b, &replylimit.ReplyError{Tokens: tokens, Bound: b, Request: req.ContentLength, Body: true}
	}
	return limit, &TooLargeError{provider, limit}
}

// jsonFirst reports whether what br holds begins, past JSON's whitespace
// (at most 4 KiB of it), with an object or an array; the whitespace is
// read, nothing else.
func jsonFirst(br *bufio.Reader) bool {
	for range 4 << 10 {
		c, err := br.ReadByte()
		if err != nil {
			return false
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		br.UnreadByte()
		return c == '{' || c == '['
	}
	return false
}

// Unstreamed is the reply, whole, of a server that answered a streamed
// request (one made with NewReply's context) as if it had not asked to
// stream: 2xx, a JSON body rather than an event stream. Some servers that
// speak a provider's API ignore "stream". The call's stream function takes
// the body for the whole reply it is (a completion, a message, an error
// object): read as a stream, it held no event, and the call was taken for
// one cut short and made again, each attempt billed.
type Unstreamed struct {
	Body []byte
}

func (e *Unstreamed) Error() string {
	return "the server answered a streamed request with a whole reply, not an event stream"
}

// wholeReply reports whether a response's body is a JSON document, which a
// stream's is not.
func wholeReply(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// gunzip decompresses a gzip body, reading its header only when first
// read, as Go's client does.
type gunzip struct {
	wire *body
	zr   *gzip.Reader
	err  error
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.wire)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		g.err = err
	}
	return n, err
}

func (g *gunzip) Close() error { return g.wire.Close() }

// wholeKey keys the output tokens a request for a whole (unstreamed)
// response allowed, in its context.
type wholeKey struct{}

// WithWhole returns ctx saying that the request made with it asks for a whole
// response, not a stream, and allowed at most maxTokens output tokens, so that
// Middleware cuts a response past what such a reply can take
// (replylimit.BodyBound) as it is read, rather than read up to
// replylimit.MaxResponse and decoded before agentrt.CheckReply refuses it. A
// maxTokens of 0 or less, no limit, leaves the bound replylimit.MaxResponse. A
// stream is metered by its pieces (Reply): its events repeat their envelope for
// every few tokens, so its body has no such bound.
func WithWhole(ctx context.Context, maxTokens int64) context.Context {
	return context.WithValue(ctx, wholeKey{}, maxTokens)
}

// body reads at most left bytes of rc; one byte more is the error. The
// bytes it passes are counted to the attempt, where there is one.
type body struct {
	rc      io.ReadCloser
	left    int64
	err     error
	counted *retry.Attempt
}

func (b *body) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		n -= int(-b.left)
		b.counted.Read(n)
		return n, b.err
	}
	b.counted.Read(n)
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
