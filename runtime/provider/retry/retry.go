// Package retry is the runtime's retry policy for provider calls: which
// failures are worth another attempt, how long to wait, and when to give up.
// Providers classify their errors; this package decides.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Policy bounds the attempts of one call.
type Policy struct {
	// Attempts is the most attempts made, the first included.
	Attempts int
	// Base is the wait before the first retry; each retry doubles it, up to
	// Max. Jitter draws the wait uniformly from [wait/2, wait].
	Base, Max time.Duration
	// RetryAfterCap caps a server's Retry-After: a longer one ends the
	// retries rather than stall the run.
	RetryAfterCap time.Duration
	// OnAttempt, if set, hears of every failed attempt and the wait before
	// the next one: zero when there is none, and then err is the error Do
	// returns, which says why no retry follows where the error and the
	// count of attempts do not (a Retry-After past the cap, a deadline too
	// close).
	OnAttempt func(attempt int, err error, wait time.Duration)
}

// DefaultStall is how long a provider's server may make no progress,
// waiting for a response or within one (limit.Stall in the providers says
// what progress is: a part of a streamed reply, keep-alives not, and a
// whole body at a least rate), before the providers give up the attempt
// and, as the policy allows, make it again: a connection a server or a
// proxy holds open without answering must not hold a run until its
// deadline, or for ever when it has none. Ten minutes is what the
// providers' own SDKs allow a request by default; a slow local server
// that answers only once it has generated the whole reply may need more.
const DefaultStall = 10 * time.Minute

// Default is the policy the providers use unless a host sets another.
var Default = Policy{Attempts: 5, Base: 500 * time.Millisecond, Max: 20 * time.Second, RetryAfterCap: 60 * time.Second}

// Error is a failed attempt, classified by the provider.
type Error struct {
	Err error
	// Retryable says another attempt may succeed: 408, 409, 429, 5xx, 529
	// and connection failures. 400, 401, 403, 404 and quota errors are
	// final.
	Retryable bool
	// RetryAfter is the server's requested wait, if it sent one.
	RetryAfter time.Duration
	// Status is the HTTP status of the response that failed, when one
	// arrived: a Gate tells a refusal for rate (429) by it.
	Status int
}

// RateLimited reports whether err is an attempt the server refused for
// rate (HTTP 429) and that another attempt may pass: a quota spent,
// which providers also answer with 429, is final and is not one.
func RateLimited(err error) (*Error, bool) {
	var re *Error
	if errors.As(err, &re) && re.Status == http.StatusTooManyRequests && re.Retryable {
		return re, true
	}
	return nil, false
}

// Gate paces the attempts of the calls whose context carries it (see
// WithGate), as package net/http/httptrace carries its hooks: a limiter
// shared by every call to one model, which the providers reach through
// Do without knowing of it.
type Gate interface {
	// Wait is called before every attempt, and may hold it; an error it
	// returns ends the call.
	Wait(ctx context.Context) error
	// Failed hears of every failed attempt.
	Failed(err error)
}

type gateKey struct{}

// WithGate returns ctx carrying g, which Do consults before and after
// every attempt of a call made with it.
func WithGate(ctx context.Context, g Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

func gateOf(ctx context.Context) Gate {
	g, _ := ctx.Value(gateKey{}).(Gate)
	return g
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// RetryableStatus reports whether an HTTP status is worth another attempt.
func RetryableStatus(status int) bool {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests:
		return true
	case status == 529: // overloaded
		return true
	case status >= 500:
		return true
	}
	return false
}

// ParseRetryAfter reads a server's requested wait: Retry-After-Ms where
// it is sent, else Retry-After, seconds or an HTTP date. It returns zero
// when there is none or it does not parse.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	// Retry-After-Ms, where a server sends it beside Retry-After (as
	// OpenAI does), is the finer of the two: 120 ms, not a whole second.
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n > 0 && !math.IsInf(n, 0) {
			return time.Duration(min(n, float64(math.MaxInt64/int64(time.Millisecond))) * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && n > 0 {
		// Clamped: past 2^63 ns the conversion would wrap to a negative
		// wait, retried at once instead of refused as too long; a number
		// past a float's range is the longest wait too.
		return time.Duration(min(n, float64(math.MaxInt64/int64(time.Second))) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Do calls fn until it succeeds, fails finally, the attempts are used up,
// or ctx ends (a deadline included: no attempt is started that the
// deadline would not let wait for). fn's errors that are not *Error are
// final. The error returned is the last attempt's, wrapped with the count.
// A Gate ctx carries (WithGate) is waited on before every attempt and told
// of every failure; a Tally it carries (WithTally) begins an Attempt for
// each.
func (p Policy) Do(ctx context.Context, fn func(ctx context.Context, attempt int) error) error {
	attempts := max(p.Attempts, 1)
	wait := p.Base
	gate := gateOf(ctx)
	tally, _ := ctx.Value(tallyKey{}).(*Tally)
	for attempt := 1; ; attempt++ {
		if gate != nil {
			if err := gate.Wait(ctx); err != nil {
				if attempt > 1 {
					err = fmt.Errorf("after %d attempts: %w", attempt-1, err)
				}
				return err
			}
		}
		actx := ctx
		if tally != nil {
			actx = tally.begin(ctx)
		}
		err := fn(actx, attempt)
		if err == nil {
			return nil
		}
		if gate != nil {
			gate.Failed(err)
		}
		var re *Error
		final := !errors.As(err, &re) || !re.Retryable || attempt >= attempts || ctx.Err() != nil
		next := time.Duration(0)
		why := ""
		if !final {
			next = jitter(min(wait, p.Max))
			if re.RetryAfter > 0 {
				if p.RetryAfterCap > 0 && re.RetryAfter > p.RetryAfterCap {
					final = true
					why = fmt.Sprintf("the server asked to wait %s, past the cap of %s", re.RetryAfter.Round(time.Second), p.RetryAfterCap)
				}
				next = max(next, re.RetryAfter)
			}
			if d, ok := ctx.Deadline(); ok && !final && time.Until(d) < next {
				final = true
				why = fmt.Sprintf("the deadline leaves less than the %s to wait", next.Round(time.Millisecond))
			}
		}
		if final {
			next = 0
			if why != "" {
				err = &gaveUp{err: err, why: why}
			}
			if attempt > 1 {
				err = fmt.Errorf("after %d attempts: %w", attempt, err)
			}
		}
		if p.OnAttempt != nil {
			p.OnAttempt(attempt, err, next)
		}
		if final {
			return err
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("after %d attempts: %w (waiting to retry: %w)", attempt, err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// gaveUp is a retryable error not retried, and why.
type gaveUp struct {
	err error
	why string
}

func (e *gaveUp) Error() string { return fmt.Sprintf("%v (not retried: %s)", e.err, e.why) }
func (e *gaveUp) Unwrap() error { return e.err }

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// FailureClass classifies the failure for a model's fallbacks (see
// runtime.FailureClassOf): the class the error it wraps gives, else
// "unavailable" for a failure worth another attempt (a connection that
// failed, a server that stalled), whose attempts are spent.
func (e *Error) FailureClass() string {
	var c interface{ FailureClass() string }
	if errors.As(e.Err, &c) {
		return c.FailureClass()
	}
	if e.Retryable {
		return "unavailable"
	}
	return ""
}

// StatusClass is the failure class of an HTTP status, for the providers'
// errors: 401 and 403 "auth", 404 "not_found", what RetryableStatus
// retries "unavailable"; "" for the rest (a request the server refused as
// it was, which another model is as likely to refuse).
func StatusClass(status int) string {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return "auth"
	case status == http.StatusNotFound:
		return "not_found"
	case RetryableStatus(status):
		return "unavailable"
	}
	return ""
}
