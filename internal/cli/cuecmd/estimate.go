package cuecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/internal/termtext"
)

func newEstimateCmd(e cli.Env) *cobra.Command {
	var asJSON bool
	var n, pool int64
	var prices string
	var toolBudget, tokenBudget, rounds int
	cmd := &cobra.Command{
		Use:   "estimate [path...] [--batch N] [--json] [budget flags]",
		Short: "Print the most a run of an agent may spend, in tokens and money",
		Long: `Estimate prints, before any call, the worst case one run of each agent may
spend: tokens, called agents' included, and their price by the price table
(the table embedded in agentc, extended by --prices FILE or $AGENTC_PRICES).
Each line after the total is a step of the arithmetic: the bound one call
has (the model's context window), one round (a call made up to 5 times,
each attempt the provider answered and lost charged, on the model and its
fallbacks), the rounds, budgets.tokens (which a run may pass by one round:
budgets are checked before each round), budgets.tools times the dearest
called agent. Where nothing bounds a run it says
"unbounded" and what to set. With --batch N it also prints N runs' worth.

--tool-budget, --token-budget and --rounds replace the agent's own budgets
(not its called agents'), and --pool-tokens bounds its runs together, as
they do for agentc run: estimate the run you are about to make with the
flags you will make it with.

The paths name agents as for vet (files, package directories, "-" for
standard input, default "."), manifests or compiled plans.

Exit codes: 0 the estimate was printed, bounded or not; 1 an agent does
not compile; 2 usage error, or a price file that does not read.`,
		Example: `  agentc estimate examples/issue-triage.cue
  agentc estimate examples/ --batch 1000 --json
  agentc estimate examples/issue-triage.cue --batch 1000 --pool-tokens 2000000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return cli.UsageError("--batch must be at least 1")
			}
			flags := cmd.Flags()
			b, err := runcmd.BudgetOverrides(flags.Changed, toolBudget, tokenBudget, rounds)
			if err != nil {
				return err
			}
			o := cost.Overrides{Tools: b.Tools, Tokens: b.Tokens, Rounds: b.Rounds}
			if flags.Changed("pool-tokens") {
				if pool <= 0 {
					return cli.UsageError("--pool-tokens must be positive")
				}
				o.Pool = pool
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			table, err := runcmd.LoadPrices(prices)
			if err != nil {
				return err
			}
			comp := newCompiler(e)
			comp.Prices = table
			bs, err := buildWith(e, comp, args, e.Stderr, true)
			if err != nil {
				return err
			}
			maxAge, err := runcmd.PricesMaxAge()
			if err != nil {
				return err
			}
			out := estimates{AsOf: table.AsOf, Source: table.Source, Files: table.Files, FileDates: table.Dates, Batch: n, Agents: []agentEstimate{}, table: table}
			for _, b := range bs {
				est, err := cost.WorstWith(b.plan, table, o)
				if err != nil {
					return err
				}
				a := agentEstimate{Estimate: est}
				if a.BatchTokens, a.BatchUSD, err = est.Batch(n); err != nil {
					return err
				}
				out.Agents = append(out.Agents, a)
			}
			var used []cost.Price
			for _, a := range out.Agents {
				used = append(used, allPrices(a.Estimate)...)
			}
			for _, w := range cost.Stale(used, time.Now(), maxAge) {
				fmt.Fprintf(e.Stderr, "agentc: warning: %s\n", w)
			}
			if asJSON {
				enc := json.NewEncoder(e.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			out.text(e.Stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the estimates as JSON")
	cmd.Flags().Int64Var(&n, "batch", 1, "also print the worst case of a batch of N runs")
	cmd.Flags().IntVar(&toolBudget, "tool-budget", 0, "estimate with this budgets.tools, as agentc run --tool-budget")
	cmd.Flags().IntVar(&tokenBudget, "token-budget", 0, "estimate with this budgets.tokens, as agentc run --token-budget")
	cmd.Flags().IntVar(&rounds, "rounds", 0, "estimate with this budgets.rounds, as agentc run --rounds")
	cmd.Flags().Int64Var(&pool, "pool-tokens", 0, "estimate runs that share one token pool, as agentc run --pool-tokens")
	cmd.Flags().StringVar(&prices, "prices", "", "extend the embedded price table with this file (default: $"+cost.EnvPrices+")")
	return cmd
}

// estimates is estimate's output.
type estimates struct {
	AsOf      string          `json:"prices_as_of"`
	Source    string          `json:"prices_source"`
	Files     []string        `json:"price_files,omitempty"`
	FileDates []string        `json:"price_files_as_of,omitempty"`
	Batch     int64           `json:"batch"`
	Agents    []agentEstimate `json:"agents"`
	table     *cost.Table
}

type agentEstimate struct {
	*cost.Estimate
	BatchTokens *int64   `json:"batch_tokens"`
	BatchUSD    *float64 `json:"batch_usd"`
}

var printer = message.NewPrinter(language.English)

// text writes the estimates for a person to read. What a manifest or a
// price file names (an agent, a model, a price entry's key) is escaped,
// a line feed too: it may come from a pull request, and each line says
// one thing.
func (o estimates) text(w io.Writer) {
	for _, a := range o.Agents {
		writeEstimate(w, a.Estimate, "")
		if o.Batch > 1 {
			printer.Fprintf(w, "  a batch of %d runs: %s\n", o.Batch, amount(a.BatchTokens, a.BatchUSD))
		}
	}
	fmt.Fprintf(w, "prices: %s\n", termtext.Escape(o.table.Describe()))
}

// allPrices are the prices an estimate and its called agents' used.
func allPrices(e *cost.Estimate) []cost.Price {
	out := e.Prices
	for _, c := range e.Callees {
		out = append(slices.Clip(out), allPrices(c)...)
	}
	return out
}

func writeEstimate(w io.Writer, e *cost.Estimate, indent string) {
	esc := termtext.Escape
	who := esc(e.Agent)
	if e.Tool != "" {
		who = fmt.Sprintf("agent tool %s (%s)", esc(e.Tool), esc(e.Agent))
	}
	printer.Fprintf(w, "%s%s: %s/%s: worst case %s a run\n", indent, who, esc(e.Provider), esc(e.Model), amount(e.Tokens, e.USD))
	if e.Tokens != nil {
		fmt.Fprintf(w, "%s  bound: %s\n", indent, esc(e.Decides))
	}
	for _, u := range e.Unbounded {
		fmt.Fprintf(w, "%s  unbounded: %s\n", indent, esc(u))
	}
	for _, s := range e.Assumptions {
		fmt.Fprintf(w, "%s  - %s\n", indent, esc(s))
	}
	for _, c := range e.Callees {
		writeEstimate(w, c, indent+"  ")
	}
}

// amount says a worst case in tokens and dollars.
func amount(tokens *int64, usd *float64) string {
	t, d := "unbounded tokens", "unbounded cost"
	if tokens != nil {
		t = printer.Sprintf("%d tokens", *tokens)
	}
	if usd != nil {
		d = printer.Sprintf("$%.4f", *usd)
	}
	return t + ", " + d
}

func ptr[T any](v T) *T { return &v }
