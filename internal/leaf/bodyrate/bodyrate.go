// Package bodyrate is the least rate at which a whole body must come, a
// provider's reply to agentc or a client's request to agentc serve: within
// a wait of its start and a second more for each Rate bytes of it. A
// party that sends a body a byte at a time, each byte restarting a wait,
// would otherwise hold what the body holds (a run, a share of a bound)
// for as long as it likes.
package bodyrate

import (
	"sync"
	"time"
)

// Rate is the least rate, in bytes a second, at which a body earns time
// past its wait: 128 kbit/s, a slow link's, at which 32 MiB come in 34
// minutes.
const Rate = 16 << 10

// Due is when a body whose wait began at start, read bytes of it come so
// far, must have come whole, or its next bytes: start, the wait, and a
// second for each Rate bytes read.
func Due(start time.Time, wait time.Duration, read int64) time.Time {
	read = max(read, 0)
	return start.Add(wait + time.Duration(read/Rate)*time.Second + time.Duration(read%Rate)*time.Second/Rate)
}

// Clock is the time a body is timed by: System, or a test's (Manual).
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's timer, as time.AfterFunc's.
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// System is the system's clock.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time                            { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Manual is a Clock a test moves by hand (Advance): its timers fire, in
// order, in Advance, so that what a test asserts of a body's time does
// not hang on how busy its machine is. Its zero value is at the zero
// time; its methods are safe for concurrent use.
type Manual struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c  *Manual
	at time.Time
	f  func()
	on bool
}

// Now is the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f, in Advance, once the clock has moved d on.
func (c *Manual) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f, on: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.on
	t.at, t.on = t.c.now.Add(d), true
	return was
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.on
	t.on = false
	return was
}

// Advance moves the clock on by d, firing each timer due on the way at
// its time, one after another, and returns once each has returned.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		var next *manualTimer
		for _, t := range c.timers {
			if t.on && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		c.now, next.on = next.at, false
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
}
