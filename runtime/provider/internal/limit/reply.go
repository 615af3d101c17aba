package limit

import (
	"context"

	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/retry"
)

// Reply meters a streamed reply as its pieces arrive, so that a stream
// past replylimit.ReplyBound is cut there rather than read whole; and it
// is the stream's progress, as Stall waits for it. The zero Reply, and
// one for a request that set no limit, bounds nothing.
type Reply struct {
	tokens, bound, size int64
	progress            *progress
	attempt             *retry.Attempt
}

// NewReply returns a meter for the reply to a request that allowed at
// most maxTokens output tokens, and the context to make the request
// with: each attempt's stall watch (Stall) then waits for the reply's
// pieces, which Add hears, not for any byte of the stream.
func NewReply(ctx context.Context, maxTokens int64) (context.Context, *Reply) {
	p := &progress{tokens: maxTokens}
	return context.WithValue(ctx, progressKey{}, p), &Reply{tokens: maxTokens, bound: replylimit.ReplyBound(maxTokens), progress: p, attempt: retry.AttemptOf(ctx)}
}

// Add counts n more bytes of the reply (text, a tool call's ID, name or
// arguments, state), to the attempt too (retry.Attempt), and returns a *replylimit.ReplyError once they pass the
// bound. Any n above 0 is progress: the attempt's stall wait starts again.
func (r *Reply) Add(n int) error {
	if r == nil {
		return nil
	}
	if n > 0 && r.progress != nil {
		r.progress.heard()
	}
	r.attempt.Read(n)
	if r.bound == 0 {
		return nil
	}
	r.size += int64(n)
	if r.size > r.bound {
		return &replylimit.ReplyError{Tokens: r.tokens, Bound: r.bound, Size: r.size, Cut: true}
	}
	return nil
}
