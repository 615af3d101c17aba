package cuecmd

import (
	"fmt"
	"io"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
)

// built is one agent compiled for digest or compile.
type built struct {
	inst *manifest.Instance
	plan *plan.Plan
}

// buildAll loads and compiles every agent args name. Findings go to w (all
// of them: warnings too); when any is an error, or building fails, it
// returns an exit error after printing them.
func buildAll(e cli.Env, args []string, w io.Writer) ([]built, error) {
	comp := newCompiler(e)
	insts, err := comp.Loader().Load(args)
	if err != nil {
		return nil, err
	}
	var out []built
	failed := false
	for _, inst := range insts {
		p, ds, err := comp.Build(inst)
		for _, d := range ds {
			if d.Severity != compile.Note {
				fmt.Fprintln(w, d.Format(e.Dir))
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
		return nil, &cli.ExitError{Code: cli.ExitFindings}
	}
	return out, nil
}
