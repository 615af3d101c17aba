package limit

import "agentc.dev/agentc/runtime/internal/replylimit"

// Reply meters a streamed reply as its pieces arrive, so that a stream
// past replylimit.ReplyBound is cut there rather than read whole. The
// zero Reply, and one for a request that set no limit, bounds nothing.
type Reply struct {
	tokens, bound, size int64
}

// NewReply returns a meter for the reply to a request that allowed at
// most maxTokens output tokens.
func NewReply(maxTokens int64) *Reply {
	return &Reply{tokens: maxTokens, bound: replylimit.ReplyBound(maxTokens)}
}

// Add counts n more bytes of the reply (text, a tool call's ID, name or
// arguments, state) and returns a *replylimit.ReplyError once they pass the
// bound.
func (r *Reply) Add(n int) error {
	if r == nil || r.bound == 0 {
		return nil
	}
	r.size += int64(n)
	if r.size > r.bound {
		return &replylimit.ReplyError{Tokens: r.tokens, Bound: r.bound, Size: r.size, Cut: true}
	}
	return nil
}
