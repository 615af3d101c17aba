package runcmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// terminal is a terminal's input as the prompter sees it: keys typed
// wait in it until a read takes them or the prompter drops them
// (discard), as a terminal's line discipline holds them. It records
// every read begun before the call shown had dropped what was typed.
type terminal struct {
	mu      sync.Mutex
	cond    *sync.Cond
	held    []byte
	ended   bool
	armed   bool // a prompt dropped what was typed, and no line was read since
	early   int  // reads begun when not armed
	reads   int  // reads begun
	shown   bytes.Buffer
	prompts int
	asked   chan struct{} // a prompt ("approve? ") was shown
	// hold, when set, keeps the next read that takes a line from
	// returning until it is closed, having said so on took: the reader
	// descheduled between the terminal's read and what follows it.
	hold chan struct{}
	took chan struct{}
}

func newTerminal() *terminal {
	t := &terminal{asked: make(chan struct{}, 16)}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *terminal) typeKeys(s string) {
	t.mu.Lock()
	t.held = append(t.held, s...)
	t.mu.Unlock()
	t.cond.Broadcast()
}

func (t *terminal) end() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
	t.cond.Broadcast()
}

func (t *terminal) discard() {
	t.mu.Lock()
	t.held = nil
	t.armed = true
	t.mu.Unlock()
}

// Read takes one line, as a terminal in canonical mode gives it.
func (t *terminal) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reads++
	if !t.armed {
		t.early++
	}
	for len(t.held) == 0 && !t.ended {
		t.cond.Wait()
	}
	if len(t.held) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(t.held, '\n') + 1
	if n == 0 {
		n = len(t.held)
	}
	n = copy(p, t.held[:n])
	t.held = t.held[n:]
	t.armed = false
	if h := t.hold; h != nil {
		t.hold = nil
		t.mu.Unlock()
		t.took <- struct{}{}
		<-h
		t.mu.Lock()
	}
	return n, nil
}

// Write is the terminal's screen.
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.shown.Write(p)
	n := strings.Count(t.shown.String(), "approve? ")
	more := n - t.prompts
	t.prompts = n
	t.mu.Unlock()
	for range more {
		t.asked <- struct{}{}
	}
	return len(p), nil
}

func askOf(p *prompter, key string) func(context.Context) (agentrt.ApprovalDecision, error) {
	return func(ctx context.Context) (agentrt.ApprovalDecision, error) {
		return p.ask(ctx, &agentrt.ApprovalRequest{Key: key, Tool: "git", Arguments: []byte(`{"sub":"push"}`), Why: "exec tool git", Mode: plan.ApproveAsk})
	}
}

type answer struct {
	d   agentrt.ApprovalDecision
	err error
}

func start(ctx context.Context, f func(context.Context) (agentrt.ApprovalDecision, error)) chan answer {
	c := make(chan answer, 1)
	go func() {
		d, err := f(ctx)
		c <- answer{d, err}
	}()
	return c
}

// TestPromptTakesOnlyKeysTypedAfterTheCall holds the prompt to its
// rule: keys typed before a call is shown (while agentc starts, or with
// the answer to the call before) never answer it, and the terminal is
// read only once a prompt has dropped them.
func TestPromptTakesOnlyKeysTypedAfterTheCall(t *testing.T) {
	term := newTerminal()
	p := &prompter{in: term, out: term, discard: term.discard}

	term.typeKeys("y\n") // while agentc starts
	first := start(context.Background(), askOf(p, "1.1"))
	<-term.asked
	term.typeKeys("n\ny\n") // the answer, and a second "y" with it
	if a := <-first; a.err != nil || a.d.Approved {
		t.Fatalf("first call: %+v, %v; want denied by the answer typed after it was shown", a.d, a.err)
	}

	second := start(context.Background(), askOf(p, "2.1"))
	<-term.asked
	term.typeKeys("maybe\n") // no answer: asked again
	<-term.asked
	term.typeKeys("no not now\n")
	if a := <-second; a.err != nil || a.d.Approved || a.d.Reason != "not now" {
		t.Fatalf("second call: %+v, %v; want denied with the reason typed after it was shown", a.d, a.err)
	}

	term.mu.Lock()
	early, reads := term.early, term.reads
	term.mu.Unlock()
	if early != 0 {
		t.Errorf("%d of %d reads of the terminal began before a prompt dropped what was typed", early, reads)
	}
}

// endedWhileShown is a prompter whose first call's run ended while the
// call was shown, its read of the terminal left in flight.
func endedWhileShown(t *testing.T) (*terminal, *prompter) {
	t.Helper()
	term := newTerminal()
	p := &prompter{in: term, out: term, discard: term.discard}
	ctx, cancel := context.WithCancel(context.Background())
	first := start(ctx, askOf(p, "1.1"))
	<-term.asked
	cancel()
	if a := <-first; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("first call: %+v, %v; want its run's end", a.d, a.err)
	}
	return term, p
}

// TestPromptAfterCallEnded: a call whose run ended while it was shown
// leaves its read of the terminal in flight; the next call takes nothing
// that read returns (it cannot tell when the line was typed) but asks
// again and takes the answer to that, and the end of the input refuses
// the call.
func TestPromptAfterCallEnded(t *testing.T) {
	term, p := endedWhileShown(t)

	second := start(context.Background(), askOf(p, "1.2"))
	<-term.asked
	term.typeKeys("y\n") // taken by the read in flight: asked again
	<-term.asked
	term.typeKeys("y\n")
	if a := <-second; a.err != nil || !a.d.Approved {
		t.Fatalf("second call: %+v, %v; want approved by the answer typed after it was shown", a.d, a.err)
	}

	third := start(context.Background(), askOf(p, "1.3"))
	<-term.asked
	term.end()
	var refused *agentrt.ApprovalRefused
	if a := <-third; !errors.As(a.err, &refused) || !strings.Contains(refused.Msg, "input ended") {
		t.Fatalf("third call: %+v, %v; want refused: the terminal's input ended", a.d, a.err)
	}
	term.mu.Lock()
	shown := term.shown.String()
	term.mu.Unlock()
	if !strings.Contains(shown, "answer again") {
		t.Errorf("the person was not told why the call was asked again:\n%s", shown)
	}
	// The end is kept: a later call is refused without a read.
	if _, err := askOf(p, "1.4")(context.Background()); !errors.As(err, &refused) {
		t.Fatalf("fourth call: %v; want refused", err)
	}
}

// TestPromptWaitingEndsWithItsRun: a call waiting for its turn at the
// terminal (a batch's items ask one at a time) ends when its run does (its
// deadline, an interrupt), never shown; it waited for the person to answer
// the call on the screen, past its run's deadline, and was then shown, a
// question for a run that had ended.
func TestPromptWaitingEndsWithItsRun(t *testing.T) {
	term := newTerminal()
	p := &prompter{in: term, out: term, discard: term.discard}
	first := start(context.Background(), askOf(p, "1.1"))
	<-term.asked
	ctx, cancel := context.WithCancel(context.Background())
	second := start(ctx, askOf(p, "2.1"))
	cancel()
	select {
	case a := <-second:
		if !errors.Is(a.err, context.Canceled) {
			t.Errorf("the waiting call: %+v, %v; want its run's end", a.d, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call did not end with its run: it waits for the answer to the call shown")
	}
	term.typeKeys("y\n")
	if a := <-first; a.err != nil || !a.d.Approved {
		t.Fatalf("the call shown: %+v, %v; want approved", a.d, a.err)
	}
	term.mu.Lock()
	defer term.mu.Unlock()
	if strings.Contains(term.shown.String(), "call 2.1") {
		t.Errorf("the call of the run that ended was shown:\n%s", term.shown.String())
	}
}

// TestPromptTakesNoLineReadBeforeTheCall: a call whose run ended while it
// was shown leaves its read of the terminal in flight, and a "y" typed for
// that call as its run ended is taken by that read. However late the
// reader notes the time of that read, the "y" is not the answer to the
// next call, which the person had not seen: the person is asked again.
func TestPromptTakesNoLineReadBeforeTheCall(t *testing.T) {
	term, p := endedWhileShown(t)

	release := make(chan struct{})
	term.mu.Lock()
	term.hold, term.took = release, make(chan struct{})
	term.mu.Unlock()
	term.typeKeys("y\n") // the answer to the first call, as its run ended
	<-term.took          // read before the next call is shown

	second := start(context.Background(), askOf(p, "2.1"))
	<-term.asked
	close(release) // the read returns once the call is shown
	select {
	case a := <-second:
		t.Fatalf("second call: %+v, %v; want asked again: the y was typed before it was shown", a.d, a.err)
	case <-term.asked:
	}
	term.typeKeys("n\n")
	if a := <-second; a.err != nil || a.d.Approved {
		t.Fatalf("second call: %+v, %v; want denied by the answer typed after it was asked again", a.d, a.err)
	}
}
