// Package failure holds what every provider client says of a request that
// failed on its way, rather than being answered with a status: whether
// another attempt may not meet the same failure, and an error whose
// message is redacted that still unwraps to what was met.
package failure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/origin"
	"agentc.dev/agentc/runtime/internal/replylimit"
	"agentc.dev/agentc/runtime/provider/internal/limit"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/redact"
)

// Transient reports a connection failure or a per-attempt timeout: a
// connection refused, reset or closed before or while the response came
// (a body cut short), a server that stopped sending (limit.StalledError),
// a deadline. The request may not have been served, and another attempt
// may be. A refused redirect is not: the same request meets the same
// redirect. Nor is anything else the HTTP client met, such as a
// certificate it refused or a scheme it does not speak: it wraps each in
// a *url.Error, which is a net.Error itself, so what it wraps decides.
func Transient(err error) bool {
	if errors.Is(err, origin.ErrRedirect) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var netErr net.Error
	var stalled *limit.StalledError
	return errors.As(err, &netErr) || errors.As(err, &stalled) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded)
}

// Redacted is an error whose message has had secrets replaced, and which
// still unwraps to the error it was made from, so that errors.Is and
// errors.As see through it.
type Redacted struct {
	Msg string
	Err error
}

func (e *Redacted) Error() string { return e.Msg }
func (e *Redacted) Unwrap() error { return e.Err }

// Wrap is err, which a call met, as the call's error: its message is
// provider's name and msg, err's message (or what the provider makes of
// it) with its secrets replaced (Quote). A stall (a *limit.StalledError)
// names provider itself and says all there is to say: its message stands
// for whatever the SDK wrapped around it (its operation, the URL, "error
// reading response body"), which would bury it and name provider twice.
func Wrap(provider, msg string, err error) *Redacted {
	var stalled *limit.StalledError
	if errors.As(err, &stalled) {
		return &Redacted{Msg: stalled.Error(), Err: err}
	}
	return &Redacted{Msg: provider + ": " + msg, Err: err}
}

// Bounded returns the call's error for err when err holds a response cut
// at one of package limit's bounds (a *limit.TooLargeError, or a
// *replylimit.ReplyError or *limit.DenseError: a reply past its request's
// output limit), saying so
// whatever the SDK wrapped it in; ok is false for any other error. Such an
// error is never retried: another attempt would be sent as much again.
func Bounded(provider string, err error) (_ error, ok bool) {
	var large *limit.TooLargeError
	var reply *replylimit.ReplyError
	var dense *limit.DenseError
	switch {
	case errors.As(err, &large):
		return &Redacted{Msg: large.Error(), Err: err}, true
	case errors.As(err, &reply):
		return &Redacted{Msg: provider + ": " + reply.Error(), Err: err}, true
	case errors.As(err, &dense):
		return &Redacted{Msg: provider + ": " + dense.Error(), Err: err}, true
	}
	return nil, false
}

// MaxQuote is the most bytes of a provider's own text (an error's
// message, code, status or request ID, a body the SDK quotes) that an
// error of a call holds. A provider's message is a sentence or two; a
// server that sends megabytes of one would have them copied into the
// terminal, every event of the call's attempts and the journal.
const MaxQuote = 4 << 10

// Quote is s, a provider's text, as an error may hold it: every secret
// of secrets replaced, then cut at MaxQuote bytes, the cut marked with
// the bytes s held. The cut never shows part of a secret (redact.Set's
// Prefix).
func Quote(secrets *redact.Set, s string) string {
	// Prefix looks no further than Lookahead bytes past the cut.
	t := s
	if look := MaxQuote + 2*secrets.Lookahead() + 4; len(t) > look {
		t = t[:look]
	}
	kept, n := secrets.Prefix(t, MaxQuote)
	if n >= len(s) {
		return kept
	}
	return fmt.Sprintf("%s… (%d bytes in all)", kept, len(s))
}

// Tallied makes a model call, complete, with a retry.Tally in its context,
// and says what the call's attempts that the provider answered and that
// failed read (agentrt.Retried): in the response, or in its error. The
// last attempt is not one of them when it is the call's reply, or a failure
// that reported its own usage (agentrt.SpentOf), which the run charges as
// reported.
func Tallied(ctx context.Context, complete func(context.Context) (*agentrt.Response, error)) (*agentrt.Response, error) {
	ctx, t := retry.WithTally(ctx)
	resp, err := complete(ctx)
	n, b := t.Lost(err == nil || agentrt.SpentOf(err) != (agentrt.Usage{}))
	r := agentrt.Retried{Attempts: n, Bytes: b}
	if err != nil {
		return nil, agentrt.WithRetried(err, r)
	}
	if resp != nil {
		resp.Retried = r
	}
	return resp, nil
}
