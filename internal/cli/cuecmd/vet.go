package cuecmd

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/manifest"
)

func newVetCmd(e cli.Env) *cobra.Command {
	var asJSON, strict, verbose bool
	var format string
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

--format chooses how findings are printed: text (the default), json (one
JSON object a line; --json is short for it), github-actions (workflow
commands that annotate the files of a pull request) or junit (a JUnit XML
report: one test case per agent, a failure per error).

--verbose adds notes: each constraint of the output schema that the agent's
provider cannot enforce while generating, and that only local validation of
the answer checks (with output.enforce "provider", each is an error). It also
says, on standard error, how many findings agentc.yaml silenced.

A project may turn rules off in agentc.yaml, in the agent's directory or one
above it up to the module root: vet.except lists codes turned off
everywhere, vet.ignore paths not vetted, vet.ignore_only codes turned off for
some paths. Rules that guard a refusal of the runtime cannot be turned off.

Evaluating one agent may take at most --eval-timeout (default 10s) and 2 GiB
of memory; past either, vet reports MANIFEST_TOO_COMPLEX, loads no agent
after it (each is reported as not loaded) and prints what it found before.

Exit codes: 0 nothing wrong (warnings allowed unless --strict); 1 findings;
2 usage error, or an agentc.yaml that does not read.`,
		Example: `  agentc vet examples/*.cue
  agentc vet --json ./agents/...
  agentc vet --format github-actions ./...
  cat agent.cue | agentc vet -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != "json" {
					return cli.UsageError("--json is --format json; it excludes --format %s", format)
				}
				format = "json"
			}
			write, ok := vetFormats[format]
			if !ok {
				return cli.UsageError("--format %q: want one of %s", format, formatNames())
			}
			if evalTimeout <= 0 {
				// The loader reads a negative timeout as no bound at all,
				// of time or memory: not for a manifest from elsewhere.
				return cli.UsageError("--eval-timeout must be positive")
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			comp := newCompiler(e)
			comp.Loader().EvalTimeout = evalTimeout
			var err error
			if comp.Prices, err = runcmd.LoadPrices(""); err != nil {
				return err
			}
			results, err := comp.Vet(args)
			if err != nil {
				return err
			}
			rep := vetReport{dir: e.Dir}
			for _, r := range results {
				a := vetAgent{Result: r}
				for _, d := range r.Diagnostics {
					if d.Severity == compile.Note && !verbose {
						continue
					}
					a.shown = append(a.shown, d)
					if d.Severity == compile.Error || strict && d.Severity == compile.Warning {
						a.failures = append(a.failures, d)
					}
				}
				rep.agents = append(rep.agents, a)
			}
			if err := write(e, rep); err != nil {
				return err
			}
			if verbose {
				rep.summary(e)
			}
			if rep.failed() {
				return &cli.ExitError{Code: cli.ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "how to print findings: "+formatNames())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print findings as JSON objects, one per line (--format json)")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too")
	cmd.Flags().DurationVar(&evalTimeout, "eval-timeout", manifest.DefaultEvalTimeout, "give up on an agent whose evaluation takes longer")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print notes too (constraints the provider cannot enforce while generating), and what agentc.yaml silenced")
	return cmd
}

// vetReport is what vet prints: the findings shown of each agent, and
// which of them fail the command.
type vetReport struct {
	dir    string // the working directory, file names are relative to
	agents []vetAgent
}

type vetAgent struct {
	compile.Result
	shown    []compile.Diagnostic // notes only under --verbose
	failures []compile.Diagnostic // errors; warnings too under --strict
}

func (r vetReport) failed() bool {
	return slices.ContainsFunc(r.agents, func(a vetAgent) bool { return len(a.failures) > 0 })
}

// summary says on standard error what each configuration file silenced
// and which agents it left unvetted.
func (r vetReport) summary(e cli.Env) {
	silenced := map[string]int{}
	for _, a := range r.agents {
		switch {
		case a.Ignored:
			fmt.Fprintf(e.Stderr, "agentc: %s: not vetted: %s ignores it\n", termtext.Escape(relPath(a.Source, r.dir)), termtext.Escape(relPath(a.Config, r.dir)))
		case a.Silenced > 0:
			silenced[a.Config] += a.Silenced
		}
	}
	for _, cfg := range slices.Sorted(maps.Keys(silenced)) {
		n, s := silenced[cfg], "s"
		if n == 1 {
			s = ""
		}
		fmt.Fprintf(e.Stderr, "agentc: %d finding%s silenced by %s\n", n, s, termtext.Escape(relPath(cfg, r.dir)))
	}
}
