package limit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"agentc.dev/agentc/internal/leaf/bodyrate"
	"agentc.dev/agentc/runtime/provider/retry"
)

// BodyRate is the least rate, in bytes a second, at which a whole
// (unstreamed) response's body earns time past the stall timeout: it must
// come in full within the stall timeout of its head and a second for each
// BodyRate bytes read (bodyrate.Due). A reply comes in a burst once the
// model is done (the largest a provider call accepts, 32 MiB, in half an
// hour at this rate), and a server that sends its body a byte at a time
// is cut: each byte restarting the wait let one byte a second hold a run
// for days.
const BodyRate = bodyrate.Rate

// StalledError is an attempt given up because the server made no progress
// for After: it sent no response, no part of a streamed reply (keep-alives
// aside), or a whole response's body too slowly. Another attempt may fare
// better: it is retryable.
type StalledError struct {
	Provider string
	After    time.Duration
	// Wait is what the attempt waited for when it was given up.
	Wait StallWait
	// Read and Took are, for a whole body (WaitBody), the bytes of it
	// read and how long since its head.
	Read int64
	Took time.Duration
}

// StallWait is what a stalled attempt waited for.
type StallWait int

const (
	// WaitResponse is the response itself: its status and headers.
	WaitResponse StallWait = iota
	// WaitStream is the next part of a streamed reply: text, reasoning,
	// a tool call. Comments, pings and events that carry none of it are
	// keep-alives, not progress.
	WaitStream
	// WaitBody is the rest of a whole response's body (see BodyRate).
	WaitBody
)

func (e *StalledError) Error() string {
	switch e.Wait {
	case WaitStream:
		return fmt.Sprintf("%s: the stream sent keep-alives at most, no part of the reply, for %v; the attempt was given up", e.Provider, e.After)
	case WaitBody:
		return fmt.Sprintf("%s: the body came too slowly: %d bytes in %v, for a stall timeout of %v and a second more per %d KiB; the attempt was given up", e.Provider, e.Read, e.Took.Round(time.Millisecond), e.After, BodyRate>>10)
	}
	return fmt.Sprintf("%s: the server sent nothing for %v; the attempt was given up", e.Provider, e.After)
}

// Stall returns an SDK middleware that gives up an attempt when the
// server makes no progress for d. The response's head must come within d;
// then a streamed reply (a request made with the context of a NewReply)
// must send a part of the reply within d of the last (Reply.Add hears
// them), so that a stream that keeps making progress may take as long as
// it needs, and one that sends only keep-alives is cut; a whole body must
// come in full within d and a second for each BodyRate bytes of it. The
// attempt fails with a *StalledError naming provider. d is a provider
// Config's Stall: zero means retry.DefaultStall, and a negative d waits
// for ever.
func Stall(provider string, d time.Duration) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return stall(provider, d, bodyrate.System)
}

func stall(provider string, d time.Duration, clk bodyrate.Clock) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if d == 0 {
		d = retry.DefaultStall
	}
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if d < 0 {
			return next(req)
		}
		ctx, cancel := context.WithCancel(req.Context())
		w := &watch{provider: provider, d: d, clock: clk, outer: req.Context(), cancel: cancel, deadline: clk.Now().Add(d)}
		w.mu.Lock()
		w.timer = clk.AfterFunc(d, w.fire)
		w.mu.Unlock()
		resp, err := next(req.WithContext(ctx))
		if err != nil {
			w.stop()
			cancel()
			if e := w.stalled(); e != nil && req.Context().Err() == nil {
				return nil, e
			}
			return nil, err
		}
		if resp.Body == nil {
			w.stop()
			cancel()
			return resp, nil
		}
		// A stream's reader reports its progress; an error's body, read
		// whole for its message, is a body like any other, and so is a
		// JSON body (a whole reply to a streamed request, readWhole; an
		// event stream labelled JSON is then watched by its bytes).
		p, _ := req.Context().Value(progressKey{}).(*progress)
		stream := p != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 && !wholeReply(resp)
		w.answered(stream)
		if stream {
			p.attach(w)
		}
		resp.Body = &watchedBody{rc: resp.Body, w: w, outer: req.Context()}
		return resp, nil
	}
}

// watch cancels an attempt's context once its deadline passes: d after
// the request, then after the response's head, and then as progress
// moves it.
type watch struct {
	provider string
	d        time.Duration
	clock    bodyrate.Clock
	outer    context.Context // the caller's
	cancel   context.CancelFunc

	mu       sync.Mutex
	timer    bodyrate.Timer
	deadline time.Time
	wait     StallWait
	head     time.Time // when the response's head came
	read     int64     // bytes of a whole body read
	err      *StalledError
	done     bool
}

// fire runs at the timer: past the deadline the attempt is given up;
// before it (progress moved it), the timer is set again. A caller whose
// own deadline is due ends the attempt itself, as context.DeadlineExceeded:
// the two timers, both due, run in no set order, and a stall claimed
// first made the caller's deadline a cancellation.
func (w *watch) fire() {
	w.mu.Lock()
	if w.done || w.err != nil || w.outer.Err() != nil {
		w.mu.Unlock()
		return
	}
	if at, ok := w.outer.Deadline(); ok && !time.Now().Before(at) {
		w.mu.Unlock()
		return
	}
	now := w.clock.Now()
	if left := w.deadline.Sub(now); left > 0 {
		w.timer.Reset(left)
		w.mu.Unlock()
		return
	}
	w.err = &StalledError{Provider: w.provider, After: w.d, Wait: w.wait}
	if w.wait == WaitBody {
		w.err.Read, w.err.Took = w.read, now.Sub(w.head)
	}
	w.mu.Unlock()
	w.cancel()
}

// stalled returns the attempt's StalledError once it was given up.
func (w *watch) stalled() *StalledError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// answered restarts the wait at the response's head, now for a stream's
// progress or for a whole body.
func (w *watch) answered(stream bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.done {
		return
	}
	w.head = w.clock.Now()
	w.deadline = w.head.Add(w.d)
	w.wait = WaitBody
	if stream {
		w.wait = WaitStream
	}
}

// progressed restarts a stream's wait: a part of the reply came.
func (w *watch) progressed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !w.done && w.wait == WaitStream {
		w.deadline = w.clock.Now().Add(w.d)
	}
}

// readBody gives a whole body the time its n more bytes earn.
func (w *watch) readBody(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !w.done && w.wait == WaitBody {
		w.read += int64(n)
		w.deadline = bodyrate.Due(w.head, w.d, w.read)
	}
}

func (w *watch) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.timer.Stop()
}

// watchedBody counts a whole body's bytes to its watch, and reads the
// stall as its error.
type watchedBody struct {
	rc    io.ReadCloser
	w     *watch
	outer context.Context
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.readBody(n)
	}
	if err != nil && err != io.EOF && b.outer.Err() == nil {
		if e := b.w.stalled(); e != nil {
			return n, e
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.w.stop()
	err := b.rc.Close()
	b.w.cancel()
	return err
}

// progressKey keys a streamed request's progress (NewReply) in its
// context.
type progressKey struct{}

// progress carries a stream's progress, as its reader hears it (Reply.Add),
// to the watch of the attempt being read: the latest, where an SDK makes
// more than one.
type progress struct {
	tokens int64 // the output tokens the request allowed (NewReply)

	mu sync.Mutex
	w  *watch
}

func (p *progress) attach(w *watch) {
	p.mu.Lock()
	p.w = w
	p.mu.Unlock()
}

func (p *progress) heard() {
	p.mu.Lock()
	w := p.w
	p.mu.Unlock()
	if w != nil {
		w.progressed()
	}
}
