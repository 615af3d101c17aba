package limit

import (
	"fmt"
	"io"

	"agentc.dev/agentc/internal/leaf/jsonshape"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// DenseError is a response (or one event of a stream) whose JSON holds
// more values, or an event more bytes, than a reply to the request's
// output limit can be written in, refused before it is decoded. Like a
// replylimit.ReplyError, it is never retried.
type DenseError struct {
	Tokens int64 // the output tokens the request allowed
	Values int64 // the values counted when the bound was passed; 0 for Bytes
	Bytes  int64 // the event's bytes when it passed EventBound
	Bound  int64 // replylimit.ValueBound(Tokens), or EventBound(Tokens) for Bytes
	Event  bool  // one event of a stream
}

func (e *DenseError) Error() string {
	what := "the response's body"
	if e.Event {
		what = "an event of the stream"
	}
	if e.Bytes > 0 {
		return fmt.Sprintf("%s passed %d bytes, the most a reply to %d output tokens (the request's limit) can take: the server did not keep to the limit, and the stream was cut", what, e.Bound, e.Tokens)
	}
	return fmt.Sprintf("%s holds more than %d JSON values, the most a reply to %d output tokens (the request's limit) is written in (%d a token and %d besides): the server did not keep to the limit, and it was refused before it was decoded",
		what, e.Bound, e.Tokens, replylimit.ValuesPerToken, replylimit.ValueSlack)
}

// EventBound is the most bytes one event of a stream may hold for a request
// that allowed maxTokens output tokens: what a whole reply's body may
// (replylimit.BodyBound, without a request to echo). 0 where
// replylimit.ReplyBound is.
func EventBound(maxTokens int64) int64 { return replylimit.BodyBound(maxTokens, 0) }

// Values returns rc counting the JSON values it passes (jsonshape), and failing
// the read with a *DenseError past replylimit.ValueBound(maxTokens). With
// events, rc is a stream of server-sent events: each event (its lines up to a
// blank one) is counted alone, and held to EventBound(maxTokens) bytes too. A
// maxTokens of 0 or less bounds nothing.
func Values(rc io.ReadCloser, maxTokens int64, events bool) io.ReadCloser {
	if maxTokens <= 0 {
		return rc
	}
	return &values{rc: rc, tokens: maxTokens, bound: replylimit.ValueBound(maxTokens), events: events, eventBound: EventBound(maxTokens)}
}

type values struct {
	rc            io.ReadCloser
	tokens, bound int64
	events        bool
	eventBound    int64
	c             jsonshape.Counter
	size          int64 // the event's bytes so far
	nl            bool  // the last byte of the event so far ended a line
	err           error
}

func (v *values) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	if v.events {
		from := 0
		for i, b := range p[:n] {
			switch {
			case b == '\r':
				continue // a line may end \r\n
			case b != '\n':
				v.nl = false
				continue
			case !v.nl:
				v.nl = true
				continue
			}
			// A blank line: the event ends.
			if v.check(p[from:i]) {
				return 0, v.err
			}
			v.c.Reset()
			v.size, from = 0, i+1
		}
		if v.check(p[from:n]) {
			return 0, v.err
		}
		return n, err
	}
	if v.check(p[:n]) {
		return 0, v.err
	}
	return n, err
}

// check counts b and reports whether the bounds were passed.
func (v *values) check(b []byte) bool {
	v.c.Write(b)
	v.size += int64(len(b))
	switch {
	case int64(v.c.Values) > v.bound:
		v.err = &DenseError{Tokens: v.tokens, Values: int64(v.c.Values), Bound: v.bound, Event: v.events}
	case v.events && v.size > v.eventBound:
		v.err = &DenseError{Tokens: v.tokens, Bytes: v.size, Bound: v.eventBound, Event: true}
	}
	return v.err != nil
}

func (v *values) Close() error { return v.rc.Close() }
