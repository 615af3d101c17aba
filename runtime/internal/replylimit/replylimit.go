// Package replylimit holds the bounds a model's reply is held to: by a
// provider's client, as the reply comes from a server (package limit), and
// by the runtime, as it is served from a journal, which whoever supplied
// the journal wrote. A recorded reply is held to what a live one could
// have been, so that a journal cannot make a replay hold more than a
// server could make the run it records.
package replylimit

import (
	"fmt"

	"agentc.dev/agentc/internal/leaf/jsonshape"
	"agentc.dev/agentc/runtime/tokencount"
)

// MaxResponse is the largest response body a provider call accepts, in
// bytes. A chat completion is at most a few megabytes; this leaves room for
// long answers with many tool calls.
const MaxResponse = 32 << 20

// BytesPerToken is the most bytes one output token is taken to make: the
// longest token of the vocabularies agentc has, o200k_base and
// cl100k_base, is 128 bytes, a run of blanks (tokencount.MaxTokenBytes);
// English text makes about four bytes a token.
const BytesPerToken = tokencount.MaxTokenBytes

// MaxTokens is the most output tokens a reply is taken to hold, however
// its request was sent: what MaxResponse holds at BytesPerToken a token
// (262,144), more than any model writes in one reply. ReplyBound is
// MaxResponse's past it.
const MaxTokens = MaxResponse / BytesPerToken

// ReplySlack is what a reply may hold besides what its tokens make: the
// IDs a server gives tool calls, the opaque state a provider asks to be
// sent back (reasoning's signatures and encrypted content).
const ReplySlack = 64 << 10

// ReplyBound is the most bytes of text, tool calls and state (see
// runtime.ReplySize) a reply may hold when its request allowed at most
// maxTokens output tokens: BytesPerToken a token and ReplySlack besides.
// It is 0, no bound, for a request that set no limit (maxTokens 0 or
// less), whose reply is bounded by MaxResponse alone.
func ReplyBound(maxTokens int64) int64 {
	if maxTokens <= 0 {
		return 0
	}
	// Past what a response may hold, the bound is MaxResponse's.
	return min(maxTokens, MaxTokens)*BytesPerToken + ReplySlack
}

// CallBytes is the least a tool call counts towards a reply's bound: a
// call is at least one token of the model's. Counted by its bytes, a call
// with no name and no arguments counted next to nothing, and 65,537 of
// them fitted the bound of 4,096 tokens: 600 MB to hold, a 24 MB journal.
const CallBytes = BytesPerToken

// EscapeFactor is the most bytes JSON writes for a byte of a string: six,
// for a control character written as a \u escape.
const EscapeFactor = 6

// BodyBound is the most bytes the body of a whole response may hold when
// its request, of reqSize bytes, allowed at most maxTokens output tokens:
// what ReplyBound bounds, every byte of it written as a JSON escape
// (EscapeFactor), the request's own bytes (a response may echo them: the
// Responses API sends the instructions and tools back) and ReplySlack for
// the response's own members. It is 0, no bound, where ReplyBound is.
func BodyBound(maxTokens, reqSize int64) int64 {
	reply := ReplyBound(maxTokens)
	if reply == 0 {
		return 0
	}
	return EscapeFactor*reply + reqSize + ReplySlack
}

// ValuesPerToken is the most JSON values one output token is taken to
// write: a token of the model's may be a run of brackets ("[[[[") of a
// tool call's arguments; a token of text is part of one string.
const ValuesPerToken = 4

// ValueSlack is the values a reply's JSON may hold besides what its
// tokens write: the response's own members, a candidate's, usage's.
const ValueSlack = 64 << 10

// ValueBound is the most JSON values a reply to a request that allowed
// at most maxTokens output tokens may be written in: ValuesPerToken a
// token and ValueSlack besides. It is 0, no bound, where ReplyBound is.
// An SDK that decodes a body into maps and slices spends some hundred
// bytes a value: 33 MB of {} decoded to 1.2 GB before any part of it was
// judged, where ValueBound(256) values cost a few MB.
func ValueBound(maxTokens int64) int64 {
	if maxTokens <= 0 {
		return 0
	}
	return min(maxTokens, MaxTokens)*ValuesPerToken + ValueSlack
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

// CheckRecorded refuses the JSON of a reply as a journal stores it,
// before it is decoded, when it is larger, or written in more values,
// than a reply to a request that allowed maxTokens output tokens can be
// (BodyBound, without a request to echo, and ValueBound): a live reply
// past them is cut as it is read. A maxTokens of 0 or less, no limit, is
// taken as MaxTokens, the most any reply holds. Decoded, a recorded
// reply is held to runtime.CheckReply, as a live one is.
func CheckRecorded(raw []byte, maxTokens int64) error {
	limited := maxTokens > 0
	if !limited {
		maxTokens = MaxTokens
	}
	limit := "no output limit: the most any reply holds"
	if limited {
		limit = "the request's limit"
	}
	if bound := BodyBound(maxTokens, 0); int64(len(raw)) > bound {
		return fmt.Errorf("it is %d bytes, more than the %d a reply to %d output tokens (%s) can be written in", len(raw), bound, maxTokens, limit)
	}
	if values, _ := jsonshape.Measure(raw); int64(values) > ValueBound(maxTokens) {
		return fmt.Errorf("it holds %d JSON values, more than the %d a reply to %d output tokens (%s) is written in", values, ValueBound(maxTokens), maxTokens, limit)
	}
	return nil
}
