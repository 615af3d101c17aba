package runtime

import (
	"encoding/json"

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

// Plan returns the plan the runner runs. It is shared: the caller must
// not change it.
func (r *Runner) Plan() *plan.Plan { return r.plan }

// CheckInput returns the error Run would return for input, an
// *InputError, without running: a host checks an input before it keeps
// anything for the run. An input that holds files puts them in the
// runner's file store, as Run would.
func (r *Runner) CheckInput(input json.RawMessage) error {
	_, err := r.userMessage(input)
	return err
}
