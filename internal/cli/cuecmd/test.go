package cuecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/agenttest"
	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/leaf/cueproc"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/internal/termtext"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/fault"
	"agentc.dev/agentc/runtime/journal"
)

// How a case ran.
const (
	modeReplay    = "replay"     // from its recorded journal
	modeTestModel = "test-model" // no journal: the offline test model
	// modeReplayOnly is asked for, never a case's: replay, and a case
	// without a journal fails unrun.
	modeReplayOnly = "replay-only"
	modeLive       = "live"   // against the agent's provider
	modeRecord     = "record" // live, and journaled
)

// Statuses of a case.
const (
	statusPass     = "PASS"
	statusFail     = "FAIL"
	statusDiverged = "DIVERGED"
	statusNA       = "n/a" // a fault run that does not apply
)

func newTestCmd(e cli.Env) *cobra.Command {
	var record, live, replayOnly, asJSON, faults bool
	var samples int
	var format, run string
	cmd := &cobra.Command{
		Use:   "test [paths...]",
		Short: "Run the test cases agents declare in their manifests",
		Long: `Test runs every case of the tests each agent declares, and checks the answer
against the case's expect (a CUE constraint unified with it) and the run
against its outcome, bound, max_tool_calls and tool_calls. Paths are vet's.

Offline by default: a case whose journal testdata/<agent>/<case>.jsonl (beside
the manifest) exists is replayed from it, with no network call and no tool
run; a journal the agent no longer matches (a changed prompt, schema or tool)
is DIVERGED, never a pass. A case without a journal runs against the offline
test model, which checks only what it can: that the agent answers in the
contract's shape and calls the tools a case expects, not the answer's values.

--record runs each case against the agent's real provider and writes its
journal (whole or not at all); --live runs against it without recording;
--samples N runs each case N times live and passes it when the share of
runs that pass is at least its min_pass (default 1).

--replay-only runs only the cases recorded: a case without a journal fails,
and nothing of it runs (no model, no tool). For checks on changes someone
else wrote (a pull request), whose tools the test model would run.

--faults runs each case again once per fault (a 429, a 500, a dropped
connection, a timeout, a truncated body, an invalid answer, an answer in
prose, a tool error, a tool that hangs), played back from its journal (or,
without one, from its test model run) by a fault layer between the agent's
provider client and tools; each run must end as the case's faults declare,
else as the fault's default. The fault x case table follows the cases.

The runs from journals or of the test model, fault runs included, take 10
minutes in all: past that, each later one fails as not run.

One line a case (PASS, FAIL or DIVERGED agent/case (time)), what failed
below it, then a summary; --json prints one object a case (and a fault
run), --format junit a JUnit XML report.

Exit codes: 0 every case passed; 1 a case failed or diverged, a fault run
failed, or an agent does not compile; 2 usage error.`,
		Example: `  agentc test examples/
  agentc test --faults examples/
  agentc test --record --run 'issue-triage/.*' ./agents/...
  agentc test --samples 5 agent.cue`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != "json" {
					return cli.UsageError("--json is --format json; it excludes --format %s", format)
				}
				format = "json"
			}
			write, ok := testFormats[format]
			if !ok {
				return cli.UsageError("--format %q: want one of %s", format, strings.Join(slices.Sorted(maps.Keys(testFormats)), ", "))
			}
			mode := ""
			switch {
			case cmd.Flags().Changed("samples") && samples < 1:
				return cli.UsageError("--samples must be at least 1")
			case faults && (live || cmd.Flags().Changed("samples")):
				return cli.UsageError("--faults plays back recorded runs: it excludes --live and --samples")
			case record && (live || cmd.Flags().Changed("samples")):
				return cli.UsageError("--record records one run of each case: it excludes --live and --samples")
			case replayOnly && (record || live || cmd.Flags().Changed("samples")):
				return cli.UsageError("--replay-only runs recorded cases alone: it excludes --record, --live and --samples")
			case record:
				mode = modeRecord
			case replayOnly:
				mode = modeReplayOnly
			case live || cmd.Flags().Changed("samples"):
				mode = modeLive
			}
			if samples < 1 {
				samples = 1
			}
			var filter *regexp.Regexp
			if run != "" {
				var err error
				if filter, err = regexp.Compile(run); err != nil {
					return cli.UsageError("--run: %v", err)
				}
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			// A stop signal ends the runs in flight, and no other starts;
			// what ran is printed, and the command exits with the signal's
			// code.
			ctx, stopSignals := runcmd.OnStopSignal(cmd.Context(), e, "stopping the tests")
			defer stopSignals()
			// An agent that does not build is reported (vet's way) and
			// fails the command; the others are tested all the same.
			bs, uncompiled := buildAll(e, args, e.Stderr, false)
			if xe, ok := errors.AsType[*cli.ExitError](uncompiled); uncompiled != nil && (!ok || xe.Code != cli.ExitFindings || len(bs) == 0) {
				return uncompiled
			}
			var results []caseResult
			tmp := ""
			if faults {
				// A case without a journal is played back from its test
				// model run, journaled here.
				var err error
				if tmp, err = os.MkdirTemp("", "agentc-test-"); err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
			}
			// The constraints are checked in bounded children of this
			// program: a model's answer must not buy unbounded work.
			prog, _ := cueproc.Self()
			// And in all within a budget: a comprehension can make
			// thousands of checks from a few bytes of a manifest.
			budget := agenttest.NewBudget(agenttest.CheckTime)
			// The runs too, which a case's journal or check does not bound.
			runs := agenttest.NewBudget(runTime)
			start := time.Now()
			var jobs []*faultJob
			declared := 0 // the cases there are, matched or not
		agents:
			for i, b := range bs {
				dir := "."
				if files := b.inst.Files; len(files) > 0 && files[0] != "-" {
					dir = filepath.Dir(files[0])
				}
				chk := agenttest.New(b.plan, relPath(absPath(dir), e.Dir), prog).WithBudget(budget)
				for _, name := range slices.Sorted(maps.Keys(b.plan.Tests)) {
					declared++
					id := b.plan.Agent.Name + "/" + name
					if filter != nil && !filter.MatchString(id) {
						continue
					}
					if ctx.Err() != nil {
						break agents
					}
					// Two agents may share a name (in two directories):
					// each journals its test model runs apart.
					own := tmp
					if tmp != "" {
						own = filepath.Join(tmp, strconv.Itoa(i))
					}
					r, rep, journal := runTestCase(ctx, e, b, dir, chk, runs, name, mode, samples, own)
					results = append(results, r)
					if format == "text" {
						writeCaseText(e.Stdout, r)
					}
					if r.interrupted {
						jobs = nil
						break agents
					}
					if faults {
						jobs = append(jobs, &faultJob{b: b, dir: dir, chk: chk, name: name, base: r, rep: rep, journal: journal, after: len(results) - 1})
					}
				}
			}
			if filter != nil && declared > 0 && len(results) == 0 && ctx.Err() == nil {
				// A --run that selects nothing would pass having tested
				// nothing: most often a misspelt name.
				return cli.UsageError("--run %q matches none of the %d test cases (each is named agent/case)", run, declared)
			}
			results = runFaultJobs(ctx, e, jobs, runs, results)
			stopped := stopSignals()
			if err := write(e, testRun{results: results, took: time.Since(start), stopped: stopped != 0, uncompiled: uncompiled != nil}); err != nil {
				return err
			}
			if stopped != 0 {
				return &cli.ExitError{Code: stopped}
			}
			if uncompiled != nil {
				return uncompiled
			}
			if slices.ContainsFunc(results, func(r caseResult) bool { return r.Status != statusPass && r.Status != statusNA }) {
				return &cli.ExitError{Code: cli.ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&record, "record", false, "run each case against the agent's provider and record its journal in testdata/<agent>/<case>.jsonl")
	cmd.Flags().BoolVar(&replayOnly, "replay-only", false, "run only the cases with a journal; a case without one fails, and no model or tool of it runs")
	cmd.Flags().BoolVar(&live, "live", false, "run each case against the agent's provider, recording nothing")
	cmd.Flags().IntVar(&samples, "samples", 1, "run each case this many times live; it passes when the share that pass is at least its min_pass")
	cmd.Flags().StringVar(&run, "run", "", "run only the cases whose agent/case matches this regular expression")
	cmd.Flags().StringVar(&format, "format", "text", "how to print results: text, json or junit")
	cmd.Flags().BoolVar(&faults, "faults", false, "run each case again under each fault of the fault matrix, and print its table")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a case (--format json)")
	return cmd
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// caseResult is what agentc test says of one case. Samples, Passed and
// MinPass are set under --samples, Passed even when none passed.
type caseResult struct {
	Agent  string `json:"agent"`
	Case   string `json:"case"`
	Fault  string `json:"fault,omitempty"`
	Status string `json:"status"`
	// Expected is how a fault run must end; Reason, why it is n/a.
	Expected   string              `json:"expected,omitempty"`
	Reason     string              `json:"reason,omitempty"`
	Mode       string              `json:"mode"`
	Journal    string              `json:"journal,omitempty"`
	Samples    int                 `json:"samples,omitempty"`
	Passed     *int                `json:"passed,omitempty"`
	MinPass    float64             `json:"min_pass,omitempty"`
	DurationMS float64             `json:"duration_ms"`
	Failures   []agenttest.Failure `json:"failures,omitempty"`
	// interrupted says a stop signal ended the run: agentc test starts
	// no other, and exits 130.
	interrupted bool
}

// runTime is the time the runs of one agentc test command may take in
// all: the cases' runs from a journal or of the test model, and their
// fault runs. Each run is bounded (its deadline, plan.MaxTemplateSteps),
// but a comprehension makes thousands of cases from a few bytes of a
// manifest, and a prompt that renders up to its bound cost each case of
// --replay-only most of a second before its journal was read: 80 cases
// held a command for a minute, 20,000 would hold CI for hours. Live and
// recorded runs are not counted: the person asks for them, and pays for
// them. A variable, which tests lower.
var runTime = 10 * time.Minute

// notRun is the failure of a run that did not start: runs has been spent.
func notRun(runs *agenttest.Budget) []agenttest.Failure {
	return []agenttest.Failure{{Msg: fmt.Sprintf("not run: the runs of this command's cases have taken the %s they may take in all; test fewer cases a command (--run)", runs.Total())}}
}

// runTestCase runs one case as mode says ("" for offline) and checks it.
// A run from a journal or of the test model spends runs, and none starts
// once it is spent. With tmp set (--faults), a test model run is journaled
// there; it returns the report of the (last) run, and the journal of the
// run, if any.
func runTestCase(ctx context.Context, e cli.Env, b built, dir string, chk *agenttest.Checker, runs *agenttest.Budget, name, mode string, samples int, tmp string) (r caseResult, rep *agentrt.Report, played string) {
	t := b.plan.Tests[name]
	journal := filepath.Join(dir, "testdata", b.plan.Agent.Name, name+".jsonl")
	r = caseResult{Agent: b.plan.Agent.Name, Case: name, Mode: mode, Journal: relPath(absPath(journal), e.Dir)}
	c := runcmd.Case{Input: t.Input}
	switch mode {
	case modeRecord:
		// The tree may come from elsewhere: a link planted at the journal,
		// or above it, must not lead the write out of the agent's directory.
		if err := userfile.Beneath(dir, journal); err != nil {
			r.Status, r.Failures = statusFail, []agenttest.Failure{{Msg: err.Error()}}
			return r, nil, ""
		}
		c.Record = journal
	case modeLive:
		r.Journal = ""
	default:
		if _, err := os.Stat(journal); err == nil {
			// Read only from the agent's directory: a link planted at the
			// journal, or above it, must not have a file of the machine
			// read (and a fault of its quoted).
			if err := userfile.Beneath(dir, journal); err != nil {
				r.Mode, r.Status, r.Failures = modeReplay, statusFail, []agenttest.Failure{{Msg: err.Error()}}
				return r, nil, ""
			}
			r.Mode, c.Replay = modeReplay, journal
		} else if errors.Is(err, fs.ErrNotExist) && mode == modeReplayOnly {
			r.Mode, r.Status = modeReplay, statusFail
			r.Failures = []agenttest.Failure{{Msg: fmt.Sprintf("no journal %s: with --replay-only a case runs only from its journal (record it with agentc test --record)", r.Journal)}}
			return r, nil, ""
		} else if errors.Is(err, fs.ErrNotExist) {
			r.Mode, c.Model, r.Journal = modeTestModel, "test", ""
		} else {
			r.Status, r.Failures = statusFail, []agenttest.Failure{{Msg: err.Error()}}
			return r, nil, ""
		}
	}
	played = c.Replay
	switch {
	case mode == modeRecord:
		played = journal
	case r.Mode == modeTestModel && tmp != "":
		c.Record = filepath.Join(tmp, b.plan.Agent.Name, name+".jsonl")
		played = c.Record
	}
	if r.Mode == modeReplay || r.Mode == modeTestModel {
		if runs.Spent() {
			r.Status, r.Failures = statusFail, notRun(runs)
			return r, nil, ""
		}
		start := time.Now()
		defer func() { runs.Spend(time.Since(start)) }()
	}
	start := time.Now()
	defer func() { r.DurationMS = float64(time.Since(start).Microseconds()) / 1000 }()
	if mode != modeLive {
		samples = 1
	}
	var last []agenttest.Failure
	passed := 0
	for range samples {
		var err error
		rep, err = runcmd.RunCase(ctx, e, b.plan, dir, c)
		var fails []agenttest.Failure
		switch {
		case err != nil:
			fails = []agenttest.Failure{{Msg: err.Error()}}
		case rep.Interrupted:
			r.Status, r.Failures, r.interrupted = statusFail, []agenttest.Failure{{Msg: "interrupted"}}, true
			return r, rep, played
		case rep.Divergence != nil:
			r.Status = statusDiverged
			r.Failures = divergence(rep.Divergence, c.Replay)
			return r, rep, played
		default:
			fails = chk.Check(ctx, name, rep, agenttest.Options{ShapeOnly: r.Mode == modeTestModel})
			if ctx.Err() != nil {
				// A stop signal came while the answer was checked: the
				// check's children may have ended with it.
				r.Status, r.Failures, r.interrupted = statusFail, []agenttest.Failure{{Msg: "interrupted"}}, true
				return r, rep, played
			}
		}
		if len(fails) == 0 {
			passed++
		} else {
			last = fails
		}
	}
	r.Status = statusPass
	if samples > 1 {
		r.Samples, r.Passed, r.MinPass = samples, &passed, t.MinPass
		// The share, divided: min_pass × samples rounds above the
		// count it names (0.28 × 25 is a little more than 7), and
		// failed a case that met it. A share that is min_pass exactly
		// divides to the same double as min_pass's.
		if float64(passed)/float64(samples) < t.MinPass {
			r.Status, r.Failures = statusFail, last
		}
		return r, rep, played
	}
	if len(last) > 0 {
		r.Status, r.Failures = statusFail, last
	}
	return r, rep, played
}

// faultJob is the fault runs of one case: what they need of the case's
// run, and once made, their results.
type faultJob struct {
	b       built
	dir     string
	chk     *agenttest.Checker
	name    string
	base    caseResult
	rep     *agentrt.Report
	journal string
	after   int // the case's place in the results
	out     []caseResult
}

// faultCases bounds the cases whose fault runs are made at once.
const faultCases = 4

// runFaultJobs makes the fault runs of the cases once every case has run:
// they start no process, so they never run beside a case's run, which
// may (its tools'), and the fault runs of several cases go at once. It
// returns results with each case's fault runs after it. A stop signal
// (ctx's end) ends the runs in flight, and no case's runs start after
// it: those are left out.
func runFaultJobs(ctx context.Context, e cli.Env, jobs []*faultJob, runs *agenttest.Budget, results []caseResult) []caseResult {
	if len(jobs) == 0 {
		return results
	}
	sem := make(chan struct{}, faultCases)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			j.out = runFaults(ctx, e, j.b, j.dir, j.chk, runs, j.name, j.base, j.rep, j.journal)
		})
	}
	wg.Wait()
	out := make([]caseResult, 0, len(results)+len(jobs)*len(fault.Kinds))
	next := 0
	for i, r := range results {
		out = append(out, r)
		for next < len(jobs) && jobs[next].after == i {
			out = append(out, jobs[next].out...)
			next++
		}
	}
	return out
}

// runFaults runs the case name again under each fault, played back from
// the journal of its run base (whose report is rep), and checks how each
// run ends. A case that did not pass has no fault runs to compare. The
// runs are independent, and most of their time is waiting (a 429's
// Retry-After, a retry's backoff, a hang's deadline), so they run at
// once, sharing the journal's script (which only one run's memory holds);
// their results keep the matrix's order.
func runFaults(ctx context.Context, e cli.Env, b built, dir string, chk *agenttest.Checker, runs *agenttest.Budget, name string, base caseResult, rep *agentrt.Report, journal string) []caseResult {
	t := b.plan.Tests[name]
	var script *fault.Script
	var loadErr error
	if base.Status == statusPass && journal != "" {
		script, loadErr = fault.Load(journal)
	}
	out := make([]caseResult, len(fault.Kinds))
	var wg sync.WaitGroup
	for i, k := range fault.Kinds {
		r := caseResult{Agent: base.Agent, Case: name, Fault: k.Name, Mode: base.Mode, Journal: base.Journal, Expected: t.Faults[k.Name]}
		if r.Expected == "" {
			r.Expected = fault.Default(k, b.plan)
		}
		applies, why := false, ""
		switch {
		case base.Status != statusPass:
			why = "the case did not pass"
		case journal == "":
			why = "the case has no recorded run to play back"
		case loadErr != nil:
			r.Status, r.Failures = statusFail, []agenttest.Failure{{Msg: loadErr.Error()}}
			out[i] = r
			continue
		default:
			applies, why = fault.Applies(k, b.plan, script)
		}
		if !applies {
			r.Status, r.Reason = statusNA, why
			out[i] = r
			continue
		}
		wg.Go(func() {
			if runs.Spent() {
				r.Status, r.Failures = statusFail, notRun(runs)
				out[i] = r
				return
			}
			start := time.Now()
			got, err := runcmd.RunCase(ctx, e, b.plan, dir, runcmd.Case{Input: t.Input, Replay: journal, Fault: k.Name, Script: script})
			r.DurationMS = float64(time.Since(start).Microseconds()) / 1000
			runs.Spend(time.Since(start))
			switch {
			case err != nil:
				r.Status, r.Failures = statusFail, []agenttest.Failure{{Msg: err.Error()}}
			case got.Interrupted:
				r.Status, r.Failures, r.interrupted = statusFail, []agenttest.Failure{{Msg: "interrupted"}}, true
			default:
				r.Status, r.Failures = statusPass, chk.CheckFault(name, k.Name, r.Expected, rep, got)
				if len(r.Failures) > 0 {
					r.Status = statusFail
				}
			}
			out[i] = r
		})
	}
	wg.Wait()
	return out
}

// divergence says how a replay of the journal file departed from it, and
// what to do: a journal whose last line was cut short lacks that effect,
// which is said as such, not as the agent's change.
func divergence(d *agentrt.Divergence, file string) []agenttest.Failure {
	out := []agenttest.Failure{{Msg: d.Reason}}
	for _, c := range d.Changes {
		out = append(out, agenttest.Failure{Msg: "  " + c})
	}
	if j, err := journal.OpenShared(file); err == nil && j.Truncated {
		return append(out, agenttest.Failure{Msg: "the journal's last line was cut short (a write a crash cut off, or an edit that took its final newline): re-record with agentc test --record"})
	}
	return append(out, agenttest.Failure{Msg: "the agent no longer makes the recorded requests: re-record with agentc test --record"})
}

// note says what a case's line leaves out.
func (r caseResult) note() string {
	switch {
	case r.Mode == modeTestModel:
		return " (test model: shape only)"
	case r.Samples > 1:
		return fmt.Sprintf(" (%d/%d samples passed, min_pass %g)", *r.Passed, r.Samples, r.MinPass)
	case r.Mode == modeRecord:
		return " (recorded " + r.Journal + ")"
	case r.Mode == modeLive:
		return " (live)"
	}
	return ""
}

// id names a case, or a fault run of it.
func (r caseResult) id() string {
	if r.Fault != "" {
		return r.Agent + "/" + r.Case + " [" + r.Fault + "]"
	}
	return r.Agent + "/" + r.Case
}

func writeCaseText(w io.Writer, r caseResult) {
	fmt.Fprintf(w, "%s %s (%.2fs)%s\n", r.Status, r.id(), r.DurationMS/1000, r.note())
	for _, f := range r.Failures {
		// A failure quotes answers and journals, whose keys a divergence
		// names: one line of text, nothing in it acting on the terminal.
		fmt.Fprintf(w, "    %s\n", termtext.Escape(f.String()))
	}
}

// testRun is what the formats print.
type testRun struct {
	results []caseResult
	took    time.Duration // how long the runs took, end to end
	stopped bool          // a stop signal ended the runs
	// uncompiled says an agent did not build: the command fails, whatever
	// its cases did.
	uncompiled bool
}

// testFormats print a test run's results.
var testFormats = map[string]func(e cli.Env, t testRun) error{
	"text":  writeTestSummary,
	"json":  writeTestJSON,
	"junit": writeTestJUnit,
}

// writeTestSummary ends the text output: the cases' lines are written as
// they end.
func writeTestSummary(e cli.Env, t testRun) error {
	rs := t.results
	if len(rs) == 0 {
		if !t.stopped && !t.uncompiled {
			fmt.Fprintln(e.Stderr, "agentc: no test cases: an agent declares them in its manifest's tests")
		}
		return nil
	}
	n, nf := map[string]int{}, map[string]int{}
	var cases, faults []caseResult
	var of []int // of each fault run, its case's place in cases
	for _, r := range rs {
		if r.Fault == "" {
			n[r.Status]++
			cases = append(cases, r)
		} else {
			nf[r.Status]++
			faults = append(faults, r)
			of = append(of, len(cases)-1)
		}
	}
	word := "ok"
	switch {
	case t.stopped:
		word = "interrupted"
	case n[statusPass] < len(cases) || nf[statusFail] > 0 || t.uncompiled:
		word = statusFail
	}
	counts := ""
	if len(faults) > 0 {
		writeFaultTable(e.Stdout, cases, faults, of)
		counts = fmt.Sprintf("; faults: %d passed, %d failed, %d n/a", nf[statusPass], nf[statusFail], nf[statusNA])
	}
	if t.uncompiled {
		counts += "; an agent did not compile"
	}
	fmt.Fprintf(e.Stdout, "%s: %d passed, %d failed, %d diverged%s (%.2fs)\n", word, n[statusPass], n[statusFail], n[statusDiverged], counts, t.took.Seconds())
	return nil
}

// writeFaultTable prints the fault x case table, then each fault run that
// failed, with what it did against what was expected. of holds each fault
// run's case, by its place in cases: two agents may share a name.
func writeFaultTable(w io.Writer, cases, faults []caseResult, of []int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "fault")
	for _, c := range cases {
		fmt.Fprintf(tw, "\t%s/%s", c.Agent, c.Case)
	}
	fmt.Fprintln(tw)
	type cell struct {
		c     int
		fault string
	}
	status := map[cell]string{}
	for i, f := range faults {
		status[cell{of[i], f.Fault}] = f.Status
	}
	for _, k := range fault.Kinds {
		fmt.Fprint(tw, k.Name)
		for c := range cases {
			s, ok := status[cell{c, k.Name}]
			if !ok {
				s = "-"
			}
			fmt.Fprintf(tw, "\t%s", s)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, f := range faults {
		if f.Status == statusFail {
			writeCaseText(w, f)
		}
	}
}

func writeTestJSON(e cli.Env, t testRun) error {
	enc := json.NewEncoder(e.Stdout)
	for _, r := range t.results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func writeTestJUnit(e cli.Env, t testRun) error {
	suite := junitSuite{Name: "agentc test"}
	for _, r := range t.results {
		// A case's name and what a failure quotes are the manifest's and
		// the journal's text: escaped as the text format escapes them.
		c := junitCase{Name: termtext.Escape(r.Case), ClassName: termtext.Escape(r.Agent), Time: fmt.Sprintf("%.3f", r.DurationMS/1000)}
		if r.Fault != "" {
			c.Name += " [" + r.Fault + "]"
		}
		suite.Tests++
		if r.Status == statusNA {
			suite.Skipped++
			c.Skipped = &junitSkipped{Message: termtext.Lines(r.Reason)}
		} else if r.Status != statusPass {
			suite.Failures++
			var text strings.Builder
			for _, f := range r.Failures {
				text.WriteString(f.String() + "\n")
			}
			msg := r.Status
			if len(r.Failures) > 0 {
				msg = r.Failures[0].String()
			}
			c.Failures = append(c.Failures, junitFailure{Message: termtext.Lines(msg), Type: r.Status, Text: termtext.Lines(text.String())})
		}
		if note := strings.TrimSpace(r.note()); note != "" {
			c.SystemOut = termtext.Lines(strings.Trim(note, "()"))
		}
		suite.Cases = append(suite.Cases, c)
	}
	return encodeJUnit(e.Stdout, suite)
}
