package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"agentc.dev/agentc/plan"
)

// Retarget returns p made for another model, as if its manifest named
// it: provider and model (model "" keeps the agent's own name, for its own
// provider only). The answer format is lowered again for the provider's
// dialect, and what vet would refuse for that model is an error naming
// it: a setting the model does not take (MODEL_SETTING), a file input of
// a type it does not take (INPUT_FILE_PROVIDER), an answer its
// structured output cannot carry as the output asks (OUTPUT_MODE,
// OUTPUT_ENFORCE). A manifest's base_url and api belong to its own
// provider and are dropped for another. The plan is sealed again: its plan digest is
// the retargeted agent's; its contract digest does not change. The
// agents p calls keep their own models.
func Retarget(p *plan.Plan, provider, model string) (*plan.Plan, error) {
	own := p.Agent.Model
	if model == "" {
		if provider != own.Provider {
			return nil, fmt.Errorf("the agent's model is %s %s; name a model of %s too (%s:MODEL)", own.Provider, own.Name, provider, provider)
		}
		model = own.Name
	}
	if provider == own.Provider && model == own.Name {
		return p, nil
	}
	prof, ok := Profiles[provider]
	if !ok || provider == "test" {
		return nil, fmt.Errorf("unknown provider %q (agentc runs %s)", provider, strings.Join(RunProviders(), ", "))
	}
	q := *p
	q.Agent = p.Agent
	q.Agent.Model.Provider, q.Agent.Model.Name = provider, model
	if provider != own.Provider {
		// Both belong to the agent's own provider.
		q.Agent.Model.BaseURL, q.Agent.Model.API = "", ""
	}
	target := provider + " " + model
	var problems []string
	for _, s := range plan.CheckModelSettings(q.Agent.Model) {
		if !s.Warning {
			problems = append(problems, fmt.Sprintf("model.%s: %s [%s]", s.Field, s.Msg, CodeModelSetting))
		}
	}
	if in := q.Agent.Input; in != nil {
		fields, err := plan.FileFields(in.Schema)
		if err != nil {
			return nil, err
		}
		for _, f := range fields {
			if plan.TextOnly(provider, model) {
				problems = append(problems, fmt.Sprintf("input %s: %s takes no file but text [%s]", f.Name, target, CodeInputFileProvider))
				break
			}
			for _, mt := range f.Expand() {
				if _, ok := plan.FileLimits[provider][mt]; !ok {
					problems = append(problems, fmt.Sprintf("input %s: %s does not take %s files [%s]", f.Name, provider, mt, CodeInputFileProvider))
				}
			}
		}
	}
	if o := q.Agent.Output; o != nil {
		var doc any
		if err := json.Unmarshal(o.Schema, &doc); err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		l, err := Lower(prof, o.Mode, doc)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		if (o.Mode == "" || o.Mode == plan.ModeAuto) && len(q.Fallbacks) > 0 {
			// The fallbacks are lowered again for this chain, which
			// answers one way (checkFallbacks).
			if l, q.Fallbacks, err = chainOutputs(prof, doc, &q.Agent, l, q.Fallbacks); err != nil {
				return nil, fmt.Errorf("output schema: %w", err)
			}
		}
		switch {
		case !l.Strict && l.Mode == plan.ModeNative && prof.NativeNeedsStrict:
			problems = append(problems, fmt.Sprintf("output.mode is \"native\", but %s's structured output cannot take this schema (%s) [%s]", provider, l.Reason, CodeOutputMode))
		case !l.Strict && o.Enforce == "provider":
			problems = append(problems, fmt.Sprintf("output.enforce is \"provider\", and %s cannot enforce this schema while generating (%s) [%s]", provider, l.Reason, CodeOutputEnforce))
		case o.Enforce == "provider" && len(l.Local) > 0:
			problems = append(problems, fmt.Sprintf("output.enforce is \"provider\", and %s cannot enforce %q at %s while generating [%s]", provider, l.Local[0].Keyword, orRoot(l.Local[0].Pointer), CodeOutputEnforce))
		}
		if l.Mode == plan.ModeTool {
			if l.Tool, err = plan.OutputToolName(&q.Agent); err != nil {
				return nil, err
			}
		}
		q.Output = l
	}
	if len(problems) > 0 {
		return nil, errors.New("for " + target + ": " + strings.Join(problems, "; "))
	}
	var err error
	if q.ToolInputs, err = LowerToolInputs(provider, q.Agent.Capabilities.Tools); err != nil {
		return nil, err
	}
	if err := q.Seal(); err != nil {
		return nil, err
	}
	return &q, nil
}

// chainOutputs lowers the output schema doc for each fallback as
// output.mode auto would, beside own, the lowering for prof, and holds the
// chain to one answer mode as checkFallbacks does: where the models would
// answer differently, every one, prof's too, answers by the output tool.
// It returns own's lowering and the fallbacks anew.
func chainOutputs(prof Profile, doc any, agent *plan.Agent, own *plan.Lowering, fallbacks []plan.FallbackModel) (*plan.Lowering, []plan.FallbackModel, error) {
	out := slices.Clone(fallbacks)
	lowerAll := func(mode string) error {
		for i, f := range out {
			if f.Output == nil {
				continue
			}
			fp, ok := Profiles[f.Model.Provider]
			if !ok || fp.Provider == "test" {
				return fmt.Errorf("fallback %s: unknown provider", f.Ref())
			}
			l, err := Lower(fp, mode, doc)
			if err != nil {
				return err
			}
			if l.Mode == plan.ModeTool {
				if l.Tool, err = plan.OutputToolName(agent); err != nil {
					return err
				}
			}
			out[i].Output = l
		}
		return nil
	}
	if err := lowerAll(plan.ModeAuto); err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(out, func(f plan.FallbackModel) bool { return f.Output != nil && f.Output.Mode != own.Mode }) {
		return own, out, nil
	}
	own, err := Lower(prof, plan.ModeTool, doc)
	if err != nil {
		return nil, nil, err
	}
	if err := lowerAll(plan.ModeTool); err != nil {
		return nil, nil, err
	}
	return own, out, nil
}

// RunProviders are the providers a run may name, sorted: those with a
// dialect, but the test model, which stands in for any.
func RunProviders() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(Profiles)) {
		if name != "test" {
			out = append(out, name)
		}
	}
	return out
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}
