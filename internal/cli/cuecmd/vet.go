package cuecmd

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/manifest"
)

func newVetCmd(e cli.Env) *cobra.Command {
	var asJSON, strict, verbose bool
	var evalTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "vet [paths...]",
		Short: "Check manifests and report what is wrong with them",
		Long: `Vet loads each agent the paths name and reports every problem found, one per
line, as file:line:col: severity: message [CODE].

A path is a manifest file (.cue, .json, .yaml, .yml), "-" for CUE or JSON on
standard input, a directory, or dir/... for a directory and all below it. In
a directory, the .cue files of one package form one agent; every other
manifest file is an agent of its own. With no path, vet checks ".".

--verbose adds notes: each constraint of the output schema that the agent's
provider cannot enforce while generating, and that only local validation of
the answer checks (with output.enforce "provider", each is an error).

Evaluating one agent may take at most --eval-timeout (default 10s) and 2 GiB
of memory; past either, vet reports MANIFEST_TOO_COMPLEX and goes on.

Exit codes: 0 nothing wrong (warnings allowed unless --strict); 1 findings;
2 usage error.`,
		Example: `  agentc vet examples/*.cue
  agentc vet --json ./agents/...
  cat agent.cue | agentc vet -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			comp := newCompiler(e)
			comp.Loader().EvalTimeout = evalTimeout
			results, err := comp.Vet(args)
			if err != nil {
				return err
			}
			failed := false
			enc := json.NewEncoder(e.Stdout)
			for _, r := range results {
				for _, d := range r.Diagnostics {
					if d.Severity == compile.Note && !verbose {
						continue
					}
					if d.Severity == compile.Error || strict && d.Severity == compile.Warning {
						failed = true
					}
					if asJSON {
						if err := enc.Encode(d.JSON(e.Dir)); err != nil {
							return err
						}
						continue
					}
					fmt.Fprintln(e.Stdout, d.Format(e.Dir))
				}
			}
			if failed {
				return &cli.ExitError{Code: cli.ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print findings as JSON objects, one per line")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too")
	cmd.Flags().DurationVar(&evalTimeout, "eval-timeout", manifest.DefaultEvalTimeout, "give up on an agent whose evaluation takes longer")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print notes too: constraints the provider cannot enforce while generating")
	return cmd
}
