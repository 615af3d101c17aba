package pace

import "time"

// SetClock makes the set's limiters read the time from now.
func (s *Set) SetClock(now func() time.Time) { s.now = now }

// Tokens returns the tokens the limiter's bucket holds at t.
func (l *Limiter) TokensAt(t time.Time) float64 { return l.tok.TokensAt(t) }

// Rates returns the rates its buckets go at now, a second.
func (l *Limiter) Rates() (req, tok float64) {
	if l.req != nil {
		req = float64(l.req.Limit())
	}
	if l.tok != nil {
		tok = float64(l.tok.Limit())
	}
	return req, tok
}
