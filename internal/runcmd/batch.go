package runcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/telemetry"
)

// What a batch's line is (--batch-lines): the run's input, or an item
// object holding it, with the model to run it against and an id.
const (
	linesInput = "input"
	linesItem  = "item"
)

// checkBatchFlags refuses flags that do not go together with --batch, or
// only go with it.
func checkBatchFlags(f Flags, changed func(string) bool) error {
	if changed("pool-tokens") && f.poolTokens <= 0 {
		return UsageError("--pool-tokens must be positive")
	}
	if f.batch == "" {
		for _, name := range []string{"parallel", "progress-every", "batch-lines", "batch-files"} {
			if changed(name) {
				return UsageError("--%s goes with --batch", name)
			}
		}
		if f.quiet && f.stream {
			return UsageError("--quiet and --stream exclude each other: --stream shows the replies on standard error as they arrive")
		}
		return nil
	}
	switch {
	case changed("input"):
		return UsageError("--input and --batch exclude each other: a batch's inputs are the lines of its file")
	case f.report:
		return UsageError("--report is for a single run: each result line of a batch holds its item's outcome, bound, answer and usage")
	case f.stream:
		return UsageError("--stream is for a single run: a batch's replies would interleave; each result line holds its item's answer")
	case f.parallel < 1 || f.parallel > batch.MaxParallel:
		return UsageError("--parallel must be between 1 and %d", batch.MaxParallel)
	case f.progressEvery < 0:
		return UsageError("--progress-every must not be negative")
	case f.batchLines != linesInput && f.batchLines != linesItem:
		return UsageError("--batch-lines %q: give input (each line is the run's input) or item (each line is {\"input\": …, \"model\": \"PROVIDER:MODEL\", \"id\": \"…\"})", f.batchLines)
	case changed("batch-files"):
		if f.batchFiles == "" {
			return UsageError("--batch-files names no directory")
		}
		if fi, err := os.Stat(f.batchFiles); err != nil {
			return UsageError("--batch-files: %v", err)
		} else if !fi.IsDir() {
			return UsageError("--batch-files %s: not a directory: a line's \"@PATH\" names a file beneath it", f.batchFiles)
		}
	}
	for _, j := range []struct{ flag, dir string }{{"--record", f.record}, {"--replay", f.replay}} {
		if j.dir == "" {
			continue
		}
		if fi, err := os.Stat(j.dir); err == nil && !fi.IsDir() {
			return UsageError("%s %s: a batch keeps its journals in a directory, one per item, and %s is a file", j.flag, j.dir, j.dir)
		}
	}
	return nil
}

// runBatch runs the agent once per line of --batch, printing a result line
// per item on stdout in input order, and a summary on stderr.
func runBatch(ctx context.Context, s session, p *plan.Plan, opts agentrt.Options, files *fileInputs) error {
	e, dir, f, hosts, secrets, tel := s.e, s.dir, s.f, s.hosts, s.secrets, s.tel
	in, total, closeIn, err := batchInput(e, f.batch)
	if err != nil {
		return err
	}
	defer closeIn()
	var journals *batch.Journals
	var servers map[string]tool.ServerRecord
	if d := f.record + f.replay; d != "" {
		journals = &batch.Journals{Dir: d, Replay: f.replay != ""}
		if journals.Replay {
			if _, err := os.Stat(d); err != nil {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--replay: %w", err)}
			}
		}
		// The directory's lock comes first, before anything is read.
		if err := journals.Open(); err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		defer journals.Close()
		if h, err := journals.FirstHeader(); err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		} else if h != nil && len(h.Tools) > 0 {
			var ht headerTools
			if err := json.Unmarshal(h.Tools, &ht); err != nil {
				return &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s: a journal's header's tools: %v", d, err)}
			}
			servers = ht.Servers
		}
	}
	// Written only once the directory's lock is held: a second batch
	// refused it must not empty the first's --events file.
	events, closeEvents, err := batchEvents(f.events, secrets, e.Stderr)
	if err != nil {
		return err
	}
	defer closeEvents()
	if tel != nil {
		events = batchTelemetry(ctx, tel, events)
		opts.Content = tel.Content()
	}
	toolEvents := func(ev agentrt.Event) { events(-1, ev) }
	opts.Secrets = secrets
	opts.Provider = f.model
	// --base-url is the server of the agent's own provider, not of an
	// item's model of another.
	baseFor := p.Agent.Model.Provider
	if f.model != "" {
		baseFor = f.model
	}
	modelFor := newModelFor(providerFlags{model: f.model, seed: f.seed, baseURL: f.baseURL, baseFor: baseFor, keyHosts: hosts, stall: f.stall, extra: e.Providers, pace: s.pace, log: e.Stderr, secrets: secrets}, os.Getenv, toolEvents)
	if f.replay != "" {
		modelFor = func(*plan.Plan) (agentrt.Model, error) { return offlineModel{}, nil }
	}
	if opts.Model, err = modelFor(p); err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	opts.FallbackModel = modelFor
	ctx, sigs := onStopSignal(ctx, e)
	defer sigs.stop()
	if e.Program {
		release := tool.AdoptOrphans()
		defer release()
	}
	var seen serversSeen
	tools, closeTools, err := tool.Build(ctx, p, tool.Env{
		BaseDir: dir, ModelFor: modelFor, Events: toolEvents, HTTPTransport: e.HTTPTransport,
		Servers: servers, Offline: f.replay != "", Provider: f.model, Secrets: secrets, Pool: opts.Pool, Prices: opts.Prices,
		OnServer: seen.add,
	})
	if err != nil {
		return toolsError(err, sigs, "the batch diverged from its journals")
	}
	defer closing(e, closeTools)
	opts.Tools = tools
	r, err := agentrt.New(p, opts)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	if journals != nil {
		ht, err := seen.header()
		if err != nil {
			return err
		}
		journals.Header = journal.Header{Plan: string(p.Digests.Plan), OutputSuffix: p.OutputSuffix(), Agent: p.Agent.Name, Tools: ht, CalleeBudget: true, ExactUsage: r.ExactUsage()}
	}
	if f.model == "test" && p.Agent.Model.Provider != "test" && f.replay == "" {
		// The items' events are not printed: say once who answers.
		fmt.Fprintf(e.Stderr, "agentc: batch: offline: the test model answers in place of %s %s\n", p.Agent.Model.Provider, p.Agent.Model.Name)
	}
	if opts.Pool != nil && p.Agent.Model.MaxOutputTokens == 0 {
		fmt.Fprintf(e.Stderr, "agentc: agent %s declares no model.max_output_tokens: each call reserves all the pool has left, so calls go one at a time, and a reply longer than that could still overspend it\n", p.Agent.Name)
	}
	bo := batch.Options{
		Parallel: f.parallel,
		Journals: journals,
		Events:   events,
		Notes:    func(s string) { fmt.Fprintf(e.Stderr, "agentc: %s\n", s) },
		MaxLine:  MaxInput,
	}
	bo.Prepare = files.lines(f)
	if f.batchLines == linesItem {
		bo.Items = true
		bo.RunnerFor = itemRunners(e, p, f, opts, modelFor)
	}
	b := batch.New(r, bo)
	maxAge, err := PricesMaxAge()
	if err != nil {
		return err
	}
	if f.model != "test" {
		// The summary prices the batch: its table's age is said first.
		WarnStalePrices(e.Stderr, opts.Prices, p, time.Now(), maxAge)
	}
	again := "with --record DIR, running it again would go on where it stopped"
	if journals != nil && !journals.Replay {
		again = "run the same command again to go on: what completed is served from the journals"
	}
	// A call's approval asked on the terminal: the bar would be drawn
	// over the question.
	asks := len(p.Agent.Capabilities.Tools) > 0 && asksOnTerminal(e, f)
	return driveBatch(ctx, e, f, b, in, total, sigs, opts.Pool, again, asks)
}

// driveBatch runs a batch, printing its result lines in input order on
// stdout, its progress and summary on stderr, and returns the exit code's
// error; again says how to go on after an interrupt, and asks that the
// runs may ask on the terminal for approvals.
func driveBatch(ctx context.Context, e Env, f Flags, b *batch.Batch, in io.Reader, total int64, sigs *signals, pool *agentrt.Pool, again string, asks bool) error {
	prog := startProgress(e, f, b, total, asks)
	var exit batchExit
	var unapproved []string // the lines of items that ended on a call no one approved
	// Each result line is escaped as a run's answer is (shownJSON); it
	// is written whole, and holds no line feed of its own.
	enc := json.NewEncoder(termtext.Writer(e.Stdout))
	enc.SetEscapeHTML(false)
	sum, err := b.Run(ctx, in, func(res batch.Result) error {
		exit.add(res.Report)
		if res.Report != nil && res.Report.Unapproved {
			unapproved = append(unapproved, strconv.Itoa(res.Line))
		}
		return enc.Encode(res)
	})
	prog.stop()
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	printSummary(e.Stderr, sum, pool, f.poolTokens)
	if len(unapproved) > 0 {
		how := "run them on a terminal"
		if f.batch == "-" {
			how = "give them in a file, on a terminal" // not read from it
		}
		fmt.Fprintf(e.Stderr, "agentc: batch: %d items stopped at a call that needed approval no one could give (lines %s): %s, or with --approve yes or no\n", len(unapproved), strings.Join(unapproved, ", "), how)
	}
	code := exit.code()
	if sum.Interrupted {
		code = exitInterrupted
		if c := sigs.code(); c != 0 {
			code = c
		}
		fmt.Fprintf(e.Stderr, "agentc: the batch was interrupted; %s\n", again)
	}
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code}
}

// batchInput opens the batch's input: a file, or standard input for "-".
// total is the number of items a file holds (its lines that are not
// blank), for the progress bar; 0 when it is not known.
func batchInput(e Env, name string) (in io.Reader, total int64, closeIn func(), err error) {
	if name == "-" {
		return e.Stdin, 0, func() {}, nil
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--batch: %w", err)}
	}
	// A file, or a pipe (a FIFO, a shell's <(…)) to stream items from;
	// not a device, whose bytes never end in a line (/dev/zero).
	if fi, err := file.Stat(); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeNamedPipe == 0 {
		file.Close()
		return nil, 0, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--batch: %s is %s, not a file of items or a pipe (--batch - reads standard input)", name, userfile.Kind(fi.Mode()))}
	}
	if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
		total = batch.Count(file, MaxInput)
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			file.Close()
			return nil, 0, nil, &ExitError{Code: ExitFindings, Err: err}
		}
	}
	return file, total, func() { file.Close() }, nil
}

// batchTelemetry records each item's run as a trace of its own, then
// passes its events on to next. Events of no item (called agents' runs,
// provider retries: the tools and models are shared by the items) are
// not traced.
func batchTelemetry(ctx context.Context, tel *telemetry.Telemetry, next func(int, agentrt.Event)) func(int, agentrt.Event) {
	var mu sync.Mutex
	recs := map[int]*telemetry.Recorder{}
	return func(i int, ev agentrt.Event) {
		if i >= 0 {
			mu.Lock()
			rec := recs[i]
			if rec == nil {
				rec = tel.Recorder(ctx)
				recs[i] = rec
			}
			if ev.Type == agentrt.EventRunEnd && ev.Agent == "" {
				delete(recs, i)
			}
			mu.Unlock()
			rec.Event(ev)
		}
		next(i, ev)
	}
}

// batchEvents returns where a batch's events go: --events FILE, as JSON
// lines with the item's index (none for events of no item: tools'
// servers, provider retries), or nowhere. Progress on stderr stands in
// for a single run's event lines.
func batchEvents(name string, secrets *redact.Set, stderr io.Writer) (func(int, agentrt.Event), func(), error) {
	if name == "" {
		return func(int, agentrt.Event) {}, func() {}, nil
	}
	file, err := createEvents(name)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(secrets.Writer(file))
	type indexed struct {
		Index *int `json:"index,omitempty"`
		agentrt.Event
	}
	return func(i int, ev agentrt.Event) {
		ev.Message = secrets.String(ev.Message)
		line := indexed{Event: ev}
		if i >= 0 {
			line.Index = &i
		}
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(line)
	}, func() { file.close(stderr) }, nil
}

// batchExit is a batch's exit code: 0 when every item answered within
// every bound; 6 when an item diverged from its journal; else the code a
// single run of the failed items exits with, when they all agree on it,
// and 1 when they do not.
type batchExit struct {
	failed, diverged, mixed bool
	first                   int
}

func (x *batchExit) add(rep *agentrt.Report) {
	code := runExit(rep)
	if code == ExitOK {
		return
	}
	x.diverged = x.diverged || code == exitDiverged
	x.mixed = x.mixed || x.failed && code != x.first
	if !x.failed {
		x.failed, x.first = true, code
	}
}

func (x *batchExit) code() int {
	switch {
	case x.diverged:
		return exitDiverged
	case !x.failed:
		return ExitOK
	case x.mixed:
		return ExitFindings
	}
	return x.first
}

var numbers = message.NewPrinter(language.English)

// CostText says what a cost is, in words: "$0.0123", marked when it is
// an estimate and naming the models with no price.
func CostText(c agentrt.Cost) string {
	s := fmt.Sprintf("$%.4f", c.USD)
	switch {
	case len(c.Unpriced) > 0:
		s += fmt.Sprintf(" (estimated: no price for %s)", strings.Join(c.Unpriced, ", "))
	case c.Estimated:
		s += " (estimated: usage counted locally)"
	}
	return s
}

// printSummary says on w what the batch did.
func printSummary(w io.Writer, s batch.Summary, pool *agentrt.Pool, poolTokens int64) {
	bad := ""
	if s.BadLines > 0 {
		bad = numbers.Sprintf(" (%d of them bad input lines)", s.BadLines)
	}
	items := "items"
	if s.Done == 1 {
		items = "item"
	}
	numbers.Fprintf(w, "agentc: batch: %d %s: %d succeeded, %d failed%s; %d tokens (%d paid, %d served from journals); %s; %s\n",
		s.Done, items, s.Done-s.Failed, s.Failed, bad, s.Tokens, s.Paid, s.Tokens-s.Paid, CostText(s.Cost), s.Duration.Round(1e6))
	if pool != nil {
		numbers.Fprintf(w, "agentc: pool: %d tokens: %d spent, %d left\n", poolTokens, pool.Spent(), pool.Remaining())
	}
}

// MaxItemModels and MaxItemModel bound the models a batch's lines name:
// how many (each a plan and a runner kept for the batch, about 30 KB:
// 30,000 lines naming one each held 932 MB) and how long each name is.
const (
	MaxItemModels = 256
	MaxItemModel  = 256
)

// itemRunners returns what makes the runner of an item line that names a
// model: the plan made for that model, as --model makes it, run with the
// batch's options and tools. A model's runner is made once and shared by
// its items; the first says on standard error which plan it runs. With
// --model test (or --replay) the test model (or the journals) answer
// every item, in place of the model its line names.
func itemRunners(e Env, p *plan.Plan, f Flags, opts agentrt.Options, modelFor func(*plan.Plan) (agentrt.Model, error)) func(string) (*agentrt.Runner, error) {
	type made struct {
		r   *agentrt.Runner
		err error
	}
	var mu sync.Mutex
	runners := map[string]made{}
	return func(name string) (*agentrt.Runner, error) {
		mu.Lock()
		defer mu.Unlock()
		if m, ok := runners[name]; ok {
			return m.r, m.err
		}
		// Each model a line names is a plan and a runner kept for the
		// batch: the lines' author must not grow them without bound.
		if len(name) > MaxItemModel {
			return nil, fmt.Errorf("the model's name is longer than the %d bytes a batch line's model may be", MaxItemModel)
		}
		if len(runners) >= MaxItemModels {
			return nil, fmt.Errorf("the batch's lines name more than %d models; one batch runs at most that many", MaxItemModels)
		}
		r, err := itemRunner(e, p, f, opts, modelFor, name)
		runners[name] = made{r, err}
		return r, err
	}
}

func itemRunner(e Env, p *plan.Plan, f Flags, opts agentrt.Options, modelFor func(*plan.Plan) (agentrt.Model, error), name string) (*agentrt.Runner, error) {
	provider, model, err := parseModel(name)
	if err != nil {
		return nil, fmt.Errorf("model %q: %v", name, strings.TrimPrefix(err.Error(), fmt.Sprintf("--model %q: ", name)))
	}
	own := p.Agent.Model
	q := p
	switch {
	case provider == "test":
		if f.model == "" {
			// A replay too: the journal's requests name the test model.
			opts.Provider = "test"
		}
	case provider == own.Provider && (model == "" || model == own.Name):
	case f.retarget == nil && f.model == "test":
		// The test model answers in its place: the plan's own will do.
	case f.retarget == nil:
		return nil, fmt.Errorf("model %q: this plan was compiled for %s %s, and %s runs a plan only against its own model or the test model: compile the manifest for the model (agentc run)", name, own.Provider, own.Name, RuntimeProgram)
	default:
		if q, err = f.retarget(p, provider, model); err != nil {
			return nil, fmt.Errorf("model %q: %v", name, err)
		}
		if f.model == "test" {
			break // the test model answers in its place, as said
		}
		fmt.Fprintf(e.Stderr, "agentc: batch: items naming %s run against %s %s (plan %s)\n", name, q.Agent.Model.Provider, q.Agent.Model.Name, q.Digests.Plan)
	}
	if opts.Provider == "test" && f.replay == "" {
		opts.Model = &testmodel.Model{Seed: f.seed}
	} else if opts.Model, err = modelFor(q); err != nil { // a replay's answers no call
		return nil, fmt.Errorf("model %q: %v", name, err)
	}
	return agentrt.New(q, opts)
}
