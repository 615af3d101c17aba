package runtime

import (
	"context"
	"fmt"
	"strings"

	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/tokencount"
)

// ContextError is a model call not made: the request's input is past the
// model's context window, as the price table gives it, whatever the
// model's tokeniser. A provider would refuse it (OpenAI's
// context_length_exceeded, Anthropic's "prompt is too long"), and sending
// it would cost the bytes of a conversation that has outgrown the model:
// one a broken or hostile server grew with replies far past what it was
// asked for, tool results that piled up. Its class is FailureTooLong, so
// a fallback model serves it.
type ContextError struct {
	Provider, Model string
	// Window is the model's context window, in tokens; Bytes the text the
	// request would send, its text files' included, and Least the fewest
	// tokens those bytes can be
	// (Bytes over tokencount.MaxTokenBytes, rounded up).
	Window, Bytes, Least int
}

func (e *ContextError) Error() string {
	return fmt.Sprintf("the request was not sent: it holds %d bytes of text, at least %d tokens at %d bytes a token (the longest token of any tokeniser agentc knows), more than the model's context window of %d tokens (the price table's for %s %s)",
		e.Bytes, e.Least, tokencount.MaxTokenBytes, e.Window, e.Provider, e.Model)
}

// FailureClass is FailureTooLong: a model of a larger context may serve
// the call.
func (e *ContextError) FailureClass() string { return FailureTooLong }

// tooLong returns a *ContextError when the model call at k is to be made
// (not served from the journal) and req's text is more than the model's
// context window could hold even at the most bytes a token any tokeniser
// agentc knows covers. The count is a floor, not an estimate: a request
// the provider would take is never refused, and one refused is past the
// window by far (a provider refuses one at about four bytes a token of
// English). A model the price table gives no window to (an
// OpenAI-compatible server's own, the test model) is not checked.
func (x *run) tooLong(k journal.Key, req *Request) error {
	if !x.live(k) || x.provider == "test" {
		return nil
	}
	p, ok := x.prices().Lookup(x.provider, req.Model)
	if !ok || p.ContextWindow <= 0 {
		return nil
	}
	n := requestText(req)
	if x.fileBounds() {
		_, _, text := filesIn(req.Messages)
		n += int(min(text, 1<<40))
	}
	least := n / tokencount.MaxTokenBytes
	if x.runCtx.Value(windowFloorKey{}) == nil {
		// A token covers at most MaxTokenBytes: a byte past a multiple
		// of it takes one more.
		least = (n + tokencount.MaxTokenBytes - 1) / tokencount.MaxTokenBytes
	}
	if least > p.ContextWindow {
		return &ContextError{Provider: x.provider, Model: req.Model, Window: p.ContextWindow, Bytes: n, Least: least}
	}
	return nil
}

// decides reports whether the run decides for itself what happens at k:
// k is to be made live, or a replay reaches k and its journal does not
// hold it. A call not made for the conversation's bound (pastBound) is
// not journaled, and a replay makes the same decision from the
// conversation the journal gives; what the journal holds at k is served
// as recorded.
func (x *run) decides(k journal.Key) bool {
	if x.live(k) {
		return true
	}
	if x.journal.Recorded == nil {
		return true
	}
	if k.Path == "" {
		k.Path = x.jpath
	}
	if _, held := x.journal.Recorded.Lookup(k); held {
		return false
	}
	// A call that is no effect of its own journals under its key: an
	// agent tool's run, a denied call's decision. A journal holding
	// either made the call.
	child := k.Child()
	for i := range x.journal.Recorded.Entries {
		if p := x.journal.Recorded.Entries[i].Key.Path; p == child || strings.HasPrefix(p, child+"/") {
			return false
		}
	}
	return true
}

type windowFloorKey struct{}

// WithWindowFloor returns a context in which a run counts the fewest
// tokens a request's text can be rounding down (tooLong), sending a
// request up to 127 bytes past the window's bound, as runs did before:
// for a Temporal run started before, whose history must replay as it was
// made.
func WithWindowFloor(ctx context.Context) context.Context {
	return context.WithValue(ctx, windowFloorKey{}, true)
}

type callsPastBoundKey struct{}

// WithCallsPastBound returns a context in which a run makes every tool
// call of a reply however large its conversation grows (pastBound): for a
// Temporal run started before the bound, whose history must replay as it
// was made.
func WithCallsPastBound(ctx context.Context) context.Context {
	return context.WithValue(ctx, callsPastBoundKey{}, true)
}

type fileBoundsOffKey struct{}

// WithoutFileBounds returns a context in which a run holds the files its
// tools return to no bound of the conversation's (withinFileBound), sends
// a model call its estimate puts past the token budget (pastBudget), and
// counts no text file toward the model's window (tooLong), as runs did
// before those bounds: for a Temporal run started before them, whose
// history must replay as it was made.
func WithoutFileBounds(ctx context.Context) context.Context {
	return context.WithValue(ctx, fileBoundsOffKey{}, true)
}

type placedFilesUnboundedKey struct{}

// WithPlacedFilesUnbounded returns a context in which a run sends the
// files its prompt places however many times it places them, as runs did
// before those were held to the run's file bound (placedWithin): for a
// Temporal run started before, whose history must replay as it was made.
func WithPlacedFilesUnbounded(ctx context.Context) context.Context {
	return context.WithValue(ctx, placedFilesUnboundedKey{}, true)
}

// fileBounds reports whether the run holds to the bounds WithoutFileBounds
// lifts.
func (x *run) fileBounds() bool { return x.runCtx.Value(fileBoundsOffKey{}) == nil }

// MaxConversation is the most bytes of text (as requestText counts them)
// the calls of one reply may bring the conversation to: past it, the
// reply's calls left are not made. It is half what a journal holds of one
// request (journal.MaxRequest), so that the request after the reply's
// calls can still be journaled and read back. The bound is the same for
// every model, not its window from the price table, so that a replay
// decides as its run did whatever price table it reads; a request past
// the model's window is refused before it is sent (tooLong), journaled.
// A variable for tests alone.
var MaxConversation = 16 << 20

// pastBound says why the tool call at k is not made, or "" to make it:
// the results of the reply's calls before it put the conversation past
// MaxConversation. Each result joins the conversation, which is checked
// against the model's window only when the next request is built:
// without this bound, 1,500 calls of one reply, each answered with a
// megabyte, held 3.5 GB of memory before any check.
func (x *run) pastBound(k journal.Key) string {
	if !x.decides(k) || x.runCtx.Value(callsPastBoundKey{}) != nil {
		return ""
	}
	n := x.said + specText(x.request())
	if n <= MaxConversation {
		return ""
	}
	return fmt.Sprintf("not called: the conversation holds %d bytes of text, more than the %d a conversation may hold, and no call of this reply past that is made", n, MaxConversation)
}

// requestText is the bytes of text a request sends the model: every
// message's text, name and tool call (ID, name and arguments), and every
// tool's name, description and schema, and the answer's. Files and a
// provider's state are left out: what their bytes are in tokens is not
// known here.
func requestText(req *Request) int {
	n := specText(req)
	for i := range req.Messages {
		n += messageText(&req.Messages[i])
	}
	return n
}

// messageText is the bytes of text of one message, as requestText counts
// them.
func messageText(m *Message) int {
	n := len(m.Role) + len(m.Content) + len(m.ToolCallID) + len(m.Name)
	for _, p := range m.Parts {
		n += len(p.Text)
	}
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// specText is the bytes of text of a request's tools and answer, as
// requestText counts them.
func specText(req *Request) int {
	n := 0
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	if a := req.Answer; a != nil {
		n += len(a.Name) + len(a.Description) + len(a.Schema)
	}
	return n
}
