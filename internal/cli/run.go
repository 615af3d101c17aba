package cli

import (
	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/runcmd"
)

func newRunCmd(e Env, c *Compiler) *cobra.Command {
	var f runcmd.Flags
	cmd := &cobra.Command{
		Use:   "run [path]",
		Short: "Run an agent: a compiled plan, or a manifest compiled on the fly",
		Long: `Run executes an agent. The path is a plan written by agentc compile, or a
manifest (compiled on the fly, as agentc compile would); default ".".

` + runcmd.Help,
		Example: `  agentc run examples/invoice-extractor.cue --model test --input @invoice.json
  agentc compile agent.cue -o plan.json && agentc run plan.json --input '{"id": 1}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			return runcmd.RunAgent(cmd.Context(), e, c.Load, path, f, cmd.Flags().Changed)
		},
	}
	f.Register(cmd.Flags())
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
	return cmd
}
