// Package pace paces a process's calls to each provider's model: within
// the rate limits the person running sets (requests and tokens a minute,
// package golang.org/x/time/rate's token buckets), and, whether or not
// any is set, behind a refusal for rate (HTTP 429) that any call to the
// model met, so that one 429 holds every caller until its Retry-After has
// passed rather than each meeting its own.
//
// A Set holds one Limiter for each provider's model a process calls,
// shared by every run it makes: a batch's items, the agents they call,
// the runs a worker executes. Model wraps a provider's client so that
// each call takes its tokens from the limiter before it is sent and each
// attempt its request (through retry.WithGate). Pacing only delays calls:
// it changes no request, answer or journal, and a limit never reaches a
// plan or a provider.
package pace

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// How a refusal for rate slows a limiter.
const (
	// MaxHold caps how long a 429 holds every caller: as retry.Default
	// caps a Retry-After a call waits for.
	MaxHold = 60 * time.Second
	// FirstBackoff is the hold of a 429 without a Retry-After; each such
	// 429 within a minute of the last doubles it, up to MaxBackoff.
	FirstBackoff = time.Second
	MaxBackoff   = 30 * time.Second
	// A limit is halved at a 429 (at most once a hold), to no less than
	// Slowest of itself, and given back a RecoverStep of itself for each
	// RecoverEvery without a 429.
	Slowest      = 1.0 / 16
	RecoverStep  = 1.0 / 8
	RecoverEvery = 10 * time.Second
	// A wait longer than NoteAfter is said (an event), at most once a
	// NoteEvery for each model.
	NoteAfter = time.Second
	NoteEvery = 10 * time.Second
)

// Set is the limiters of one process, one for each provider's model it
// calls, made at the first call. The zero Set has no limits and still
// shares 429s.
type Set struct {
	sources []Limits
	// Applied, if set, hears of each limit that comes to apply to a
	// model, once, at its first call.
	Applied func(key string, l Limit)

	mu   sync.Mutex
	lims map[string]*Limiter
	now  func() time.Time // the tests'
}

// NewSet returns a set of limiters whose limits come from sources, the
// first that names a model or its provider deciding (a flag's before an
// environment variable's before a file's); within one source, a model's
// own entry comes before its provider's.
func NewSet(sources ...Limits) *Set { return &Set{sources: sources} }

// Limit returns the limit of a provider's model, and whether one applies.
func (s *Set) Limit(provider, model string) (Limit, bool) {
	for _, src := range s.sources {
		if l, ok := src.Lookup(provider, model); ok {
			return l, !l.None()
		}
	}
	return Limit{}, false
}

// For returns the limiter of a provider's model.
func (s *Set) For(provider, model string) *Limiter {
	key := provider + ":" + model
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lims[key]; ok {
		return l
	}
	if s.lims == nil {
		s.lims = map[string]*Limiter{}
	}
	lim, limited := s.Limit(provider, model)
	l := newLimiter(key, lim, s.now)
	s.lims[key] = l
	if limited && s.Applied != nil {
		s.Applied(key, lim)
	}
	return l
}

// Limiter paces the calls to one provider's model.
type Limiter struct {
	key   string
	limit Limit
	now   func() time.Time
	// req and tok are the limit's buckets; nil where it sets none.
	// Requests come one at a time at the rate (a burst of one), since
	// servers may count a minute's requests in shorter windows; tokens
	// may come a minute's worth at once.
	req, tok *rate.Limiter

	mu      sync.Mutex
	until   time.Time // every call is held until then, after a 429
	factor  float64   // the share of the limit allowed now, after 429s
	changed time.Time // when factor last changed
	refused time.Time // the last 429 without a Retry-After
	strikes int       // such 429s within a minute of each other
	noted   time.Time // when a wait was last said
}

func newLimiter(key string, lim Limit, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	l := &Limiter{key: key, limit: lim, now: now, factor: 1}
	if lim.RPM > 0 {
		l.req = rate.NewLimiter(perSecond(lim.RPM, 1), 1)
	}
	if lim.TPM > 0 {
		l.tok = rate.NewLimiter(perSecond(lim.TPM, 1), lim.TPM)
	}
	return l
}

func perSecond(perMinute int, factor float64) rate.Limit {
	return rate.Limit(float64(perMinute) * factor / 60)
}

// Key is the limiter's provider and model, "openai:gpt-4o".
func (l *Limiter) Key() string { return l.key }

// Limit is the limit the limiter keeps, at its full rate.
func (l *Limiter) Limit() Limit { return l.limit }

// Factor is the share of the limit allowed now: 1, or less for a while
// after a 429.
func (l *Limiter) Factor() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recover(l.now())
	return l.factor
}

// WaitError is a wait that would outlast the call's deadline: the call
// ends at once rather than sleep until it. It is a
// context.DeadlineExceeded. It names no limit: it is journaled, and the
// limits stay the process's (the event of the wait names it).
type WaitError struct {
	Key  string
	Wait time.Duration
	Why  string
	// detail is Why with the limit, for the event of the wait.
	detail string
}

func (e *WaitError) Error() string { return e.text(e.Why) }

func (e *WaitError) text(why string) string {
	return fmt.Sprintf("%s: the call would wait %s for %s, past the deadline", e.Key, e.Wait.Round(time.Millisecond), why)
}

func (e *WaitError) Unwrap() error { return context.DeadlineExceeded }

// BeforeDeadline says the call ended before its deadline, which it could
// not meet (agentrt.EarlyDeadline).
func (e *WaitError) BeforeDeadline() bool { return true }

// Wait holds one attempt of a call until the model may be sent it: past
// any hold a 429 set, and, with a limit of requests, at its turn. It
// fails at once with a *WaitError when the wait would outlast ctx's
// deadline, and with ctx's error when ctx ends first. note, when not
// nil, hears of a long wait, and why.
func (l *Limiter) Wait(ctx context.Context, note func(string)) error {
	for {
		if d := l.held(); d > 0 {
			if err := l.sleep(ctx, d, "the hold of a 429 from "+l.key+" to pass", note); err != nil {
				return err
			}
		}
		if l.req == nil {
			return nil
		}
		now := l.now()
		r := l.req.ReserveN(now, 1)
		if err := l.sleep(ctx, r.DelayFrom(now), l.why(), note); err != nil {
			r.CancelAt(l.now())
			return err
		}
		if l.held() <= 0 {
			return nil
		}
		// A 429 arrived while it waited: it waits that out and queues
		// again, at the lowered rate.
	}
}

// Tokens are tokens a call took from a limiter, until Settle.
type Tokens struct {
	l    *Limiter
	n    int
	once sync.Once
}

// Take takes n tokens, a call's worst case (its input's count and its
// output allowance), waiting for them as Wait waits; a call that may use
// more than a minute's tokens takes a minute's. Take on a limiter without
// a limit of tokens takes nothing.
func (l *Limiter) Take(ctx context.Context, n int, note func(string)) (*Tokens, error) {
	if l.tok == nil {
		return &Tokens{}, nil
	}
	n = min(max(n, 1), l.tok.Burst())
	now := l.now()
	l.mu.Lock()
	l.recover(now)
	l.mu.Unlock()
	r := l.tok.ReserveN(now, n)
	if err := l.sleep(ctx, r.DelayFrom(now), l.why(), note); err != nil {
		r.CancelAt(l.now())
		return nil, err
	}
	return &Tokens{l: l, n: n}, nil
}

// Settle ends the take at the tokens the call used (0 for one that failed
// without usage): what it took beyond them is given back, and what it
// used beyond them is charged, up to a minute's tokens more, so the calls
// after it wait for them. Only the first Settle counts.
func (t *Tokens) Settle(used int) {
	if t == nil || t.l == nil {
		return
	}
	t.once.Do(func() {
		lim := t.l.tok
		d := min(max(used, 0), t.n+lim.Burst()) - t.n
		if d != 0 {
			// A negative count gives tokens back: the bucket holds them
			// until the next take caps it at its burst (TestSettle).
			lim.ReserveN(t.l.now(), d)
		}
	})
}

// Refused tells the limiter a call met a 429 that asked to wait
// retryAfter (0 when it did not say). Every call to the model is held
// until that has passed (a backoff when it did not say; MaxHold at most),
// and a limit, if any, is halved, once in a hold. It returns the hold and
// whether this 429 began it, rather than fell in one an earlier 429 set.
func (l *Limiter) Refused(retryAfter time.Duration) (hold time.Duration, began bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	hold = retryAfter
	if hold <= 0 {
		if now.Sub(l.refused) > time.Minute {
			l.strikes = 0
		}
		l.refused = now
		hold = min(FirstBackoff<<min(l.strikes, 16), MaxBackoff)
		l.strikes++
	}
	hold = min(hold, MaxHold)
	began = !now.Before(l.until)
	if began && !l.limit.None() {
		l.recover(now)
		l.factor = max(l.factor/2, Slowest)
		l.changed = now
		l.setRates(now)
	}
	if until := now.Add(hold); until.After(l.until) {
		l.until = until
	}
	return hold, began
}

// held returns how long calls are held still.
func (l *Limiter) held() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.recover(now)
	return l.until.Sub(now)
}

// recover gives back the rate 429s took, a step for each RecoverEvery
// since the last change. l.mu is held.
func (l *Limiter) recover(now time.Time) {
	if l.factor >= 1 || now.Before(l.until) {
		return
	}
	steps := int(now.Sub(l.changed) / RecoverEvery)
	if steps <= 0 {
		return
	}
	l.factor = min(1, l.factor+float64(steps)*RecoverStep)
	l.changed = l.changed.Add(time.Duration(steps) * RecoverEvery)
	l.setRates(now)
}

// setRates sets the buckets' rates to the limit's share. l.mu is held.
func (l *Limiter) setRates(now time.Time) {
	if l.req != nil {
		l.req.SetLimitAt(now, perSecond(l.limit.RPM, l.factor))
	}
	if l.tok != nil {
		l.tok.SetLimitAt(now, perSecond(l.limit.TPM, l.factor))
	}
}

// why says what a wait for the limit's turn is for.
func (l *Limiter) why() string {
	l.mu.Lock()
	f := l.factor
	l.mu.Unlock()
	s := fmt.Sprintf("%s's limit of %s", l.key, l.limit)
	if l.limit.From != "" {
		s += " (" + l.limit.From + ")"
	}
	if f < 1 {
		s += fmt.Sprintf(", slowed to %.0f%% of it after a 429", f*100)
	}
	return s
}

// sleep waits d, failing at once when that would outlast ctx's deadline.
func (l *Limiter) sleep(ctx context.Context, d time.Duration, why string, note func(string)) error {
	if d <= 0 {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && l.now().Add(d).After(dl) {
		// The error is journaled and reported: it names no limit.
		short := "its turn under the model's rate limit"
		if strings.HasPrefix(why, "the hold") {
			short = why
		}
		return &WaitError{Key: l.key, Wait: d, Why: short, detail: why}
	}
	if d >= NoteAfter && note != nil && l.mayNote() {
		note(fmt.Sprintf("waiting %s for %s", d.Round(100*time.Millisecond), why))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// mayNote reports whether a long wait may be said now: once a NoteEvery.
func (l *Limiter) mayNote() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.noted.IsZero() && now.Sub(l.noted) < NoteEvery {
		return false
	}
	l.noted = now
	return true
}
