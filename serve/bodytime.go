package serve

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"agentc.dev/agentc/internal/leaf/bodyrate"
)

// BodyWait is how long a request's body may take to begin once the
// server reads it: as long as its header may take to come (agentc serve
// --http's 10 s). Past it the body must keep coming at bodyrate.Rate,
// 16 KiB a second, at least (BoundReads).
const BodyWait = 10 * time.Second

// SlowBodyError is a request's body that came too slowly (BoundReads):
// it had not begun within BodyWait of the server's reading it, or not
// come at bodyrate.Rate since. Read bytes of it came in Took.
type SlowBodyError struct {
	Read int64
	Took time.Duration
}

func (e *SlowBodyError) Error() string {
	return fmt.Sprintf("the body came too slowly: %d bytes in %v, where a request's body must begin within %v of the server's reading it and then come at %d KiB a second at least", e.Read, e.Took.Round(time.Millisecond), BodyWait, bodyrate.Rate>>10)
}

// SetClock sets the clock request bodies are timed by (BoundReads): the
// system's unless set; a test's, moved by hand. Set it before the server
// serves.
func (rs *Runs) SetClock(c bodyrate.Clock) { rs.clock = c }

// BoundReads serves h with each request's body bounded in time, from the
// first time it is read on: it must begin within BodyWait and have come
// whole within BodyWait and a second for each bodyrate.Rate bytes of it
// (bodyrate.Due), else the read waiting on it, and each after, fails with
// a *SlowBodyError, which the request answers 408. A body is read under a
// share of the bound on reading (Runs.Reserve), which a client that sent
// its body's head and then a byte a minute, or nothing, held for as long
// as it liked, each other client's input waiting on it; and the time is
// counted from the first read, not from the request, so a request that
// waited its turn for the bound is not cut for the wait. The API's,
// MCP's and A2A's handlers serve under it.
func (rs *Runs) BoundReads(h http.Handler) http.Handler {
	clock := bodyrate.System
	if rs != nil && rs.clock != nil {
		clock = rs.clock
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		b := &timedBody{rc: r.Body, clock: clock, w: w}
		// A timer left going could cut the connection's next request.
		defer b.end()
		r.Body = b
		h.ServeHTTP(w, r)
	})
}

// timedBody is a request's body held to bodyrate.Due from its first read.
type timedBody struct {
	rc    io.ReadCloser
	clock bodyrate.Clock
	w     http.ResponseWriter // its request's, whose connection a cut ends the read of

	mu      sync.Mutex
	started bool
	start   time.Time
	read    int64
	timer   bodyrate.Timer
	late    bool      // its time ran out: its reads fail
	lateAt  time.Time // when
	ended   bool      // read whole, or its request is over: no longer timed
}

// longAgo is a read deadline that fails a read at once.
var longAgo = time.Unix(1, 0)

func (b *timedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return b.rc.Read(p)
	}
	now := b.clock.Now()
	if !b.started {
		b.started, b.start = true, now
		b.timer = b.clock.AfterFunc(BodyWait, b.fire)
	}
	if !b.late && !now.Before(bodyrate.Due(b.start, BodyWait, b.read)) {
		b.cut(now)
	}
	if b.late {
		defer b.mu.Unlock()
		return 0, b.slow()
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.read += int64(n)
	switch {
	case err == io.EOF:
		// Read whole. (Where its time ran out as its last bytes came,
		// net/http's read of the connection after the body, which it
		// starts as the body ends, may fail too, and end the request.)
		b.stop()
	case err != nil && b.late:
		return n, b.slow() // the read the cut failed
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.end()
	return b.rc.Close()
}

// fire runs at the timer: past the body's due it is cut; before it (bytes
// came, and earned it time), the timer is set again.
func (b *timedBody) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended || b.late {
		return
	}
	now := b.clock.Now()
	if left := bodyrate.Due(b.start, BodyWait, b.read).Sub(now); left > 0 {
		b.timer.Reset(left)
		return
	}
	b.cut(now)
}

// cut fails the read waiting on the body, and each after, under b.mu: a
// read deadline in the past ends a read in progress on the connection,
// and makes net/http close it once the request is answered rather than
// read what is left of the body.
func (b *timedBody) cut(now time.Time) {
	b.late, b.lateAt = true, now
	_ = http.NewResponseController(b.w).SetReadDeadline(longAgo)
}

func (b *timedBody) slow() error {
	return &SlowBodyError{Read: b.read, Took: b.lateAt.Sub(b.start)}
}

// stop stops timing the body, under b.mu.
func (b *timedBody) stop() {
	b.ended = true
	if b.timer != nil {
		b.timer.Stop()
	}
}

// end stops timing the body: its request is over.
func (b *timedBody) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop()
}
