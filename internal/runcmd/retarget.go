package runcmd

import (
	"fmt"
	"strings"

	"agentc.dev/agentc/plan"
)

// RetargetFunc makes a plan for another model, as if its manifest named
// it (see compile.Retarget): provider and model, model "" keeping the
// agent's own name.
type RetargetFunc func(p *plan.Plan, provider, model string) (*plan.Plan, error)

// SetRetarget sets what makes a plan for the model --model names; nil
// (the runtime program, which links no compiler) runs a plan only
// against the model it was compiled for, or the test model.
func (f *Flags) SetRetarget(r RetargetFunc) { f.retarget = r }

// parseModel reads --model: "test", a provider, or PROVIDER:MODEL.
func parseModel(flag string) (provider, model string, err error) {
	provider, model, named := strings.Cut(flag, ":")
	switch {
	case provider == "":
		return "", "", UsageError("--model %q: give a provider, PROVIDER:MODEL (openai:gpt-4o-2024-08-06), or test", flag)
	case named && model == "":
		return "", "", UsageError("--model %q: name the model after the colon, or leave the colon out to keep the agent's", flag)
	case provider == "test" && named:
		return "", "", UsageError("--model %q: the test model has no models to choose from; give --model test", flag)
	}
	if err := plan.CheckModelName(flag); err != nil {
		return "", "", UsageError("--model %q: %v", flag, err)
	}
	return provider, model, nil
}

// retarget returns the plan a run with --model runs, and the flags with
// --model resolved into it: the agent's own plan when --model names its
// own model, or test (which stands in for any); else the plan made for
// the model named, said on standard error. What that model cannot take
// is a usage error.
func retarget(e Env, p *plan.Plan, f Flags) (*plan.Plan, Flags, error) {
	if f.model == "" {
		return p, f, nil
	}
	provider, model, err := parseModel(f.model)
	if err != nil || provider == "test" {
		return p, f, err
	}
	own := p.Agent.Model
	if provider == own.Provider && (model == "" || model == own.Name) {
		f.model = ""
		return p, f, nil
	}
	if f.retarget == nil {
		return nil, f, UsageError("--model %s: this plan was compiled for %s %s, and %s runs a plan only against its own model or the test model: compile the manifest for the model (agentc run or agentc compile with --model)", f.model, own.Provider, own.Name, RuntimeProgram)
	}
	q, err := f.retarget(p, provider, model)
	if err != nil {
		return nil, f, UsageError("--model %s: %v", f.model, err)
	}
	fmt.Fprintf(e.Stderr, "agentc: --model: agent %s runs against %s %s in place of %s %s (plan %s)\n", p.Agent.Name, q.Agent.Model.Provider, q.Agent.Model.Name, own.Provider, own.Name, q.Digests.Plan)
	f.model = ""
	return q, f, nil
}
