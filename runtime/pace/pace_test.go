package pace_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/runtime/pace"
)

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)} }

// TestSettle: a call takes its worst case of tokens and settles to what it
// used: the rest goes back to the bucket (a negative reservation of
// golang.org/x/time/rate's, which this test guards), and use beyond it is
// charged.
func TestSettle(t *testing.T) {
	c := newClock()
	s := pace.NewSet(pace.Limits{"openai": {TPM: 600}})
	s.SetClock(c.now)
	l := s.For("openai", "gpt-4o")
	tk, err := l.Take(context.Background(), 600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.TokensAt(c.now()); got != 0 {
		t.Fatalf("after taking 600 of 600, the bucket holds %v", got)
	}
	tk.Settle(100)
	tk.Settle(600) // only the first counts
	if got := l.TokensAt(c.now()); got != 500 {
		t.Fatalf("after settling to 100, the bucket holds %v, want 500", got)
	}
	tk, err = l.Take(context.Background(), 500, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk.Settle(800)
	if got := l.TokensAt(c.now()); got != -300 {
		t.Fatalf("after a call used 300 more than it took, the bucket holds %v, want -300", got)
	}
	// A call that may use more than a minute's tokens takes a minute's.
	c.add(2 * time.Minute)
	if tk, err = l.Take(context.Background(), 5000, nil); err != nil {
		t.Fatal(err)
	}
	if got := l.TokensAt(c.now()); got != 0 {
		t.Fatalf("a take of 5000 of 600 a minute left %v", got)
	}
	tk.Settle(0)
	var none *pace.Tokens
	none.Settle(5) // a call that took nothing
}

// TestRefused: a 429 holds the limiter for its Retry-After (MaxHold at
// most; a doubling backoff without one) and halves its rate once a hold,
// which comes back a step each RecoverEvery.
func TestRefused(t *testing.T) {
	c := newClock()
	s := pace.NewSet(pace.Limits{"openai": {RPM: 600, TPM: 6000}})
	s.SetClock(c.now)
	l := s.For("openai", "gpt-4o")
	if req, tok := l.Rates(); req != 10 || tok != 100 {
		t.Fatalf("rates %v, %v a second; want 10, 100", req, tok)
	}
	if hold, began := l.Refused(2 * time.Second); hold != 2*time.Second || !began {
		t.Fatalf("first 429: hold %s, began %v", hold, began)
	}
	if req, tok := l.Rates(); req != 5 || tok != 50 || l.Factor() != 0.5 {
		t.Fatalf("after a 429: rates %v, %v, factor %v; want halved", req, tok, l.Factor())
	}
	// Calls in flight when the first 429 came meet 429s of their own:
	// they fall in its hold, and slow nothing further.
	c.add(time.Second)
	if _, began := l.Refused(3 * time.Second); began || l.Factor() != 0.5 {
		t.Fatalf("a 429 within a hold began one (%v), or slowed more: factor %v", began, l.Factor())
	}
	// The hold is now until 4s; past it, another halves again.
	c.add(3 * time.Second)
	if _, began := l.Refused(0); !began || l.Factor() != 0.25 {
		t.Fatalf("a 429 past the hold: began %v, factor %v; want true, 0.25", began, l.Factor())
	}
	c.add(pace.RecoverEvery)
	if f := l.Factor(); f != 0.375 {
		t.Fatalf("after %s without a 429, factor %v, want 0.375", pace.RecoverEvery, f)
	}
	c.add(10 * pace.RecoverEvery)
	if f := l.Factor(); f != 1 {
		t.Fatalf("long after, factor %v, want 1", f)
	}
	if req, _ := l.Rates(); req != 10 {
		t.Fatalf("long after, %v requests a second, want 10", req)
	}
	// Without a Retry-After, holds double, 1s, 2s, 4s, while 429s come
	// within a minute of each other; a long Retry-After is capped.
	for _, want := range []time.Duration{1, 2, 4} {
		c.add(5 * time.Second)
		if hold, _ := l.Refused(0); hold != want*time.Second {
			t.Fatalf("backoff %s, want %s", hold, want*time.Second)
		}
	}
	c.add(2 * time.Minute)
	if hold, _ := l.Refused(0); hold != pace.FirstBackoff {
		t.Fatalf("a 429 long after the last: backoff %s, want %s", hold, pace.FirstBackoff)
	}
	if hold, _ := l.Refused(time.Hour); hold != pace.MaxHold {
		t.Fatalf("a Retry-After of an hour holds %s, want %s", hold, pace.MaxHold)
	}
	// With no limit set, a 429 holds calls and slows nothing.
	u := s.For("anthropic", "claude")
	if hold, began := u.Refused(time.Second); hold != time.Second || !began || u.Factor() != 1 {
		t.Fatalf("unlimited: hold %s, began %v, factor %v", hold, began, u.Factor())
	}
}

// TestWaitDeadline: a wait that cannot end before the call's deadline
// ends the call at once, as a deadline, saying why.
func TestWaitDeadline(t *testing.T) {
	s := pace.NewSet(pace.Limits{"openai": {TPM: 60}})
	l := s.For("openai", "gpt-4o")
	l.Refused(pace.MaxHold)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute/2)
	defer cancel()
	err := l.Wait(ctx, nil)
	var we *pace.WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v, want a *WaitError that is a deadline", err)
	}
	if want := "openai:gpt-4o: the call would wait "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q", err)
	}
	// Tokens past a minute's worth wait as long: 60 taken, 60 more.
	if _, err := l.Take(context.Background(), 60, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Take(ctx, 60, nil); !errors.As(err, &we) {
		t.Fatalf("Take: %v, want a *WaitError", err)
	}
}

// TestWaitCancel: a wait ends when its context does, and the wait was said.
func TestWaitCancel(t *testing.T) {
	s := pace.NewSet()
	l := s.For("openai", "gpt-4o")
	l.Refused(pace.MaxHold)
	ctx, cancel := context.WithCancel(context.Background())
	notes := make(chan string, 1)
	done := make(chan error)
	go func() {
		done <- l.Wait(ctx, func(msg string) { notes <- msg })
	}()
	msg := <-notes
	if want := " for the hold of a 429 from openai:gpt-4o to pass"; !strings.HasPrefix(msg, "waiting ") || !strings.HasSuffix(msg, want) {
		t.Errorf("note %q, want one of a wait%s", msg, want)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v, want context.Canceled", err)
	}
}
