package compile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cuelang.org/go/cue"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Build checks an agent and compiles it into a sealed plan. It returns the
// diagnostics of Check but for those the agent's configuration silences
// (its ignore list does not apply: that is what vet leaves alone); the
// plan is nil when any of them is an error. The error result is for a
// configuration file that does not read (a *ConfigError) and what the
// checks cannot foresee: a callee that changed between check and build,
// or a defect in agentc.
func (cp *Compiler) Build(inst *manifest.Instance) (*plan.Plan, []Diagnostic, error) {
	cfg, err := cp.configFor(inst.Files)
	if err != nil {
		return nil, nil, err
	}
	c := cp.check(inst)
	ds, _ := cfg.filter(c.ds)
	if hasError(ds) {
		return nil, ds, nil
	}
	fail := func(err error) (*plan.Plan, []Diagnostic, error) {
		return nil, ds, fmt.Errorf("%s: %w", inst.Source, err)
	}
	agent, err := toAgent(inst.Manifest)
	if err != nil {
		return fail(err)
	}
	p := &plan.Plan{Agent: *agent, Sources: sources(inst)}
	for name, t := range agent.Capabilities.Tools {
		if t.Kind != "agent" {
			continue
		}
		full := t.Path
		if !filepath.IsAbs(full) {
			full = filepath.Join(baseDir(inst.Value.LookupPath(cue.MakePath(cue.Str("capabilities"), cue.Str("tools"), cue.Str(name), cue.Str("path"))).Pos().Filename()), full)
		}
		callee, err := cp.callee(full)
		if err != nil {
			return fail(fmt.Errorf("tool %q: %v", name, err))
		}
		if p.Callees == nil {
			p.Callees = map[string]plan.Callee{}
		}
		p.Callees[name] = plan.Callee{Path: t.Path, Contract: callee.contract}
	}
	if agent.Output != nil {
		if _, ok := Profiles[agent.Model.Provider]; ok {
			if c.lowering == nil {
				return fail(errors.New("the output schema was not lowered to the provider's dialect"))
			}
			p.Output = c.lowering
			if p.Output.Mode == plan.ModeTool {
				if p.Output.Tool, err = plan.OutputToolName(agent); err != nil {
					return fail(err)
				}
			}
		}
	}
	if err := p.Seal(); err != nil {
		return fail(err)
	}
	return p, ds, nil
}

// toAgent returns the plan's agent for a decoded manifest (the same type),
// with what may be written several ways with one meaning normalised:
// durations. The manifest is left as it was.
func toAgent(m *manifest.Manifest) (*plan.Agent, error) {
	a := *m
	a.Capabilities.Tools = maps.Clone(m.Capabilities.Tools)
	norm := func(field string, s *string) error {
		if *s == "" {
			return nil
		}
		d, err := time.ParseDuration(*s)
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		*s = d.String()
		return nil
	}
	if err := norm("budgets.deadline", &a.Budgets.Deadline); err != nil {
		return nil, err
	}
	for name, t := range a.Capabilities.Tools {
		if err := norm("capabilities.tools."+name+".timeout", &t.Timeout); err != nil {
			return nil, err
		}
		a.Capabilities.Tools[name] = t
	}
	return &a, nil
}

// sourcePaths are the manifest paths whose positions a plan keeps for
// run-time messages; every tool is added.
var sourcePaths = []string{"name", "instructions", "prompt", "input.schema", "output.schema",
	"budgets.deadline", "budgets.tools", "budgets.tokens", "budgets.rounds", "budgets.answer_turns", "budgets.answer_reserve"}

// sources records where an agent's parts were written, with file names
// relative to the agent's directory so the plan is the same on every
// machine.
func sources(inst *manifest.Instance) map[string]string {
	dir := ""
	if len(inst.Files) > 0 && inst.Files[0] != "-" {
		if abs, err := filepath.Abs(filepath.Dir(inst.Files[0])); err == nil {
			dir = abs
		}
	}
	paths := append([]string(nil), sourcePaths...)
	it, err := inst.Value.LookupPath(cue.ParsePath("capabilities.tools")).Fields()
	if err == nil {
		for it.Next() {
			paths = append(paths, "capabilities.tools."+it.Selector().String())
		}
	}
	out := map[string]string{}
	for _, p := range paths {
		v := inst.Value.LookupPath(cue.ParsePath(p))
		pos := v.Pos()
		if !v.Exists() || !pos.IsValid() {
			continue
		}
		name := pos.Filename()
		if dir != "" {
			abs, err := filepath.Abs(name)
			if err == nil {
				if rel, err := filepath.Rel(dir, abs); err == nil {
					name = filepath.ToSlash(rel)
				}
			}
		}
		out[p] = fmt.Sprintf("%s:%d:%d", name, pos.Line(), pos.Column())
	}
	return out
}

// calleeInfo is what a caller needs of an agent it calls.
type calleeInfo struct {
	contract digest.Digest
	err      error
}

// callee loads the agent at a path (a manifest, a package directory or a
// compiled plan) and returns its contract digest. Results are cached per
// path. Only the callee's own contract matters, so callees of callees are
// not loaded and a cycle of agents calling each other cannot loop.
func (cp *Compiler) callee(path string) (calleeInfo, error) {
	key := filepath.Clean(path)
	if ci, ok := cp.callees[key]; ok {
		return ci, ci.err
	}
	ci := cp.loadCallee(key)
	cp.callees[key] = ci
	return ci, ci.err
}

func (cp *Compiler) loadCallee(path string) calleeInfo {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return calleeInfo{err: fmt.Errorf("cannot be read: %w", err)}
	}
	if !fi.IsDir() && strings.EqualFold(filepath.Ext(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return calleeInfo{err: err}
		}
		if plan.IsPlan(data) {
			p, err := plan.Read(path, data)
			if err != nil {
				return calleeInfo{err: err}
			}
			if p.Agent.Output == nil {
				return calleeInfo{err: errors.New("it declares no output, so it has no answer to return")}
			}
			return calleeInfo{contract: p.Digests.Contract}
		}
	}
	insts, err := cp.loader.Load([]string{path})
	if err != nil {
		return calleeInfo{err: err}
	}
	if len(insts) != 1 {
		return calleeInfo{err: fmt.Errorf("names %d agents, want one", len(insts))}
	}
	inst := insts[0]
	if len(inst.Errors) > 0 {
		return calleeInfo{err: fmt.Errorf("it does not load (run agentc vet on it): %s", inst.Errors[0].Msg)}
	}
	if inst.Manifest.Output == nil {
		return calleeInfo{err: errors.New("it declares no output, so it has no answer to return")}
	}
	agent, err := toAgent(inst.Manifest)
	if err != nil {
		return calleeInfo{err: err}
	}
	d, err := plan.ContractDigest(agent)
	if err != nil {
		return calleeInfo{err: err}
	}
	return calleeInfo{contract: d}
}
