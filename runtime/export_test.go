package runtime

import "agentc.dev/agentc/runtime/tokencount"

// PoolWaits returns a channel that receives once each time a reservation
// of p starts to wait, so a test waits for that rather than for a while.
func PoolWaits(p *Pool) <-chan struct{} {
	ch := make(chan struct{}, 64)
	p.mu.Lock()
	p.waiting = func() { ch <- struct{}{} }
	p.mu.Unlock()
	return ch
}

// CountTexts counts the texts InputTokens and the run's counts of its
// requests give the tokeniser, until the returned function is called,
// which returns how many and puts the tokeniser back. Not for concurrent
// tests.
func CountTexts() (stop func() int) {
	n := 0
	countText = func(c tokencount.Counter, s string) int {
		n++
		return c.Text(s)
	}
	return func() int {
		countText = tokencount.Counter.Text
		return n
	}
}

// RequestText is requestText: the bytes of text the context window's
// bound counts of a request.
var RequestText = requestText
