package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runview"
)

func newViewCmd(e Env) *cobra.Command {
	var out, report, prices string
	cmd := &cobra.Command{
		Use:   "view JOURNAL",
		Short: "Write a run's journal as one HTML page: a timeline of its calls, their cost, approvals, the answer, any divergence",
		Long: `View reads a run's journal (agentc run --record) and writes one HTML page that
needs nothing else, opens from disk and loads nothing: a timeline of the run's
rounds, model calls and tool calls (a called agent's run nested under the call
that ran it), with their durations, tokens and cost, the decisions about calls
that needed approval (who decided, why; a denied call was not made), the
messages and arguments as the journal holds them (secrets already redacted),
and the answer, checked against the contract recorded with the call that gave
it. A file a run was given is shown as a card (its input, name, media type,
size and digest), an image of up to 2 MiB with the image itself, read from the
store beside the journal (JOURNAL.files, or the files directory beside a
batch's journal) and checked against its digest.

Model calls are priced by the price table agentc run uses: the one built in,
extended by --prices FILE or $` + cost.EnvPrices + `. A model the table does not
know is shown as unpriced, naming it.

--report FILE adds what the run's report (agentc run --report) says: the
outcome and bound, its cost (both, where the page's prices give another),
the answer, and for a replay that diverged, the effect at which it departed
from the journal and the fields that changed.

The page goes to standard output, or with -o to a file, written whole or not
at all; standard output that is a terminal is refused (exit 2). A journal that does not read is an error naming its line (exit 1); a
price file that does not read, one naming its line and column (exit 2).`,
		Example: `  agentc run agent.cue --model test --record run.jsonl
  agentc view run.jsonl -o run.html
  agentc run agent.cue --replay run.jsonl --report > replay.json
  agentc view run.jsonl --report replay.json -o run.html
  agentc view run.jsonl --prices my-prices.json -o run.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			table, err := runcmd.LoadPrices(prices)
			if err != nil {
				return err
			}
			ins := []userfile.Named{{What: "the journal", Path: inDir(e, args[0]), Shown: args[0]}}
			if report != "" {
				ins = append(ins, userfile.Named{What: "--report", Path: inDir(e, report), Shown: report})
			}
			if prices != "" {
				ins = append(ins, userfile.Named{What: "--prices", Path: inDir(e, prices), Shown: prices})
			}
			if (out == "" || out == "-") && runcmd.IsTerminal(e.Stdout) {
				// A page is for a browser; printed, what a tool wrote
				// could reach the terminal (the page escapes it, but a
				// screen of markup helps no one).
				return runcmd.UsageError("standard output is a terminal: write the page to a file with -o FILE, or pipe it (agentc view JOURNAL > run.html)")
			}
			if out != "" && out != "-" {
				if err := userfile.CheckOutputs([]userfile.Named{{What: "-o", Path: inDir(e, out), Shown: out}}, ins); err != nil {
					return runcmd.UsageError("%v", err)
				}
			}
			j, err := journal.Open(inDir(e, args[0]))
			var je *journal.Error
			var pe *os.PathError
			var nr *userfile.NotRegularError
			switch {
			case errors.As(err, &je):
				je.File = args[0] // as the command line names it
				return err
			case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist):
				// A path that names nothing is the command line's error.
				return runcmd.UsageError("journal %s: %w", args[0], pe.Err)
			case errors.As(err, &pe):
				return fmt.Errorf("journal %s: %w", args[0], pe.Err)
			case errors.As(err, &nr):
				nr.Path = args[0]
				return fmt.Errorf("journal %s: %w", args[0], nr)
			case err != nil:
				return err
			}
			var rep *agentrt.Report
			if report != "" {
				if rep, err = readReport(inDir(e, report), report); err != nil {
					return err
				}
			}
			p, err := runview.Build(j, rep, table, runview.StoreBeside(inDir(e, args[0])))
			if errors.As(err, &je) {
				je.File = args[0]
			}
			if err != nil {
				return err
			}
			maxAge, err := runcmd.PricesMaxAge()
			if err != nil {
				return err
			}
			for _, w := range cost.Stale(p.Priced, time.Now(), maxAge) {
				fmt.Fprintf(e.Stderr, "agentc: warning: %s\n", w)
			}
			var page bytes.Buffer
			if err := p.Write(&page); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err := e.Stdout.Write(page.Bytes())
				return err
			}
			if err := atomicfile.Write(inDir(e, out), page.Bytes(), 0o600); err != nil {
				// The file as the person named it, and the system's reason.
				return fmt.Errorf("writing %s: %w", out, errors.Unwrap(err))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "-", "write the page to this file (- for standard output)")
	cmd.Flags().StringVar(&report, "report", "", "the run's report (agentc run --report), for its outcome, cost, answer and divergence")
	cmd.Flags().StringVar(&prices, "prices", "", "extend the embedded price table with this file (default: $"+cost.EnvPrices+")")
	return cmd
}

// readReport reads a run report, naming the line and column (of name,
// the file as the command line names it) where it is not one.
func readReport(path, name string) (*agentrt.Report, error) {
	data, err := userfile.Read(path, plan.MaxReportBytes, "a run's report")
	var pe *os.PathError
	switch {
	case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist):
		return nil, runcmd.UsageError("report %s: %w", name, pe.Err)
	case errors.As(err, &pe):
		return nil, fmt.Errorf("report %s: %w", name, pe.Err)
	}
	if err != nil {
		return nil, runcmd.UsageError("--report: %v", userfile.Rename(err, name))
	}
	path = name
	var rep agentrt.Report
	err = json.Unmarshal(data, &rep)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return nil, fmt.Errorf("%s:%d:%d: not a run report: %v", path, line, col, err)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return nil, fmt.Errorf("%s:%d:%d: not a run report: %s holds %s, want %s", path, line, col, te.Field, te.Value, te.Type)
	case err != nil:
		return nil, fmt.Errorf("%s: not a run report: %v", path, err)
	case rep.Agent == "" || rep.Outcome == "":
		return nil, fmt.Errorf("%s: not a run report: it has no agent or outcome (write one with agentc run --report)", path)
	}
	return &rep, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// inDir resolves a path of the command line against e's directory.
func inDir(e Env, path string) string {
	if filepath.IsAbs(path) || e.Dir == "" {
		return path
	}
	return filepath.Join(e.Dir, path)
}
