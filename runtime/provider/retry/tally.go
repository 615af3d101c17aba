package retry

import (
	"context"
	"sync"
	"sync/atomic"
)

// Tally keeps, for one call, which of its attempts a server answered (a
// response with a 2xx status: the request was taken, and a provider bills
// its input) and how many bytes of reply each read before it ended. An
// attempt answered and then failed (a stream cut after its reply came, a
// body that did not parse) was billed by the provider, yet no usage of it
// reaches the call's result; what Lost says of such attempts is what the
// run charges for them.
type Tally struct {
	mu       sync.Mutex
	attempts []*Attempt
}

// Attempt is one attempt of a tallied call, as the provider's reading of
// its response hears it.
type Attempt struct {
	answered atomic.Bool
	bytes    atomic.Int64
}

type tallyKey struct{}
type attemptKey struct{}

// WithTally returns ctx carrying a new Tally: Do, called with it, begins
// an Attempt in each attempt's context (AttemptOf).
func WithTally(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// begin records a new attempt and returns the context to make it with.
func (t *Tally) begin(ctx context.Context) context.Context {
	a := &Attempt{}
	t.mu.Lock()
	t.attempts = append(t.attempts, a)
	t.mu.Unlock()
	return context.WithValue(ctx, attemptKey{}, a)
}

// AttemptOf returns the attempt made with ctx, nil outside a tallied call.
func AttemptOf(ctx context.Context) *Attempt {
	a, _ := ctx.Value(attemptKey{}).(*Attempt)
	return a
}

// Answered says the server answered the attempt with a 2xx status.
func (a *Attempt) Answered() {
	if a != nil {
		a.answered.Store(true)
	}
}

// Read counts n more bytes of the attempt's reply: a whole body's bytes,
// or a stream's pieces of text and tool calls.
func (a *Attempt) Read(n int) {
	if a != nil && n > 0 {
		a.bytes.Add(int64(n))
	}
}

// Lost returns how many of the call's attempts were answered and are not
// the call's result, and the bytes of reply they read: every answered
// attempt, or, when last is true, every one but the last attempt made
// (the call's result, or its failure that reported its own usage).
func (t *Tally) Lost(last bool) (attempts int, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	as := t.attempts
	if last && len(as) > 0 {
		as = as[:len(as)-1]
	}
	for _, a := range as {
		if a.answered.Load() {
			attempts++
			bytes += a.bytes.Load()
		}
	}
	return attempts, bytes
}
