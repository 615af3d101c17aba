package bodyrate

import (
	"slices"
	"testing"
	"time"
)

// TestDue: a body has its wait, and a second more for each Rate bytes
// read, to the nanosecond; a body of a terabyte earns its time too, with
// no overflow on the way.
func TestDue(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, c := range []struct {
		read int64
		want time.Duration
	}{
		{0, 10 * time.Second},
		{-5, 10 * time.Second},
		{1, 10*time.Second + 61035*time.Nanosecond},
		{Rate / 2, 10*time.Second + 500*time.Millisecond},
		{Rate, 11 * time.Second},
		{32 << 20, 10*time.Second + 2048*time.Second},
		{1 << 40, 10*time.Second + (1<<40/Rate)*time.Second},
	} {
		if got := Due(start, 10*time.Second, c.read).Sub(start); got != c.want {
			t.Errorf("Due after %d bytes: %v past the start, want %v", c.read, got, c.want)
		}
	}
}

// TestManual: a Manual clock's timers fire in Advance, in the order of
// their times, each at its time; a timer stopped does not fire, and one
// reset fires at its new time.
func TestManual(t *testing.T) {
	c := &Manual{}
	start := c.Now()
	var fired []string
	at := func(name string) func() {
		return func() { fired = append(fired, name+"@"+c.Now().Sub(start).String()) }
	}
	c.AfterFunc(3*time.Second, at("c"))
	c.AfterFunc(1*time.Second, at("a"))
	stopped := c.AfterFunc(2*time.Second, at("stopped"))
	reset := c.AfterFunc(time.Second, at("reset"))
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop reports whether the timer was going")
	}
	reset.Reset(5 * time.Second)
	c.Advance(4 * time.Second)
	if want := []string{"a@1s", "c@3s"}; !slices.Equal(fired, want) {
		t.Errorf("fired %v in 4s, want %v", fired, want)
	}
	c.Advance(time.Second)
	if want := []string{"a@1s", "c@3s", "reset@5s"}; !slices.Equal(fired, want) {
		t.Errorf("fired %v in 5s, want %v", fired, want)
	}
	if got := c.Now().Sub(start); got != 5*time.Second {
		t.Errorf("the clock is %v on, want 5s", got)
	}
}
