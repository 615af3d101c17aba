package cuecmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/plan"
)

func newDiffCmd(e cli.Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Classify the changes between two versions of an agent's contract",
		Long: `Diff compares the contract of two versions of an agent, each a manifest or a
plan written by agentc compile, and prints one finding per change: where it is
(a JSON Pointer into the plan's agent), the rule that explains it, the old and
new value, and its class.

The class follows the direction data flows. The output is produced by the
agent and read by consumers: a change that only narrows it is compatible, one
that widens it is breaking. The input is produced by callers: widening is
compatible, narrowing is breaking. A schema change is classified by the schema
inclusion engine, which proves compatibility, or names a value that shows the
break; where it can do neither (a changed pattern, say) the change is
undecided. Annotations (title, description, examples) are compatible, and
listed. See docs/diff.md for every rule.

Exit codes: 0 no breaking change; 1 a breaking change, or an agent that does
not compile; 2 usage error.`,
		Example: `  agentc diff old/triage.cue triage.cue
  agentc diff --json triage.plan.json triage.cue`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := diffSide(e, args[0])
			if err != nil {
				return err
			}
			new, err := diffSide(e, args[1])
			if err != nil {
				return err
			}
			fs, err := contractdiff.Compare(&old.Agent, &new.Agent)
			if err != nil {
				return err
			}
			if err := printFindings(e, fs, asJSON); err != nil {
				return err
			}
			if contractdiff.AnyBreaking(fs) {
				return &cli.ExitError{Code: cli.ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print findings as JSON objects, one per line")
	return cmd
}

// diffSide compiles, or reads, the one agent at path.
func diffSide(e cli.Env, path string) (*plan.Plan, error) {
	bs, err := buildAll(e, []string{path}, e.Stderr, true)
	if err != nil {
		return nil, err
	}
	if len(bs) != 1 {
		return nil, cli.UsageError("diff compares one agent with one agent; %s holds %d", path, len(bs))
	}
	return bs[0].plan, nil
}

func printFindings(e cli.Env, fs []contractdiff.Finding, asJSON bool) error {
	enc := json.NewEncoder(e.Stdout)
	for _, f := range fs {
		if asJSON {
			if err := enc.Encode(f); err != nil {
				return err
			}
			continue
		}
		r, _ := contractdiff.RuleOf(f.Rule)
		line := fmt.Sprintf("%s: %s: %s", f.Pointer, f.Class, r.Doc)
		if f.Old != nil || f.New != nil {
			line += fmt.Sprintf(": %s -> %s", shown(f.Old), shown(f.New))
		}
		if f.HasExample {
			line += fmt.Sprintf(" (for instance %s)", shown(f.Example))
		}
		fmt.Fprintf(e.Stdout, "%s [%s]\n", line, f.Rule)
	}
	return nil
}

// shown writes a value of a finding as JSON; an absent one as "none".
func shown(v any) string {
	if v == nil {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
