package runtime

import (
	"errors"
	"fmt"
	"slices"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
)

// Classes of a model call's failure, as a provider classifies it (see
// FailureClassOf). They decide whether a fallback model serves the call.
const (
	// FailureUnavailable is a call whose retries were spent on failures
	// worth another attempt: overload, 5xx, rate limits, timeouts, a
	// connection that failed.
	FailureUnavailable = "unavailable"
	// FailureNotFound is a model the provider does not serve (404).
	FailureNotFound = "not_found"
	// FailureTooLong is a request longer than the model's context.
	FailureTooLong = "too_long"
	// FailureAuth is a credential the provider refused (401, 403).
	FailureAuth = "auth"
	// FailureQuota is a quota or a balance spent, which waiting does not
	// mend.
	FailureQuota = "quota"
)

// FailureClassOf returns the class of a model call's failure: that of the
// first error in err's chain with a method FailureClass() string, or ""
// when none says. Providers' errors say; a failure a journal recorded
// keeps its class.
func FailureClassOf(err error) string {
	var c interface{ FailureClass() string }
	if errors.As(err, &c) {
		return c.FailureClass()
	}
	return ""
}

// fallsBack reports whether a failure of class is one the plan's
// fallbacks serve: always unavailable, not found and too long; auth and
// quota only when the manifest says.
func fallsBack(fb *plan.Fallback, class string) bool {
	switch class {
	case FailureUnavailable, FailureNotFound, FailureTooLong:
		return true
	case FailureAuth:
		return fb != nil && slices.Contains(fb.AlsoOn, plan.FallbackOnAuth)
	case FailureQuota:
		return fb != nil && slices.Contains(fb.AlsoOn, plan.FallbackOnQuota)
	}
	return false
}

// FallbackReport is a model call that went to a fallback model.
type FallbackReport struct {
	Round int      `json:"round"`
	From  ModelRef `json:"from"`
	To    ModelRef `json:"to"`
	// Class is why: the failure's class (FailureUnavailable, …), and
	// Error the failure.
	Class string `json:"class"`
	Error string `json:"error"`
}

// makeLanes makes the runners of the plan's fallbacks, one a fallback,
// each the plan as if its manifest named that model, answered by the
// model opts.FallbackModel makes for it. A run against the test model,
// which never fails, has none.
func (r *Runner) makeLanes(p *plan.Plan, opts Options) error {
	var named []string
	if fb := p.Agent.Model.Fallback; fb != nil {
		named = fb.Models
	}
	if len(named) != len(p.Fallbacks) {
		return &ConfigError{fmt.Sprintf("the plan holds %d fallback models, and its model.fallback names %d: compile the manifest again", len(p.Fallbacks), len(named))}
	}
	for i, fb := range p.Fallbacks {
		if fb.Ref() != named[i] {
			return &ConfigError{fmt.Sprintf("the plan's fallback %d is %s, and its model.fallback names %s: compile the manifest again", i+1, fb.Ref(), named[i])}
		}
	}
	if len(p.Fallbacks) == 0 || opts.Provider == "test" {
		return nil
	}
	if opts.FallbackModel == nil {
		return &ConfigError{fmt.Sprintf("the plan has %d fallback models and the host gave no way to make them (Options.FallbackModel)", len(p.Fallbacks))}
	}
	if len(p.Fallbacks) > plan.MaxFallbacks {
		return &ConfigError{fmt.Sprintf("the plan has %d fallback models, more than %d", len(p.Fallbacks), plan.MaxFallbacks)}
	}
	r.lanes = []*Runner{r}
	for i, fb := range p.Fallbacks {
		if fb.Model.Provider == "" || fb.Model.Name == "" || fb.Model.Provider == "test" {
			return &ConfigError{fmt.Sprintf("fallback %d names no model", i+1)}
		}
		if (fb.Output == nil) != (p.Output == nil) {
			return &ConfigError{fmt.Sprintf("fallback %s: its answer format does not match the plan's", fb.Ref())}
		}
		q := p.FallbackPlan(i)
		o := opts
		o.Provider, o.FallbackModel = "", nil
		m, err := opts.FallbackModel(q)
		if err != nil {
			return &ConfigError{fmt.Sprintf("fallback %s: %v", fb.Ref(), err)}
		}
		if o.Model = m; m == nil {
			return &ConfigError{fmt.Sprintf("fallback %s: no model", fb.Ref())}
		}
		lane, err := New(q, o)
		if err != nil {
			return &ConfigError{fmt.Sprintf("fallback %s: %v", fb.Ref(), err)}
		}
		if opts.Strategy == nil && fb.Model.Provider != p.Agent.Model.Provider {
			lane.strategy = builtin{agent: lane.agent, foreign: true}
		}
		if lane.outputTool != r.outputTool {
			return &ConfigError{fmt.Sprintf("fallback %s: its output tool is %q, the plan's %q", fb.Ref(), lane.outputTool, r.outputTool)}
		}
		r.lanes = append(r.lanes, lane)
	}
	return nil
}

// fallBack moves the run to the next model of its chain after err ended
// a call of round, when err is a failure a fallback serves and a model is
// left; it reports whether it did, and has said so.
func (x *run) fallBack(round int, rr *RoundReport, err error) bool {
	if x.lane+1 >= len(x.models) || x.interrupted() || x.isDeadline(err) {
		return false
	}
	var d *Divergence
	if errors.As(err, &d) {
		return false
	}
	class := FailureClassOf(err)
	if !fallsBack(x.models[0].agent.Model.Fallback, class) {
		return false
	}
	from := ModelRef{Provider: x.provider, Model: x.model}
	x.lane++
	next := *x.models[x.lane]
	// The run's own options (its journal, events, pool), with the
	// fallback's model.
	model := next.opts.Model
	next.opts = x.Runner.opts
	next.opts.Model, next.opts.Provider = model, ""
	x.Runner = &next
	x.provider, x.model, x.reason = next.agent.Model.Provider, next.agent.Model.Name, next.agent.Model.Reasoning
	to := ModelRef{Provider: x.provider, Model: x.model}
	msg := x.opts.Secrets.String(err.Error())
	fr := FallbackReport{Round: round, From: from, To: to, Class: class, Error: msg}
	x.rep.Fallbacks = append(x.rep.Fallbacks, fr)
	rr.Fallbacks = append(rr.Fallbacks, fr)
	rr.Model, rr.Provider = x.model, x.provider
	x.emit(Event{Type: EventModelFallback, Round: round, Model: from.Model, Provider: to.Provider, Name: to.Model,
		Message: fmt.Sprintf("%s %s failed (%s): %s; falling back to %s %s", from.Provider, from.Model, class, msg, to.Provider, to.Model)})
	return true
}

// modelKey is the journal key of a round's model call: the round's, or,
// for a call a fallback makes after the round's first call failed, one
// under that call's key with the fallback's place in the chain.
func (x *run) modelKey(round int, fallback bool) journal.Key {
	k := journal.Key{Path: x.jpath, Round: round}
	if fallback {
		return journal.Key{Path: k.String(), Ordinal: x.lane}
	}
	return k
}
