// Package limit bounds what a provider's server may send: a response body
// past MaxResponse bytes fails the call, so a broken or hostile server
// cannot make a run hold more memory than that.
package limit

import (
	"fmt"
	"io"
	"net/http"
)

// MaxResponse is the largest response body a provider call accepts, in
// bytes. A chat completion is at most a few megabytes; this leaves room for
// long answers with many tool calls.
const MaxResponse = 32 << 20

// TooLargeError is a response body past the limit.
type TooLargeError struct {
	Provider string
	Limit    int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the response is larger than the %d MiB agentc accepts from a provider", e.Provider, e.Limit>>20)
}

// Middleware returns an SDK middleware (the shape both SDKs' option
// packages take) that cuts every response body at limit bytes, failing the
// read past it with a *TooLargeError naming provider.
func Middleware(provider string, limit int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp == nil || resp.Body == nil {
			return resp, err
		}
		if resp.ContentLength > limit {
			resp.Body.Close()
			return nil, &TooLargeError{provider, limit}
		}
		resp.Body = &body{rc: resp.Body, left: limit, err: &TooLargeError{provider, limit}}
		return resp, nil
	}
}

// body reads at most left bytes of rc; one byte more is the error.
type body struct {
	rc   io.ReadCloser
	left int64
	err  error
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
		return n - int(-b.left), b.err
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
