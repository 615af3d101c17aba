package cuecmd

import (
	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/manifest"
)

func newSchemaCmd(e cli.Env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "schema [--format cue|jsonschema]",
		Short: "Print the manifest schema, as CUE or as JSON Schema for editors",
		Long: `Schema prints the manifest schema embedded in agentc: the CUE definitions
vet checks manifests with (--format cue, the default), or a JSON Schema
(draft 2020-12) generated from them (--format jsonschema), which editors
use to complete and check YAML and JSON manifests. See docs/editors.md.

Exit codes: 0 the schema was printed; 2 usage error.`,
		Example: `  agentc schema
  agentc schema --format jsonschema > agentc.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var out []byte
			switch format {
			case "cue":
				out = manifest.SchemaSource
			case "jsonschema":
				var err error
				if out, err = manifest.JSONSchema(); err != nil {
					return err
				}
			default:
				return cli.UsageError("--format %q: want cue or jsonschema", format)
			}
			_, err := e.Stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "cue", "cue or jsonschema")
	return cmd
}
