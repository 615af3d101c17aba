package limit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"agentc.dev/agentc/runtime/provider/retry"
)

// StalledError is an attempt given up because the server sent nothing
// for After. Another attempt may fare better: it is retryable.
type StalledError struct {
	Provider string
	After    time.Duration
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("%s: the server sent nothing for %v; the attempt was given up", e.Provider, e.After)
}

// Stall returns an SDK middleware that gives up an attempt when the
// server sends nothing for d: no response, or no byte of its body (each
// byte read restarts the wait, so a stream that keeps sending may take as
// long as it needs). The attempt fails with a *StalledError naming
// provider. d is a provider Config's Stall: zero means retry.DefaultStall,
// and a negative d waits for ever.
func Stall(provider string, d time.Duration) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if d == 0 {
		d = retry.DefaultStall
	}
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if d < 0 {
			return next(req)
		}
		ctx, cancel := context.WithCancel(req.Context())
		w := &watch{d: d, cancel: cancel, err: &StalledError{provider, d}}
		w.timer = time.AfterFunc(d, w.fire)
		resp, err := next(req.WithContext(ctx))
		if err != nil {
			w.stop()
			cancel()
			if w.stalled() && req.Context().Err() == nil {
				return nil, w.err
			}
			return nil, err
		}
		if resp.Body == nil {
			w.stop()
			cancel()
			return resp, nil
		}
		w.heard() // the response's head restarts the wait for its body
		resp.Body = &watchedBody{rc: resp.Body, w: w, outer: req.Context()}
		return resp, nil
	}
}

// watch cancels an attempt's context once d passes with nothing read.
type watch struct {
	d      time.Duration
	cancel context.CancelFunc
	err    *StalledError
	timer  *time.Timer

	mu    sync.Mutex
	fired bool
	done  bool
}

func (w *watch) fire() {
	w.mu.Lock()
	if !w.done {
		w.fired = true
	}
	w.mu.Unlock()
	w.cancel()
}

func (w *watch) stalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// heard restarts the wait: the server sent something.
func (w *watch) heard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired && !w.done {
		w.timer.Reset(w.d)
	}
}

func (w *watch) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.timer.Stop()
}

// watchedBody restarts the wait on each byte read, and reads the stall
// as its error.
type watchedBody struct {
	rc    io.ReadCloser
	w     *watch
	outer context.Context
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.heard()
	}
	if err != nil && err != io.EOF && b.w.stalled() && b.outer.Err() == nil {
		return n, b.w.err
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.w.stop()
	err := b.rc.Close()
	b.w.cancel()
	return err
}
