package compile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// Build checks an agent and compiles it into a sealed plan, with the plans
// of the agents it calls compiled into it. It returns the diagnostics of
// Check but for those the agent's configuration silences (its ignore list
// does not apply: that is what vet leaves alone); the plan is nil when any
// of them is an error. The error result is for a configuration file that
// does not read (a *ConfigError) and what the checks cannot foresee: a
// defect in agentc.
func (cp *Compiler) Build(inst *manifest.Instance) (*plan.Plan, []Diagnostic, error) {
	// The configuration first: one that does not read fails before any
	// agent, this one's callees included, is checked.
	if _, err := cp.ConfigFor(inst.Files); err != nil {
		return nil, nil, err
	}
	return cp.build(inst, cp.check(inst))
}

// build compiles an agent that c checked, under its configuration.
func (cp *Compiler) build(inst *manifest.Instance, c *checker) (*plan.Plan, []Diagnostic, error) {
	cfg, err := cp.ConfigFor(inst.Files) // kept: read once
	if err != nil {
		return nil, nil, err
	}
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
	p := &plan.Plan{Agent: *agent, Sources: sources(inst), Tests: inst.Tests}
	for name, t := range agent.Capabilities.Tools {
		if t.Kind != "agent" {
			continue
		}
		callee, ok := c.callees[name]
		if !ok {
			return fail(fmt.Errorf("tool %q: the called agent was not compiled", name))
		}
		if p.Callees == nil {
			p.Callees = map[string]plan.Callee{}
		}
		p.Callees[name] = plan.Callee{Path: t.Path, Dir: callee.dir(t.Path), Contract: callee.plan.Digests.Contract, Plan: callee.plan}
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
	if p.ToolInputs, err = LowerToolInputs(agent.Model.Provider, agent.Capabilities.Tools); err != nil {
		return fail(err)
	}
	p.Fallbacks = c.fallbacks
	if err := p.Seal(); err != nil {
		return fail(err)
	}
	return p, ds, nil
}

// toAgent returns the plan's agent for a decoded manifest (the same type),
// with what may be written several ways with one meaning normalised:
// durations, and model.cache true, which is what leaving it out means.
// The manifest is left as it was.
func toAgent(m *manifest.Manifest) (*plan.Agent, error) {
	a := *m
	if a.Model.Caches() {
		a.Model.Cache = nil
	}
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
		if t.Confine != nil && t.Confine.Limits != nil {
			c, l := *t.Confine, *t.Confine.Limits
			if err := norm("capabilities.tools."+name+".confine.limits.cpu", &l.CPU); err != nil {
				return nil, err
			}
			c.Limits = &l
			t.Confine = &c
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
	at := map[string]token.Pos{}
	for _, p := range paths {
		if v := inst.Value.LookupPath(cue.ParsePath(p)); v.Exists() {
			at[p] = v.Pos()
		}
	}
	// The constraints of tests and tools, where their text starts: what
	// fails in them is positioned there.
	maps.Copy(at, inst.ConstraintSources)
	for p, pos := range at {
		if !pos.IsValid() {
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

// calleeInfo is an agent called as a tool, compiled.
type calleeInfo struct {
	plan  *plan.Plan
	isDir bool // a package directory, not a file
	err   error
}

// cycleError is an agent that reaches itself through agent tools: the
// chain of paths, from it back to it.
type cycleError struct{ chain []string }

func (e *cycleError) Error() string {
	return "agents call each other in a cycle: " + strings.Join(e.chain, " → ")
}

// dir is the directory a callee's relative paths resolve against, given
// as the tool's path is, relative to the caller's: the directory of its
// file, or the package directory it names.
func (ci calleeInfo) dir(toolPath string) string {
	if ci.isDir {
		return filepath.ToSlash(filepath.Clean(toolPath))
	}
	return filepath.ToSlash(filepath.Dir(toolPath))
}

// callee compiles the agent at a path (a manifest, a package directory or
// a compiled plan), with the agents it calls compiled into it, and caches
// the result by its key (agentKey): an agent called from many places is
// compiled once. An agent that reaches one still being compiled calls
// itself in a cycle, an error.
func (cp *Compiler) callee(path string) (calleeInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return calleeInfo{}, err
	}
	key := agentKey(abs)
	if ci, ok := cp.callees[key]; ok {
		return ci, ci.err
	}
	if i := slices.IndexFunc(cp.compiling, func(a compilingAgent) bool { return a.key == key }); i >= 0 {
		// Named as the paths the command was given are (displayName), as
		// each was reached.
		var chain []string
		for _, a := range cp.compiling[i:] {
			chain = append(chain, filepath.ToSlash(displayName(a.abs)))
		}
		chain = append(chain, filepath.ToSlash(displayName(abs)))
		return calleeInfo{}, &cycleError{chain: chain}
	}
	// Read by the path displayName gives, so that messages name it as the
	// command's paths are; cached by its key.
	path = displayName(abs)
	ci := cp.compileCallee(path)
	cp.callees[key] = ci
	return ci, ci.err
}

// agentKey is what an agent at an absolute path is known by, to the cache
// of compiled callees and to the cycle check: the path with the links of
// its directory resolved (the whole path's, for a package directory). What
// an agent compiles to depends on its file and the directory its relative
// paths resolve against, and those the key names; a path spelled through
// links (a directory linked to one above it makes l/a.cue, l/l/a.cue, …)
// would otherwise be a new agent at every step, a cycle never closed, and
// two such links make the paths, and the agents compiled, double at every
// level. The file's own link is kept: a link to a manifest elsewhere reads
// it against the link's directory, as a run of the link does.
func agentKey(abs string) string {
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return real
		}
		return abs
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func (cp *Compiler) compileCallee(path string) calleeInfo {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return calleeInfo{err: fmt.Errorf("cannot be read: %w", err)}
	}
	noOutput := calleeInfo{err: errors.New("it declares no output, so it has no answer to return")}
	if !fi.IsDir() {
		cp.noteRead(path)
		p, isPlan, err := plan.ReadFile(path)
		switch {
		case err != nil:
			return calleeInfo{err: err}
		case isPlan && p.Agent.Output == nil:
			return noOutput
		case isPlan:
			return calleeInfo{plan: p}
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
	for _, f := range inst.Files {
		cp.noteRead(f)
	}
	if len(inst.Errors) > 0 {
		return calleeInfo{err: fmt.Errorf("it does not load (run agentc vet on it): %s", inst.Errors[0].Msg)}
	}
	if inst.Manifest.Output == nil {
		return noOutput
	}
	c := cp.check(inst)
	if c.cycle != nil {
		// It fails because it is in a cycle: say which, as its callers do.
		return calleeInfo{err: c.cycle}
	}
	p, ds, err := cp.build(inst, c)
	if err != nil {
		return calleeInfo{err: err}
	}
	if p == nil {
		msg := "it does not compile (run agentc vet on it)"
		if i := slices.IndexFunc(ds, func(d Diagnostic) bool { return d.Severity == Error }); i >= 0 {
			// Named as vet, run here, would name it.
			wd, _ := os.Getwd()
			msg += fmt.Sprintf(": %s: %s", posString(ds[i].Pos, wd), ds[i].Message)
		}
		return calleeInfo{err: errors.New(msg)}
	}
	return calleeInfo{plan: p, isDir: fi.IsDir()}
}
