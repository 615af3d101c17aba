package retry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

var fast = Policy{Attempts: 4, Base: time.Millisecond, Max: 4 * time.Millisecond, RetryAfterCap: time.Second}

func TestDo(t *testing.T) {
	retryable := &Error{Err: errors.New("503"), Retryable: true}
	final := &Error{Err: errors.New("401"), Retryable: false}
	tests := []struct {
		name    string
		errs    []error // per attempt; nil succeeds
		calls   int
		wantErr bool
	}{
		{"first try", []error{nil}, 1, false},
		{"retry then succeed", []error{retryable, retryable, nil}, 3, false},
		{"final error", []error{final, nil}, 1, true},
		{"unclassified is final", []error{errors.New("boom"), nil}, 1, true},
		{"attempts used up", []error{retryable, retryable, retryable, retryable, nil}, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var waits []time.Duration
			p := fast
			p.OnAttempt = func(_ int, _ error, w time.Duration) { waits = append(waits, w) }
			err := p.Do(context.Background(), func(context.Context, int) error {
				calls++
				return tt.errs[calls-1]
			})
			if calls != tt.calls || (err != nil) != tt.wantErr {
				t.Errorf("calls %d, err %v; want %d calls, error %v", calls, err, tt.calls, tt.wantErr)
			}
			if len(waits) != calls-boolInt(!tt.wantErr) {
				t.Errorf("%d attempts heard, %d failed", len(waits), calls-boolInt(!tt.wantErr))
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRetryAfter(t *testing.T) {
	p := fast
	var waits []time.Duration
	p.OnAttempt = func(_ int, _ error, w time.Duration) { waits = append(waits, w) }
	calls := 0
	err := p.Do(context.Background(), func(context.Context, int) error {
		calls++
		if calls == 1 {
			return &Error{Err: errors.New("429"), Retryable: true, RetryAfter: 30 * time.Millisecond}
		}
		return nil
	})
	if err != nil || waits[0] < 30*time.Millisecond {
		t.Errorf("err %v, waits %v: Retry-After must be honoured", err, waits)
	}
	// Past the cap, the retries end.
	calls = 0
	err = p.Do(context.Background(), func(context.Context, int) error {
		calls++
		return &Error{Err: errors.New("429"), Retryable: true, RetryAfter: time.Hour}
	})
	if err == nil || calls != 1 || !strings.Contains(err.Error(), "not retried: the server asked to wait 1h0m0s, past the cap of 1s") {
		t.Errorf("a Retry-After past the cap: calls %d, err %v; want one call and the cap named", calls, err)
	}
}

func TestDeadlineStopsRetries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	p := Policy{Attempts: 100, Base: 50 * time.Millisecond, Max: time.Second}
	calls := 0
	start := time.Now()
	err := p.Do(ctx, func(context.Context, int) error {
		calls++
		return &Error{Err: errors.New("503"), Retryable: true}
	})
	if err == nil || calls != 1 || time.Since(start) > time.Second || !strings.Contains(err.Error(), "not retried: the deadline leaves less than") {
		t.Errorf("calls %d, err %v: no retry may wait past the deadline, and the error says so", calls, err)
	}
}

func TestStatusAndHeader(t *testing.T) {
	for status, want := range map[int]bool{400: false, 401: false, 403: false, 404: false, 408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 529: true} {
		if RetryableStatus(status) != want {
			t.Errorf("status %d: retryable %v", status, !want)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "2")
	if got := ParseRetryAfter(h, now); got != 2*time.Second {
		t.Errorf("seconds: %v", got)
	}
	h.Set("Retry-After", now.Add(5*time.Second).Format(http.TimeFormat))
	if got := ParseRetryAfter(h, now); got != 5*time.Second {
		t.Errorf("date: %v", got)
	}
	h = http.Header{}
	h.Set("Retry-After-Ms", "250")
	if got := ParseRetryAfter(h, now); got != 250*time.Millisecond {
		t.Errorf("ms: %v", got)
	}
	// Both, as OpenAI sends them: the milliseconds are the finer.
	h.Set("Retry-After", "1")
	h.Set("Retry-After-Ms", "120")
	if got := ParseRetryAfter(h, now); got != 120*time.Millisecond {
		t.Errorf("both: %v", got)
	}
	h.Set("Retry-After-Ms", "1e400")
	if got := ParseRetryAfter(h, now); got != time.Second {
		t.Errorf("milliseconds past a float, with seconds beside: %v", got)
	}
	if got := ParseRetryAfter(http.Header{}, now); got != 0 {
		t.Errorf("none: %v", got)
	}
	// Seconds past what a duration holds are the longest wait, never one
	// that wraps round to a negative (retried at once, not refused).
	for _, v := range []string{"99999999999", "1e300", "1e400"} {
		h = http.Header{}
		h.Set("Retry-After", v)
		if got := ParseRetryAfter(h, now); got < 1000*time.Hour {
			t.Errorf("Retry-After: %s: %v, want the longest wait", v, got)
		}
	}
}

// gateLog is a Gate that logs what it is asked, and may refuse.
type gateLog struct {
	log    []string
	refuse error
}

func (g *gateLog) Wait(context.Context) error {
	g.log = append(g.log, "wait")
	return g.refuse
}

func (g *gateLog) Failed(err error) {
	s := "failed"
	if _, ok := RateLimited(err); ok {
		s = "refused for rate"
	}
	g.log = append(g.log, s)
}

// TestGate: a Gate the context carries is waited on before every attempt
// and hears of every failure; one that refuses ends the call before the
// attempt.
func TestGate(t *testing.T) {
	g := &gateLog{}
	errs := []error{
		&Error{Err: errors.New("429"), Retryable: true, Status: 429},
		&Error{Err: errors.New("503"), Retryable: true, Status: 503},
		nil,
	}
	n := 0
	err := fast.Do(WithGate(context.Background(), g), func(context.Context, int) error {
		n++
		return errs[n-1]
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "wait refused for rate wait failed wait"
	if got := strings.Join(g.log, " "); got != want {
		t.Errorf("the gate heard %q, want %q", got, want)
	}
	g = &gateLog{refuse: errors.New("no")}
	n = 0
	err = fast.Do(WithGate(context.Background(), g), func(context.Context, int) error { n++; return nil })
	if err == nil || err.Error() != "no" || n != 0 {
		t.Errorf("a gate that refuses: %v after %d attempts, want its error before any", err, n)
	}
	if _, ok := RateLimited(&Error{Err: errors.New("quota"), Status: 429}); ok {
		t.Error("a final 429 (a quota spent) counts as a refusal for rate")
	}
}

// FuzzParseRetryAfter: whatever a server sends in Retry-After and
// Retry-After-Ms, the wait read is never negative (a negative wait would
// retry at once, where a long one is refused as too long), a date is
// never a wait past itself, and the milliseconds, when they read, win.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range [][2]string{
		{"2", ""}, {"", "250"}, {"1", "120"}, {"1e400", ""}, {"99999999999", "NaN"}, {"-5", "-1"},
		{"Wed, 21 Oct 2015 07:28:00 GMT", ""}, {"Inf", "Inf"}, {"0x10", "1e-400"}, {"Thu, 01 Jan 2026 00:00:05 GMT", "0"},
	} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, after, ms string) {
		h := http.Header{}
		if after != "" {
			h["Retry-After"] = []string{after}
		}
		if ms != "" {
			h["Retry-After-Ms"] = []string{ms}
		}
		got := ParseRetryAfter(h, now)
		if got < 0 {
			t.Fatalf("Retry-After %q, Retry-After-Ms %q: a negative wait, %v", after, ms, got)
		}
		if d, err := http.ParseTime(after); err == nil && ms == "" && got > d.Sub(now) && d.After(now) {
			t.Fatalf("Retry-After %q: waits %v, past the date", after, got)
		}
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n >= 1 && n < 1e9 {
			if want := time.Duration(n * float64(time.Millisecond)); got != want {
				t.Fatalf("Retry-After-Ms %q: waits %v, want %v", ms, got, want)
			}
		}
	})
}
