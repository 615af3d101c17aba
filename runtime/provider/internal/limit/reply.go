package limit

import (
	"fmt"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/tokencount"
)

// BytesPerToken is the most bytes one output token is taken to make: the
// longest token of the vocabularies agentc has, o200k_base and
// cl100k_base, is 128 bytes, a run of blanks (tokencount.MaxTokenBytes);
// English text makes about four bytes a token.
const BytesPerToken = tokencount.MaxTokenBytes

// ReplySlack is what a reply may hold besides what its tokens make: the
// IDs a server gives tool calls, the opaque state a provider asks to be
// sent back (reasoning's signatures and encrypted content).
const ReplySlack = 64 << 10

// ReplyBound is the most bytes of text, tool calls and state (see
// ReplySize) a reply may hold when its request allowed at most maxTokens
// output tokens: BytesPerToken a token and ReplySlack besides. It is 0,
// no bound, for a request that set no limit (maxTokens 0 or less), whose
// reply is bounded by MaxResponse alone.
func ReplyBound(maxTokens int64) int64 {
	if maxTokens <= 0 {
		return 0
	}
	// Past what a response may hold, the bound is MaxResponse's.
	return min(maxTokens, MaxResponse/BytesPerToken)*BytesPerToken + ReplySlack
}

// CallBytes is the least a tool call counts towards a reply's bound: a
// call is at least one token of the model's. Counted by its bytes, a call
// with no name and no arguments counted next to nothing, and 65,537 of
// them fitted the bound of 4,096 tokens: 600 MB to hold, a 24 MB journal.
const CallBytes = BytesPerToken

// ReplySize is the bytes of a reply that ReplyBound bounds: its text, each
// tool call's ID, name and arguments (CallBytes at least), and the
// provider's state. A conversation holds them, and sends them again
// every round.
func ReplySize(msg *agentrt.Message) int64 {
	n := int64(len(msg.Content))
	for _, c := range msg.ToolCalls {
		n += int64(max(len(c.ID)+len(c.Name)+len(c.Arguments), CallBytes))
	}
	for _, p := range msg.Parts {
		n += int64(len(p.Text))
	}
	if msg.State != nil {
		n += int64(len(msg.State.Provider) + len(msg.State.Data))
	}
	return n
}

// ReplyError is a reply larger than the output tokens its request allowed
// can make: the server did not keep to the request's max_tokens (a
// provider's own API never passes it; a broken or hostile server at a
// base URL may). The reply is refused, as a malformed one is; another
// attempt would be sent as much again, so none is made.
type ReplyError struct {
	Tokens int64 // the output tokens the request allowed
	Bound  int64 // ReplyBound(Tokens)
	// Size is the reply's bytes (ReplySize); for a stream cut as it
	// passed the bound, what had come by then.
	Size int64
	Cut  bool // a stream, cut as it passed Bound
	// Body is set for a whole response's body cut as it passed Bound,
	// here BodyBound(Tokens, Request), before it was decoded; Size is
	// then unset.
	Body    bool
	Request int64 // the request's bytes, for Body
}

func (e *ReplyError) Error() string {
	if e.Body {
		return fmt.Sprintf("the response's body passed %d bytes, the most a reply to %d output tokens (the request's limit) can take: %d bytes a token, each byte written as a %d-byte escape, %d KiB besides, and the request's own %d bytes: the server did not keep to the limit, and the response was cut",
			e.Bound, e.Tokens, BytesPerToken, EscapeFactor, (EscapeFactor+1)*ReplySlack>>10, e.Request)
	}
	if e.Cut {
		return fmt.Sprintf("the streamed reply passed %d bytes of text and tool calls, the most %d output tokens (the request's limit) can make at %d bytes a token and %d KiB besides: the server did not keep to the limit, and the stream was cut",
			e.Bound, e.Tokens, BytesPerToken, ReplySlack>>10)
	}
	return fmt.Sprintf("the reply holds %d bytes of text and tool calls, more than %d output tokens (the request's limit) can make (%d: %d bytes a token and %d KiB besides): the server did not keep to the limit, and the reply is refused",
		e.Size, e.Tokens, e.Bound, BytesPerToken, ReplySlack>>10)
}

// CheckReply returns a *ReplyError when msg is larger than a reply to a
// request that allowed maxTokens output tokens can be.
func CheckReply(maxTokens int64, msg *agentrt.Message) error {
	bound := ReplyBound(maxTokens)
	if n := ReplySize(msg); bound > 0 && n > bound {
		return &ReplyError{Tokens: maxTokens, Bound: bound, Size: n}
	}
	return nil
}

// Reply meters a streamed reply as its pieces arrive, so that a stream
// past ReplyBound is cut there rather than read whole. The zero Reply,
// and one for a request that set no limit, bounds nothing.
type Reply struct {
	tokens, bound, size int64
}

// NewReply returns a meter for the reply to a request that allowed at
// most maxTokens output tokens.
func NewReply(maxTokens int64) *Reply {
	return &Reply{tokens: maxTokens, bound: ReplyBound(maxTokens)}
}

// Add counts n more bytes of the reply (text, a tool call's ID, name or
// arguments, state) and returns a *ReplyError once they pass the bound.
func (r *Reply) Add(n int) error {
	if r == nil || r.bound == 0 {
		return nil
	}
	r.size += int64(n)
	if r.size > r.bound {
		return &ReplyError{Tokens: r.tokens, Bound: r.bound, Size: r.size, Cut: true}
	}
	return nil
}
