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
