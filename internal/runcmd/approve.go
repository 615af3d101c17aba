package runcmd

import (
	"bufio"
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
		in, ok := e.Stdin.(*os.File)
		if !ok || !IsTerminal(in) || !e.stderrTTY {
			a = func(_ context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
				return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key,
					Msg: req.Why + "; there is no terminal to ask on: run it on one, or pass --approve yes or --approve no"}
			}
		} else {
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
type prompter struct {
	in  io.Reader
	out io.Writer
	// discard drops what the terminal holds typed and not yet read.
	discard func()
	mu      sync.Mutex
	once    sync.Once
	lines   chan typed // closed at the end of the input
}

// typed is a line of the terminal's input and when agentc read it.
type typed struct {
	text string
	at   time.Time
}

// readTime is a reader that keeps when it last read something: a line's
// time is that of the read that completed it.
type readTime struct {
	r    io.Reader
	last time.Time
}

func (t *readTime) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.last = time.Now()
	}
	return n, err
}

func (p *prompter) ask(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.once.Do(func() {
		p.lines = make(chan typed)
		go func() {
			defer close(p.lines)
			in := &readTime{r: p.in}
			sc := bufio.NewScanner(in)
			for sc.Scan() {
				p.lines <- typed{sc.Text(), in.last}
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
	// Only what is typed from now on answers this call: the terminal's
	// unread input is dropped, and a line read before now is skipped.
	if p.discard != nil {
		p.discard()
	}
	shown := time.Now()
	choices := "[y]es, [n]o (optionally with a reason), [a]lways for this run"
	if req.Mode == plan.ApproveAlways {
		choices = "[y]es, [n]o (optionally with a reason)"
	}
	for {
		fmt.Fprintf(p.out, "agentc: approve? %s: ", choices)
		var line string
		for read := false; !read; {
			select {
			case <-ctx.Done():
				fmt.Fprintln(p.out)
				return agentrt.ApprovalDecision{}, ctx.Err()
			case l, ok := <-p.lines:
				if !ok {
					fmt.Fprintln(p.out)
					return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key, Msg: req.Why + "; the terminal's input ended before an answer"}
				}
				line, read = l.text, !l.at.Before(shown)
			}
		}
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
