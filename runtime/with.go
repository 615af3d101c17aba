package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"agentc.dev/agentc/plan"
)

// WithJournal returns a runner of the same plan whose runs use journal j
// (nil: none) in place of Options.Journal: a batch gives each item its own.
// The two share everything compiled.
func (r *Runner) WithJournal(j *Journal) *Runner {
	c := *r
	c.opts.Journal = j
	return &c
}

// WithEvents returns a runner of the same plan whose runs send their
// events to f (nil: dropped) in place of Options.Events.
func (r *Runner) WithEvents(f func(Event)) *Runner {
	c := *r
	c.opts.Events = f
	return &c
}

// WithInputRead returns a runner of the same plan whose runs call f once
// they have read their input (decoded it, checked it against the input
// schema and rendered the prompt, or failed to), before anything else: a
// host that runs many at once reads only so many inputs together, since
// reading one holds many times its bytes (jsonshape.Weight), and the run
// after holds only what the prompt renders.
func (r *Runner) WithInputRead(f func()) *Runner {
	c := *r
	c.inputRead = f
	return &c
}

// Plan returns the plan the runner runs. It is shared: the caller must
// not change it.
func (r *Runner) Plan() *plan.Plan { return r.plan }

// CheckInput returns the error Run would return for input, an
// *InputError, without running: a host checks an input before it keeps
// anything for the run. An input that holds files puts them in the
// runner's file store, as Run would.
func (r *Runner) CheckInput(input json.RawMessage) error {
	_, err := r.userMessage(context.Background(), input)
	return err
}

// WithBudgets returns a runner of the same plan whose runs are bound by b
// where b is tighter than the runner's own budgets (the plan's, and
// Options.Budgets): a caller's bound can narrow a run, never widen it. A
// bound that is not one (a deadline or a token budget not above zero, a
// negative tool budget, rounds not above zero) is an error.
func (r *Runner) WithBudgets(b Overrides) (*Runner, error) {
	switch {
	case b.Deadline != nil && *b.Deadline <= 0:
		return nil, &ConfigError{fmt.Sprintf("the deadline %s is not above zero", *b.Deadline)}
	case b.Tools != nil && *b.Tools < 0:
		return nil, &ConfigError{fmt.Sprintf("the tool budget %d is below zero", *b.Tools)}
	case b.Tokens != nil && *b.Tokens <= 0:
		return nil, &ConfigError{fmt.Sprintf("the token budget %d is not above zero", *b.Tokens)}
	case b.Rounds != nil && *b.Rounds <= 0:
		return nil, &ConfigError{fmt.Sprintf("the rounds bound %d is not above zero", *b.Rounds)}
	}
	c := *r
	c.tighten(b)
	if len(r.lanes) > 0 {
		// The fallbacks' runners carry the run's bounds on after a fallback.
		c.lanes = make([]*Runner, len(r.lanes))
		c.lanes[0] = &c
		for i, l := range r.lanes[1:] {
			lc := *l
			lc.tighten(b)
			c.lanes[i+1] = &lc
		}
	}
	return &c, nil
}

// tighten narrows the runner's budgets to b's where b's are tighter.
func (r *Runner) tighten(b Overrides) {
	if b.Deadline != nil && (r.deadline == 0 || *b.Deadline < r.deadline) {
		r.deadline = *b.Deadline
	}
	if b.Tools != nil && (r.toolBudget < 0 || *b.Tools < r.toolBudget) {
		r.toolBudget = *b.Tools
	}
	if b.Tokens != nil && (r.tokens == 0 || *b.Tokens < r.tokens) {
		r.tokens = *b.Tokens
	}
	if b.Rounds != nil && *b.Rounds < r.rounds {
		r.rounds = *b.Rounds
	}
}

// AlsoEvents returns a runner of the same plan whose runs send their
// events to f as well as where the runner sends them.
func (r *Runner) AlsoEvents(f func(Event)) *Runner {
	prev := r.opts.Events
	if prev == nil {
		return r.WithEvents(f)
	}
	return r.WithEvents(func(ev Event) {
		prev(ev)
		f(ev)
	})
}
