package cuecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/plan"
)

func newCompileCmd(e cli.Env) *cobra.Command {
	var out, model string
	cmd := &cobra.Command{
		Use:   "compile [path] [-o plan.json]",
		Short: "Check one agent and write its plan",
		Long: `Compile checks one agent and writes its plan: the format version, the contract
and plan digests, the agent with every default applied, the contract digests of
the agents it calls, and where each part was written. The same agent compiles
to the same bytes on every machine.

The path names one agent, as for vet (default "."). Findings are printed on
standard error, but for those agentc.yaml turns off (see vet's help); with any
error, no plan is written. The plan goes to the -o
file, written whole or not at all, or to standard output. A last line on
standard error says how the answer will come: the output tool's name, which
is the same on every run, or the mode that offers none.

--model PROVIDER:MODEL compiles the agent for another model, as if its
manifest named it (as agentc run --model does): its answer format lowered
for that provider, and what that model cannot take an error (exit 2).

Exit codes: 0 the plan was written; 1 findings; 2 usage error, or an
agentc.yaml that does not read.`,
		Example: `  agentc compile examples/issue-triage.cue -o triage.plan.json`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			comp := newCompiler(e)
			var err error
			if comp.Prices, err = runcmd.LoadPrices(""); err != nil {
				return err
			}
			bs, err := buildWith(e, comp, args, e.Stderr, false)
			if err != nil {
				return err
			}
			if len(bs) != 1 {
				return cli.UsageError("compile takes one agent; %s holds %d", args[0], len(bs))
			}
			p := bs[0].plan
			if model != "" {
				provider, name, _ := strings.Cut(model, ":")
				if name == "" || provider == "test" {
					return cli.UsageError("--model %q: give PROVIDER:MODEL (anthropic:claude-sonnet-4-5)", model)
				}
				if err := plan.CheckModelName(model); err != nil {
					return cli.UsageError("--model %q: %v", model, err)
				}
				if p, err = compile.Retarget(p, provider, name); err != nil {
					return cli.UsageError("--model %s: %v", model, err)
				}
			}
			if out != "" && out != "-" {
				var ins []userfile.Named
				for _, f := range bs[0].inst.Files {
					ins = append(ins, userfile.Named{What: "the agent's file", Path: f})
				}
				// The agents it calls, and the configuration and lock
				// files read for it, are inputs too.
				for _, f := range comp.Read() {
					ins = append(ins, userfile.Named{What: "the agent's input", Path: f, Shown: relPath(f, e.Dir)})
				}
				if err := userfile.CheckOutputs([]userfile.Named{{What: "-o", Path: out}}, append(ins, userfile.Named{What: "the agent", Path: args[0]})); err != nil {
					return cli.UsageError("%v", err)
				}
			}
			data, err := p.Encode()
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = e.Stdout.Write(data)
			} else {
				err = writeFileAtomic(out, data)
			}
			if err != nil {
				return err
			}
			// How the run will ask for the answer, known before it starts.
			way := "no output contract"
			if p.Output != nil {
				way = p.Output.Way()
			}
			fmt.Fprintf(e.Stderr, "agentc: %s: %s\n", p.Agent.Name, way)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the plan to this file (default: standard output)")
	cmd.Flags().StringVar(&model, "model", "", "compile for another model, PROVIDER:MODEL")
	return cmd
}

// writeFileAtomic writes a file whole or not at all, readable by all.
func writeFileAtomic(name string, data []byte) error {
	return atomicfile.Write(name, data, 0o644)
}
