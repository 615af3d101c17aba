package runtime

import "sync/atomic"

// Pool is a token allowance shared by many runs, which may run
// concurrently. A run checks the pool before each model call and is
// refused once it is dry (before it sends anything, if it is dry from the
// start); it charges the pool with the tokens each call used. A call in
// flight may take the pool below zero: calls are not cut short.
type Pool struct {
	remaining atomic.Int64
}

// NewPool returns a pool of tokens.
func NewPool(tokens int64) *Pool {
	p := &Pool{}
	p.remaining.Store(tokens)
	return p
}

// Remaining returns the tokens left; zero or less means the pool is dry.
func (p *Pool) Remaining() int64 { return p.remaining.Load() }

func (p *Pool) dry() bool { return p.remaining.Load() <= 0 }

func (p *Pool) spend(n int) { p.remaining.Add(-int64(n)) }
