package cli

import (
	"github.com/spf13/cobra"

	"agentc.dev/agentc/approval"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/internal/runcmd"
	agentrt "agentc.dev/agentc/runtime"
)

// newRunCmd is the run verb on e; es is e with its standard error
// escaped, for what a run on Temporal says there.
func newRunCmd(e, es Env, c *Compiler) *cobra.Command {
	var f runcmd.Flags
	var t temporalFlags
	var workflowID string
	cmd := &cobra.Command{
		Use:   "run [path]",
		Short: "Run an agent: a compiled plan, or a manifest compiled on the fly",
		Long: `Run executes an agent. The path is a plan written by agentc compile, or a
manifest (compiled on the fly, as agentc compile would); default ".".

` + runcmd.Help + `

--temporal HOST:PORT submits the run to a Temporal server instead, where
workers (agentc worker) make it, and waits for it: the output and the exit
code are a local run's. The run is checked, and its input read, here first.
A stop signal cancels it. Its history is its journal: agentc journal export.`,
		Example: `  agentc run examples/invoice-extractor.cue --model test --input @examples/input/invoice.json
  agentc compile agent.cue -o plan.json && agentc run plan.json --input '{"id": 1}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			onTemporal, err := t.chosen(cmd)
			if err != nil {
				return err
			}
			if onTemporal {
				if err := t.resolve(); err != nil {
					return err
				}
				f.SetRemote(t.remote(es, &workflowID), t.remoteBatch(es, &workflowID))
			} else {
				for _, name := range []string{"namespace", "task-queue", "workflow-id"} {
					if cmd.Flags().Changed(name) {
						return UsageError("--%s goes with --temporal", name)
					}
				}
			}
			return runcmd.RunAgent(cmd.Context(), e, c.Load, path, f, cmd.Flags().Changed)
		},
	}
	f.Register(cmd.Flags())
	// approve_if decides before --approve does: it needs CUE, which
	// agentc-runtime does not link.
	f.SetApproveRules(rules())
	f.SetRetarget(c.Retarget)
	f.SetConfigLimits(c.ConfigLimits)
	t.register(cmd.Flags(), false)
	cmd.Flags().StringVar(&workflowID, "workflow-id", "", "with --temporal: the run's workflow ID, or with --batch the batch's, which its runs' IDs start with (default: made from the agent's name)")
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
	return cmd
}

// rules is what decides calls by approve_if, in bounded children of this
// program (the hidden verb cueproc.Verb, which agentc serves); where the
// program cannot be found, approve_if decides nothing and the call is
// asked about.
func rules() func(next agentrt.Approver) agentrt.Approver {
	prog, _ := cueproc.Self()
	return approval.Rules(prog)
}
