package serve

import (
	"testing"
	"time"
)

// SetAnswerWait shortens how long a run waits for an MCP client's answer
// to an approval, for the test t.
func SetAnswerWait(t testing.TB, d time.Duration) {
	answerWaitNanos.Store(int64(d))
	t.Cleanup(func() { answerWaitNanos.Store(0) })
}

// OnReadingWait sets what hears each input that waits for the bound on
// reading, for the test t.
func OnReadingWait(t testing.TB, f func()) {
	readingWaits = f
	t.Cleanup(func() { readingWaits = nil })
}

// HoldReading takes n bytes of the bound on the inputs read at once, as
// inputs being read would, until the function it returns is called.
func (rs *Runs) HoldReading(t testing.TB, n int64) func() {
	if err := rs.reading.Acquire(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	return func() { rs.reading.Release(n) }
}

// ReadingFree reports whether n bytes of the bound on the inputs read at
// once are free now.
func (rs *Runs) ReadingFree(n int64) bool {
	if !rs.reading.TryAcquire(n) {
		return false
	}
	rs.reading.Release(n)
	return true
}
