package cuecmd

import (
	"errors"
	"fmt"
	"io"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// built is one agent compiled for digest or compile.
type built struct {
	inst   *manifest.Instance
	plan   *plan.Plan
	isPlan bool // read from a plan file, not compiled from a manifest
}

// buildAll loads and compiles every agent args name; with plans, an agent
// that is a compiled plan is read, verified, instead. Findings go to w (all
// of them: warnings too); when any is an error, or building fails, it
// returns an exit error after printing them.
func buildAll(e cli.Env, args []string, w io.Writer, plans bool) ([]built, error) {
	comp := newCompiler(e)
	var err error
	if comp.Prices, err = runcmd.LoadPrices(""); err != nil {
		return nil, err
	}
	return buildWith(e, comp, args, w, plans)
}

// buildWith is buildAll with a compiler of the caller's.
func buildWith(e cli.Env, comp *compile.Compiler, args []string, w io.Writer, plans bool) ([]built, error) {
	insts, err := comp.Loader().Load(args)
	if err != nil {
		return nil, err
	}
	var out []built
	failed := false
	for _, inst := range insts {
		if plans {
			if p, ok, err := readPlan(inst); ok {
				if err != nil {
					fmt.Fprintf(w, "agentc: %v\n", err)
					failed = true
					continue
				}
				out = append(out, built{inst: inst, plan: p, isPlan: true})
				continue
			}
		}
		if inst.NotAgent {
			continue // found in a directory, and neither a plan nor a manifest
		}
		p, ds, err := comp.Build(inst)
		var ce *compile.ConfigError
		if errors.As(err, &ce) {
			return nil, err
		}
		for _, d := range ds {
			if d.Severity != compile.Note {
				fmt.Fprintln(w, diagText(d, e.Dir))
			}
		}
		if err != nil {
			fmt.Fprintf(w, "agentc: %v\n", err)
		}
		if p == nil {
			failed = true
			continue
		}
		out = append(out, built{inst: inst, plan: p})
	}
	if failed {
		// With the agents that built: agentc test tests them, and fails.
		return out, &cli.ExitError{Code: cli.ExitFindings}
	}
	return out, nil
}

// readPlan reads an agent that is a plan file rather than a manifest: one
// JSON file whose format names a plan. ok is false for a manifest; err
// says why a plan does not read (cut short, say, or content that does not
// match its digests).
func readPlan(inst *manifest.Instance) (p *plan.Plan, ok bool, err error) {
	if len(inst.Files) != 1 {
		return nil, false, nil
	}
	p, ok, err = plan.ReadFile(inst.Files[0])
	if !ok {
		return nil, false, nil // the loader reports a file it cannot read
	}
	return p, true, err
}
