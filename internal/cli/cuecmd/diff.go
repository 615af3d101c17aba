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
	var (
		asJSON  bool
		against string
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW | diff --against REF [PATH]",
		Short: "Classify the changes between two versions of an agent's contract",
		Long: `Diff compares the contract of two versions of an agent, each a manifest or a
plan written by agentc compile, and prints one finding per change: where it is
(a JSON Pointer into the plan's agent), the rule that explains it, the old and
new value, and its class.

With --against REF, the old version is PATH (the current directory by
default) as it is at the git revision REF of the repository PATH is in, and
the new version PATH as it is now. An agent that did not exist at REF is
reported as added.

The class follows the direction data flows. The output is produced by the
agent and read by consumers: a change that only narrows it is compatible, one
that widens it is breaking. The input is produced by callers: widening is
compatible, narrowing is breaking. A schema change is classified by the schema
inclusion engine, which proves compatibility, or names a value that shows the
break; where it can do neither (a changed pattern, say) the change is
undecided. Annotations (title, description, examples) are compatible, and
listed. See docs/diff.md for every rule.

Exit codes: 0 no breaking change; 1 a breaking change, or an agent that does
not compile; 2 usage error (with --against: not a git repository, no such
revision).`,
		Example: `  agentc diff old/triage.cue triage.cue
  agentc diff --json triage.plan.json triage.cue
  agentc diff --against main triage.cue`,
		Args: func(cmd *cobra.Command, args []string) error {
			if against != "" {
				if len(args) > 1 {
					return cli.UsageError("diff --against REF takes one path, the agent now; got %d", len(args))
				}
				return nil
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var old, new *plan.Plan
			var err error
			if against != "" {
				path := "."
				if len(args) == 1 {
					path = args[0]
				}
				if new, err = diffSide(e, path); err != nil {
					return err
				}
				if old, err = revisionSide(e, against, path); err != nil {
					return err
				}
			} else {
				if old, err = diffSide(e, args[0]); err != nil {
					return err
				}
				if new, err = diffSide(e, args[1]); err != nil {
					return err
				}
			}
			var oldAgent *plan.Agent
			if old != nil {
				oldAgent = &old.Agent
			}
			fs, err := contractdiff.Compare(oldAgent, &new.Agent)
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
	cmd.Flags().StringVar(&against, "against", "", "compare PATH with PATH as it is at this git revision")
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
		ptr := f.Pointer
		if ptr == "" {
			ptr = "(root)" // the whole agent
		}
		line := fmt.Sprintf("%s: %s: %s", ptr, f.Class, r.Doc)
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
