package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
)

// exitUnapproved is the exit code of a run that ended on a call that
// needed approval no one could give: no terminal to ask on and no
// --approve policy.
const exitUnapproved = 9

// The values of --approve.
const (
	approveAsk = "ask" // ask on a terminal; refuse off one
	approveYes = "yes" // approve every call that needs approval
	approveNo  = "no"  // deny every call that needs approval
)

// RulesFunc puts the decisions a program makes without asking (agentc's
// approve_if, which needs CUE) before next.
type RulesFunc func(next agentrt.Approver) agentrt.Approver

// SetApproveRules sets what decides calls before --approve does; nil (the
// runtime program) asks about every call that needs approval.
func (f *Flags) SetApproveRules(r RulesFunc) { f.rules = r }

// approver is the run's approver for --approve: a policy, or a prompt
// on the terminal (standard input and standard error), serialised across
// the runs of a batch.
func approver(e Env, f Flags) (agentrt.Approver, error) {
	var a agentrt.Approver
	switch f.approve {
	case approveYes:
		a = func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPolicy, Reason: "--approve yes"}, nil
		}
	case approveNo:
		a = func(context.Context, *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
			return agentrt.ApprovalDecision{By: agentrt.ByPolicy, Reason: "agentc run --approve no denies every call that needs approval"}, nil
		}
	case approveAsk, "":
		if !asksOnTerminal(e, f) {
			why := "there is no terminal to ask on: run it on one"
			if f.batch == "-" && e.stderrTTY {
				// The terminal's lines are the batch's items: an answer
				// would be read as one.
				why = "standard input is the batch's items (--batch -), not a terminal to ask on: give them in a file"
			}
			a = func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
				return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key,
					Msg: req.Why + "; " + why + ", or pass --approve yes or --approve no"}
			}
		} else {
			in := e.Stdin.(*os.File)
			a = (&prompter{in: in, out: e.Stderr, discard: func() { discardTyped(in) }}).ask
		}
	default:
		return nil, UsageError("--approve %q: want ask, yes or no", f.approve)
	}
	if f.rules != nil {
		a = f.rules(a)
	}
	return a, nil
}

// asksOnTerminal says a call that needs approval is asked about on the
// terminal: --approve ask (the default), with standard input and error
// on one, and standard input not a batch's items.
func asksOnTerminal(e Env, f Flags) bool {
	if f.approve != approveAsk && f.approve != "" || f.batch == "-" {
		return false
	}
	in, ok := e.Stdin.(*os.File)
	return ok && IsTerminal(in) && e.stderrTTY
}

// ShownArguments is a call's arguments as a person deciding it reads
// them (the prompt, agentc approve's listing): canonical JSON on one line,
// with nothing a terminal would act on or hide, on one screen (a long run
// of blanks counted, long arguments cut in the middle, saying how much;
// termtext.Shown); text that is not JSON is shown as a JSON string, so
// marked.
func ShownArguments(args json.RawMessage, text *string) string {
	if text != nil {
		args = json.RawMessage(*text)
	}
	s, ok := termtext.Shown(args)
	if !ok {
		s += " (not JSON)"
	}
	return s
}

// prompter asks the person at the terminal, one call at a time. An
// answer is to the call shown: what was typed before it was (a second
// "y" with the answer to the call before, keys pressed while agentc
// started) is dropped, never taken for the answer to a call the person
// has not seen.
//
// The terminal is read only while a call is shown: a read asked for
// once the call is on the screen and what the terminal held dropped
// (discard), so a key typed before stays in the terminal until it is
// dropped, and no read of agentc's races the drop. The one read that
// can be in flight when a call is shown is one a call before it asked
// for and never got (its run ended while it was shown). What it returns
// answers nothing: it may have taken a line typed for that call before
// this one was shown, and noted the time only after (the reader is not
// run at once), so the time cannot tell. Noted before the call was shown,
// the line is dropped; after, the person is asked again.
type prompter struct {
	in  io.Reader
	out io.Writer
	// discard drops what the terminal holds typed and not yet read.
	discard func()
	// turn is held by the call on the screen: the others wait for it, each
	// until its run ends (a batch's items ask one at a time).
	turn     chan struct{}
	turnOnce sync.Once
	once     sync.Once
	want     chan struct{} // a call asks for one read of the terminal
	got      chan read     // what that read returned
	reading  bool          // a read was asked for and has not returned
	ended    error         // the terminal's input ended (io.EOF or an error)
}

// read is what one read of the terminal returned, and when.
type read struct {
	text []byte
	err  error
	at   time.Time
}

// maxAnswer is the longest line taken as an answer; a longer one is
// dropped as no answer (a terminal's line is at most 4 KiB).
const maxAnswer = 64 << 10

func (p *prompter) ask(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
	p.turnOnce.Do(func() { p.turn = make(chan struct{}, 1) })
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return agentrt.ApprovalDecision{}, ctx.Err()
	}
	defer func() { <-p.turn }()
	if err := ctx.Err(); err != nil {
		return agentrt.ApprovalDecision{}, err // the turn came as its run ended: not shown
	}
	p.once.Do(func() {
		p.want, p.got = make(chan struct{}), make(chan read, 1)
		go func() {
			buf := make([]byte, 4096)
			for range p.want {
				n, err := p.in.Read(buf)
				p.got <- read{bytes.Clone(buf[:n]), err, time.Now()}
				if err != nil {
					return
				}
			}
		}()
	})
	args := ShownArguments(req.Arguments, req.ArgumentsText)
	who := ""
	if req.Agent != "" {
		who = " (agent " + termtext.Escape(req.Agent) + ")"
	}
	if n := batch.LineOf(ctx); n > 0 {
		// The items running at once ask one at a time, each under the
		// same keys: the person is told which item asks.
		who += fmt.Sprintf(" (batch line %d)", n)
	}
	fmt.Fprintf(p.out, "agentc: call %s of tool %s%s needs approval: %s\nagentc:   arguments: %s\n",
		termtext.Escape(req.Key), termtext.Escape(req.Tool), who, termtext.Escape(req.Why), args)
	choices := "[y]es, [n]o (optionally with a reason), [a]lways for this run"
	if req.Mode == plan.ApproveAlways {
		choices = "[y]es, [n]o (optionally with a reason)"
	}
	ended := func() (agentrt.ApprovalDecision, error) {
		fmt.Fprintln(p.out)
		return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; the terminal's input ended before an answer"}
	}
	var pending []byte // typed since the call was shown, short of a line's end
	for {
		// Only what is typed from now on answers: the terminal's unread
		// input is dropped, and what agentc read before now is.
		if p.discard != nil {
			p.discard()
		}
		shown := time.Now()
		fmt.Fprintf(p.out, "agentc: approve? %s: ", choices)
		var line string
		ours := false // the read in flight was asked for once this prompt was shown
		for read := false; !read; {
			if p.ended != nil {
				return ended()
			}
			if !p.reading {
				p.want <- struct{}{}
				p.reading, ours = true, true
			}
			select {
			case <-ctx.Done():
				fmt.Fprintln(p.out)
				return agentrt.ApprovalDecision{}, ctx.Err()
			case r := <-p.got:
				p.reading = false
				if r.err != nil {
					p.ended = r.err
				}
				if !ours && r.at.Before(shown) {
					continue // read for a call before this one
				}
				if !ours && len(r.text) > 0 {
					// Read for the call before, perhaps before this one was
					// shown: asked again, the rest of its line dropped.
					fmt.Fprintln(p.out, "agentc: a line read as the call before ended may have been typed for it: answer again")
					line, read = "", true
					continue
				}
				pending = append(pending, r.text...)
				if i := bytes.IndexByte(pending, '\n'); i >= 0 {
					// A line typed with the answer, after it, is
					// dropped with the read: the next prompt is answered anew.
					line, read = string(pending[:i]), true
				} else if len(pending) > maxAnswer {
					pending = nil
				}
			}
		}
		pending = nil
		word, reason, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToLower(word) {
		case "y", "yes":
			return agentrt.ApprovalDecision{Approved: true, By: agentrt.ByPerson}, nil
		case "a", "always":
			if req.Mode != plan.ApproveAlways {
				return agentrt.ApprovalDecision{Approved: true, ForRun: true, By: agentrt.ByPerson}, nil
			}
		case "n", "no":
			reason = strings.TrimSpace(reason)
			if reason == "" {
				reason = "the person running agentc said no"
			}
			return agentrt.ApprovalDecision{By: agentrt.ByPerson, Reason: reason}, nil
		}
	}
}
