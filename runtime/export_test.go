package runtime

// PoolWaits returns a channel that receives once each time a reservation
// of p starts to wait, so a test waits for that rather than for a while.
func PoolWaits(p *Pool) <-chan struct{} {
	ch := make(chan struct{}, 64)
	p.mu.Lock()
	p.waiting = func() { ch <- struct{}{} }
	p.mu.Unlock()
	return ch
}
