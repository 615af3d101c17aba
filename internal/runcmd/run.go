package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/cost"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/fault"
	"agentc.dev/agentc/runtime/pace"
	"agentc.dev/agentc/runtime/provider/retry"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/telemetry"
)

// Exit codes of a run, a contract scripts branch on.
const (
	exitDeadline    = 3
	exitToolBudget  = 4
	exitTokenBudget = 5
	exitDiverged    = 6
	exitRounds      = 7
	exitAnswerTurns = 8
	exitInterrupted = 130
)

// loadLocked loads the agent at path and checks it against its lock
// file, found from the agent's own directory whatever --dir says, for the
// agent and every agent it calls, before anything else is read.
func loadLocked(e Env, compile LoadFunc, f Flags, path string) (*plan.Plan, string, error) {
	p, dir, err := load(e, compile, path, f.prices)
	if err != nil {
		return nil, "", err
	}
	lock, err := openLock(e, f, dir)
	if err != nil {
		return nil, "", err
	}
	matched, err := lock.check(p, path)
	if err != nil {
		return nil, "", err
	}
	if !matched {
		if err := lock.checkCallees(p, dir); err != nil {
			return nil, "", err
		}
	}
	return p, dir, nil
}

// calleeFiles are the manifests and plans of the agents p calls, and of
// theirs, where dir is p's directory: a run's --events or --record
// written over one would destroy an agent's source, as compile -o would.
func calleeFiles(p *plan.Plan, dir string) []userfile.Named {
	var out []userfile.Named
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		c := p.Callees[name]
		path, cdir := c.Within(dir)
		out = append(out, userfile.Named{What: "the called agent", Path: path})
		out = append(out, calleeFiles(c.Plan, cdir)...)
	}
	return out
}

// runExit maps a report to the exit code: 0 answered within every bound;
// 3, 4, 5, 7, 8 the bound that ended the run (5 also when an answer
// arrived and the token budget or pool was spent); 9 a call needed
// approval no one could give; 130 interrupted (129 or 143 when SIGHUP or
// SIGTERM did it, see stopSignals); 1 failed otherwise.
func runExit(rep *agentrt.Report) int {
	switch {
	case rep.Divergence != nil:
		return exitDiverged
	case rep.Interrupted:
		return exitInterrupted
	case rep.Unapproved:
		return exitUnapproved
	case rep.Bound == agentrt.BoundDeadline:
		return exitDeadline
	case rep.Bound == agentrt.BoundToolBudget:
		return exitToolBudget
	case rep.Bound == agentrt.BoundTokenBudget:
		return exitTokenBudget
	case rep.Bound == agentrt.BoundRounds:
		return exitRounds
	case rep.Bound == agentrt.BoundAnswerTurns:
		return exitAnswerTurns
	case rep.Outcome == agentrt.OutcomeOK:
		return ExitOK
	}
	return ExitFindings
}

// Flags are the run verb's flags.
type Flags struct {
	input, model, events, dir, baseURL string
	inputFiles                         []string
	prices                             string
	record, replay                     string
	lock                               string
	seed                               int64
	retarget                           RetargetFunc
	report, requireLock                bool
	deadline, stall                    time.Duration
	toolBudget, tokenBudget, rounds    int
	// A batch's: see batch.go.
	batch         string
	batchLines    string // --batch-lines: input or item
	batchFiles    string // --batch-files: where a line's "@PATH" is
	stream        bool   // --stream
	parallel      int
	poolTokens    int64
	quiet         bool
	progressEvery time.Duration
	remote        Remote      // nil: the run is made here
	remoteBatch   RemoteBatch // nil: a batch's items are run here
	// fault, when set, plays a journal back with a fault injected: the
	// model is the fault layer's server, tools are answered from the
	// journal (see RunCase).
	fault *faultRun
	// approve is --approve; rules, what decides before it (approve.go).
	approve string
	rules   RulesFunc
	// rateLimits are --rate-limit's; configLimits reads the project's
	// (pace.go).
	rateLimits   []string
	configLimits ConfigLimitsFunc
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "the run's input: JSON, @file.json, or - for standard input")
	fs.StringArrayVar(&f.inputFiles, "input-file", nil, "give a file input of the agent: NAME=PATH (PATH - for standard input); repeatable")
	fs.StringVar(&f.model, "model", "", `run against another model, PROVIDER:MODEL (anthropic:claude-sonnet-4-5), or a provider alone for the agent's own model name; "test" is the offline test model`)
	fs.Int64Var(&f.seed, "seed", 0, "vary the test model's values")
	fs.BoolVar(&f.report, "report", false, "print the run report instead of the bare answer")
	fs.BoolVar(&f.stream, "stream", false, "show each model reply on standard error as it arrives, an answer marked provisional until it validates (with --events, as model_delta events too)")
	fs.StringVar(&f.events, "events", "", "write every event to this file as JSON lines")
	fs.StringVar(&f.dir, "dir", "", "resolve the agent's relative paths against this directory")
	fs.StringVar(&f.baseURL, "base-url", "", "the provider's base URL (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the manifest's model.base_url)")
	RegisterStall(fs, &f.stall)
	RegisterRateLimit(fs, &f.rateLimits)
	fs.DurationVar(&f.deadline, "deadline", 0, "override budgets.deadline (e.g. 90s)")
	fs.IntVar(&f.toolBudget, "tool-budget", 0, "override budgets.tools")
	fs.IntVar(&f.tokenBudget, "token-budget", 0, "override budgets.tokens")
	fs.IntVar(&f.rounds, "rounds", 0, "override budgets.rounds (model calls)")
	fs.StringVar(&f.record, "record", "", "journal every model and tool call to this file; an existing journal is resumed")
	fs.StringVar(&f.replay, "replay", "", "serve every model and tool call from this journal: no network, no tool side effects")
	fs.StringVar(&f.prices, "prices", "", "price usage with this price file over the embedded table (default: $"+cost.EnvPrices+")")
	fs.StringVar(&f.lock, "lock", "", "check the agents against this lock file (default: the nearest agentc.sum at or above the agent's directory)")
	fs.BoolVar(&f.requireLock, "require-lock", false, "refuse to run an agent the lock file does not hold, or without a lock file")
	fs.StringVar(&f.batch, "batch", "", "run the agent once per line of this JSON lines file (- for standard input); --record and --replay then name a directory")
	fs.StringVar(&f.batchLines, "batch-lines", linesInput, `with --batch, what a line is: input (the run's input) or item ({"input": …, "model": "PROVIDER:MODEL", "id": "…"}, model and id optional)`)
	fs.StringVar(&f.batchFiles, "batch-files", "", `with --batch, the directory a line's "@PATH" names files in, beneath it (default: the batch file's directory; none for a batch from standard input)`)
	fs.IntVar(&f.parallel, "parallel", batch.DefaultParallel, "with --batch, how many runs go at once")
	fs.Int64Var(&f.poolTokens, "pool-tokens", 0, "one token pool for every run (a batch's items, agents called as tools); calls reserve their worst case before they are sent")
	fs.BoolVar(&f.quiet, "quiet", false, "print no progress: no event lines on standard error (errors, warnings and --events still are written); with --batch, no progress lines")
	fs.StringVar(&f.approve, "approve", approveAsk, "calls that need approval: ask (on a terminal; refused off one), yes (approve them all) or no (deny them all)")
	fs.DurationVar(&f.progressEvery, "progress-every", 10*time.Second, "with --batch, how often a progress line is printed when standard error is not a terminal")
}

// RegisterStall defines --stall-timeout, of agentc run and agentc worker,
// on fs.
func RegisterStall(fs *pflag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "stall-timeout", retry.DefaultStall, "give up an attempt at a model call when the provider makes no progress for this long (no response, no part of a streamed reply: keep-alives are none), and try again (0: wait for ever)")
}

func checkStall(d time.Duration) error {
	if d < 0 {
		return UsageError("--stall-timeout must not be negative (0 waits for ever)")
	}
	return nil
}

// BudgetOverrides checks the budget flags agentc run and agentc estimate
// share, --tool-budget, --token-budget and --rounds, and returns the ones
// given (changed) as overrides of the plan's budgets.
func BudgetOverrides(changed func(name string) bool, tools, tokens, rounds int) (agentrt.Overrides, error) {
	var o agentrt.Overrides
	if changed("tool-budget") {
		if tools < 0 {
			return o, UsageError("--tool-budget must not be negative")
		}
		o.Tools = &tools
	}
	if changed("token-budget") {
		if tokens <= 0 {
			return o, UsageError("--token-budget must be positive")
		}
		o.Tokens = &tokens
	}
	if changed("rounds") {
		if rounds <= 0 {
			return o, UsageError("--rounds must be positive")
		}
		o.Rounds = &rounds
	}
	return o, nil
}

// RunAgent runs the agent at path (a plan, or a manifest compiled by
// compile; nil in the program without the compiler) with the flags;
// changed says which flags were given. Every secret the
// run reads — the provider keys, the variables its tools are given — is
// redacted from what it writes: standard output and error, the events
// file, the journal, the report and the error it returns.
func RunAgent(ctx context.Context, e Env, compile LoadFunc, path string, f Flags, changed func(name string) bool) error {
	secrets := &redact.Set{}
	for _, v := range ProviderSecrets() {
		secrets.Add(v)
	}
	e.stderrTTY, e.rawStderr = IsTerminal(e.Stderr), e.Stderr
	if e.stderrTTY {
		e.aboveBar = &aboveBar{term: e.Stderr}
		e.Stderr = e.aboveBar
	}
	// Progress and errors quote tools' output and the model's text: what
	// a terminal would act on in them is shown escaped, after redaction.
	e.Stdout, e.Stderr = secrets.Writer(e.Stdout), secrets.Writer(termtext.Writer(e.Stderr))
	var tel *telemetry.Telemetry
	if e.Telemetry != nil {
		t, flush, err := e.Telemetry(ctx, e.Stderr, secrets)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: secrets.Error(err)}
		}
		// Flushed on every way out: an error, a bound, an interrupt.
		defer flush()
		tel = t
	}
	err := runAgent(ctx, e, compile, path, f, changed, secrets, tel)
	var xe *ExitError
	if errors.As(err, &xe) && xe.Err != nil {
		return &ExitError{Code: xe.Code, Err: secrets.Error(xe.Err)}
	}
	return secrets.Error(err)
}

func runAgent(ctx context.Context, e Env, compile LoadFunc, path string, f Flags, changed func(name string) bool, secrets *redact.Set, tel *telemetry.Telemetry) error {
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return err
	}
	if err := checkOutputs(path, f); err != nil {
		return err
	}
	p, dir, err := loadLocked(e, compile, f, path)
	if err != nil {
		return err
	}
	// The agents it calls are the agent's sources too: known once it is
	// loaded.
	if err := checkOutputs(path, f, calleeFiles(p, dir)...); err != nil {
		return err
	}
	// --model runs the agent against another model: the plan is made
	// for it once the agent's own is checked against the lock.
	if p, f, err = retarget(e, p, f); err != nil {
		return err
	}
	if f.dir != "" {
		dir = f.dir
	}
	if err := checkBatchFlags(f, changed); err != nil {
		return err
	}
	for _, g := range f.inputFiles {
		switch _, path, _ := strings.Cut(g, "="); {
		case f.batch != "":
			return UsageError("--input-file and --batch exclude each other: a batch's files are named in its lines, as \"@PATH\" at the file's property")
		case path == "-" && f.input == "-":
			return UsageError("--input-file %s: standard input is read already, by --input -", g)
		}
	}
	var input json.RawMessage
	if f.batch == "" && (f.input != "" || len(f.inputFiles) == 0) {
		if input, err = readInput(e, f.input, p); err != nil {
			return err
		}
	}
	opts := agentrt.Options{}
	files, err := inputFileFields(p, f)
	if err != nil {
		return err
	}
	removeStore := func() {} // a store of the run's own
	switch {
	case f.remote != nil && len(files.fields) > 0:
		if files.store, err = remoteStore(p); err != nil {
			return err
		}
	case f.remote == nil && (len(files.fields) > 0 || takesToolFiles(p)):
		if files.store, removeStore, err = storeFor(f); err != nil {
			return err
		}
		defer removeStore()
		opts.Files = files.store
	}
	if len(files.fields) > 0 {
		if f.batch == "" {
			// Standard input gives one file, unless it gave the input.
			if stdinRead := f.input == "-" || f.input == "" && len(f.inputFiles) == 0; !stdinRead {
				files.stdin = e.Stdin
			}
			end := whileStaging(e, files.store, removeStore)
			input, err = files.resolve(input, f.inputFiles, ".")
			end()
			if err != nil {
				return err
			}
		}
	} else if len(f.inputFiles) > 0 {
		if _, err := files.resolve(nil, f.inputFiles, "."); err != nil {
			return err
		}
	}
	if opts.Budgets, err = BudgetOverrides(changed, f.toolBudget, f.tokenBudget, f.rounds); err != nil {
		return err
	}
	if changed("deadline") {
		if f.deadline <= 0 {
			return UsageError("--deadline must be positive")
		}
		opts.Budgets.Deadline = &f.deadline
	}
	if err := checkStall(f.stall); err != nil {
		return err
	}
	if err := CheckBaseURL("--base-url", f.baseURL); err != nil {
		return err
	}
	if f.remote != nil {
		if changed("pool-tokens") && f.batch == "" {
			return UsageError("--pool-tokens goes with --batch for a run elsewhere: a pool is shared by a batch's runs")
		}
		if changed("rate-limit") {
			return UsageError("--rate-limit does not go with a run elsewhere: the workers pace their own calls (agentc worker --rate-limit)")
		}
		for _, fl := range []string{"record", "replay", "events", "dir", "prices"} {
			if changed(fl) {
				return UsageError("--%s does not go with a run elsewhere: the workers read and write their own files (a run's history is its journal: agentc journal export)", fl)
			}
		}
		for _, fl := range []string{"base-url", "stall-timeout"} {
			if changed(fl) {
				return UsageError("--%s does not go with a run elsewhere: the workers make the model calls, with their own settings (agentc worker --%s)", fl, fl)
			}
		}
		if f.stream {
			return UsageError("--stream does not go with a run elsewhere: its replies are streamed to its workers")
		}
		if changed("approve") {
			return UsageError("--approve does not go with a run elsewhere: its calls that need approval wait for agentc approve (or are decided by their tools' approve_if on the workers)")
		}
		if f.batch != "" && f.batchLines == linesItem {
			return UsageError("--batch-lines item does not go with a run elsewhere: its workers run each item against the agent's own model; give each line the input alone")
		}
		if f.batch != "" {
			return runRemoteBatch(ctx, e, p, f, RemoteRun{Budgets: opts.Budgets, Provider: f.model, Seed: f.seed, PoolTokens: f.poolTokens}, files)
		}
		// A stop signal cancels the run where it runs.
		ctx, sigs := onStopSignal(ctx, e)
		defer sigs.stop()
		end := func(*agentrt.Report, error) {}
		if tel != nil {
			// The workers record the run's spans under this one.
			ctx, end = tel.RemoteRun(ctx, p.Agent.Name)
		}
		// The run's events are printed as a local run's are, as the
		// workers make them; with --quiet they are not asked for.
		var events func(agentrt.Event)
		if !f.quiet {
			events = eventPrinter(e.Stderr, nil, secrets)
		}
		rep, err := f.remote(ctx, p, input, RemoteRun{Budgets: opts.Budgets, Provider: f.model, Seed: f.seed, Events: events})
		end(rep, err)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		return finish(e, f, rep, sigs.code())
	}
	if opts.Prices, err = LoadPrices(f.prices); err != nil {
		return err
	}
	if f.poolTokens > 0 {
		opts.Pool = agentrt.NewPool(f.poolTokens)
	}
	if opts.Approver, err = approver(e, f); err != nil {
		return err
	}
	var fileLimits []ConfigLimit
	if f.configLimits != nil && f.replay == "" {
		if fileLimits, err = f.configLimits(path); err != nil {
			return UsageError("%v", err)
		}
	}
	limits, err := ReadLimits(f.rateLimits, os.Getenv(RateLimitsVar), fileLimits, KnownProviders(e.Providers))
	if err != nil {
		return err
	}
	sess := session{e: e, dir: dir, f: f, hosts: hosts, secrets: secrets, tel: tel, pace: limits.Set(e.Stderr)}
	if f.batch != "" {
		return runBatch(ctx, sess, p, opts, files)
	}
	maxAge, err := PricesMaxAge()
	if err != nil {
		return err
	}
	rep, signal, err := runOne(ctx, sess, p, opts, input)
	if err != nil {
		return err
	}
	if rep.Prices != "" {
		WarnStalePrices(e.Stderr, opts.Prices, p, time.Now(), maxAge)
	}
	return finish(e, f, rep, signal)
}

// WarnStalePrices warns on w of the price tables, among those that price
// the models of p and of the agents it calls (at more than nothing), their
// escalation and fallback models included, dated more than maxAge days
// before now. It warns, never fails: old prices still price.
func WarnStalePrices(w io.Writer, t *cost.Table, p *plan.Plan, now time.Time, maxAge int) {
	var used []cost.Price
	var walk func(p *plan.Plan)
	walk = func(p *plan.Plan) {
		m := p.Agent.Model
		models := [][2]string{{m.Provider, m.Name}, {m.Provider, escalation(p)}}
		for _, fb := range p.Fallbacks {
			models = append(models, [2]string{fb.Model.Provider, fb.Model.Name})
		}
		for _, pm := range models {
			if pr, ok := t.Lookup(pm[0], pm[1]); ok && pm[1] != "" && max(pr.Input, pr.CachedInput, pr.CacheWrite, pr.Output) > 0 {
				used = append(used, pr)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
			if c := p.Callees[name]; c.Plan != nil {
				walk(c.Plan)
			}
		}
	}
	walk(p)
	for _, s := range cost.Stale(used, now, maxAge) {
		fmt.Fprintf(w, "agentc: warning: %s\n", s)
	}
}

func escalation(p *plan.Plan) string {
	if esc := p.Agent.Strategy.Escalate; esc != nil {
		return esc.Model
	}
	return ""
}

// session is what one agentc run command was given and set up: where it
// writes, the agent's directory, its flags, the hosts provider keys may be
// sent to, the secrets it redacts, and telemetry (nil when off).
type session struct {
	e       Env
	dir     string
	f       Flags
	hosts   []string
	secrets *redact.Set
	tel     *telemetry.Telemetry
	// pace is the limiters every run of the command shares.
	pace *pace.Set
}

// runOne makes one run of a plan here, with the flags' journal, events and
// model; it returns the report and the exit code of the stop signal that
// interrupted the run, or 0.
func runOne(ctx context.Context, s session, p *plan.Plan, opts agentrt.Options, input json.RawMessage) (*agentrt.Report, int, error) {
	e, dir, f, hosts, secrets, tel := s.e, s.dir, s.f, s.hosts, s.secrets, s.tel
	// The journal's lock comes first, before anything is written.
	jn, err := openJournal(e, p, f)
	if err != nil {
		return nil, 0, err
	}
	defer jn.close(e)
	var eventsFile io.Writer
	if f.events != "" {
		out, err := createEvents(f.events)
		if err != nil {
			return nil, 0, err
		}
		defer out.close(e.Stderr)
		eventsFile = out
	}
	progress := e.Stderr
	if f.quiet {
		progress = nil
	}
	opts.Events = eventPrinter(progress, eventsFile, secrets)
	opts.Stream = f.stream
	if tel != nil {
		rec, printer := tel.Recorder(ctx), opts.Events
		opts.Events = func(ev agentrt.Event) {
			rec.Event(ev)
			printer(ev)
		}
		opts.Content = tel.Content()
	}
	opts.Secrets = secrets
	opts.Journal = jn.rt
	// The provider that answers, which a journal's fingerprints name.
	opts.Provider = f.model
	if f.fault != nil && p.Agent.Model.Provider == "test" {
		// The fault layer plays the test model's recorded run in OpenAI's
		// wire format, to OpenAI's client; the plan, lowered for the test
		// model, is the test model's still.
		opts.Provider = "test"
	}
	getenv := os.Getenv
	paced := s.pace
	if f.fault != nil {
		// The fault layer's server is sent no key, and no provider looks
		// up credentials of its own for it (ModelRequest.FaultLayer); its
		// 429s are the fault's, which the run meets alone.
		getenv = func(string) string { return "" }
		paced = nil
	}
	// --base-url is the server of the agent's own provider; the fault
	// layer's serves every provider.
	baseFor := p.Agent.Model.Provider
	if f.model != "" {
		baseFor = f.model
	}
	if f.fault != nil {
		baseFor = ""
	}
	modelFor := newModelFor(providerFlags{model: f.model, seed: f.seed, baseURL: f.baseURL, baseFor: baseFor, keyHosts: hosts, stall: f.stall, extra: e.Providers, pace: paced, faultLayer: f.fault != nil, log: e.Stderr, secrets: secrets}, getenv, opts.Events)
	if f.replay != "" {
		modelFor = func(*plan.Plan) (agentrt.Model, error) { return offlineModel{}, nil }
	}
	opts.Model, err = modelFor(p)
	if err != nil {
		if _, ok := errors.AsType[*ExitError](err); ok {
			return nil, 0, err // a variable's value the person set, such as a base URL
		}
		return nil, 0, &ExitError{Code: ExitFindings, Err: err}
	}
	opts.FallbackModel = modelFor
	// A stop signal stops starting tools' servers too.
	ctx, sigs := onStopSignal(ctx, e)
	defer sigs.stop()
	if e.Program {
		// What tools leave behind comes to this process, which kills it
		// once the tools are closed.
		release := tool.AdoptOrphans()
		defer release()
	}
	servers := jn.servers
	if f.fault != nil {
		servers = f.fault.servers
	}
	tools, closeTools, err := tool.Build(ctx, p, tool.Env{
		BaseDir:  dir,
		ModelFor: modelFor,
		Events:   opts.Events,
		// Tests answer http tools' requests without a network.
		HTTPTransport: e.HTTPTransport,
		Servers:       servers,
		Offline:       f.replay != "" || f.fault != nil,
		OnServer:      jn.seen.add,
		Provider:      f.model,
		Secrets:       secrets,
		Content:       opts.Content,
		Pool:          opts.Pool,
		Prices:        opts.Prices,
	})
	if err != nil {
		return nil, 0, toolsError(err, sigs, "the run diverged from its journal")
	}
	if err := jn.start(p, opts.ExactUsage()); err != nil {
		return nil, 0, err
	}
	defer closing(e, closeTools)
	if f.fault != nil {
		tools, f.fault.toolInjected = fault.Tools(tools, f.fault.script, f.fault.kind, p)
	}
	opts.Tools = tools
	r, err := agentrt.New(p, opts)
	if err != nil {
		return nil, 0, &ExitError{Code: ExitFindings, Err: err}
	}
	rep, err := r.Run(ctx, input)
	if err != nil {
		return nil, 0, &ExitError{Code: ExitFindings, Err: err}
	}
	return rep, sigs.code(), nil
}

// LoadPrices reads the price table: the embedded one, extended by the
// file a --prices flag names (flag), else by the file $AGENTC_PRICES
// names. A file that does not read is a usage error.
func LoadPrices(flag string) (*cost.Table, error) {
	path, from := flag, "--prices"
	if path == "" {
		path, from = os.Getenv(cost.EnvPrices), cost.EnvPrices
	}
	t, err := cost.Load(path)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: %w", from, err)}
	}
	return t, nil
}

// PricesMaxAge is how many days old a price table may be before a command
// warns of it: $AGENTC_PRICES_MAX_AGE, else cost.MaxAge; 0 turns the
// warning off. A value that is not a whole number of days is a usage
// error.
func PricesMaxAge() (int, error) {
	v := os.Getenv(cost.EnvMaxAge)
	if v == "" {
		return cost.MaxAge, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s=%q: want a whole number of days, 0 for no warning", cost.EnvMaxAge, v)}
	}
	return n, nil
}

// finish prints a run's report, or its answer, and what diverged, and
// returns the exit code's error; signal is the exit code of the stop
// signal that interrupted the run, or 0.
func finish(e Env, f Flags, rep *agentrt.Report, signal int) error {
	if f.report {
		out, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		if indentedSize(out) <= maxIndentGrowth*int64(len(out))+1<<20 {
			var ind bytes.Buffer
			json.Indent(&ind, out, "", "  ")
			out = ind.Bytes()
		}
		// Escaped as the answer is; the indentation's line feeds stay.
		fmt.Fprintf(e.Stdout, "%s\n", termtext.Lines(string(out)))
	} else if len(rep.Answer) > 0 {
		fmt.Fprintf(e.Stdout, "%s\n", shownJSON(rep.Answer))
	}
	if d := rep.Divergence; d != nil {
		fmt.Fprintf(e.Stderr, "agentc: %s\n", d.Reason)
		for _, c := range d.Changes {
			fmt.Fprintf(e.Stderr, "agentc:   %s\n", c)
		}
		if hint := retargetHint(d.Changes); hint != "" {
			fmt.Fprintf(e.Stderr, "agentc: %s\n", hint)
		}
	}
	code := runExit(rep)
	if code == exitInterrupted && signal != 0 {
		code = signal
	}
	if code == ExitOK {
		return nil
	}
	msg := fmt.Sprintf("run ended: outcome %s, bound %s", rep.Outcome, rep.Bound)
	if rep.Error != "" {
		msg += ": " + rep.Error
	}
	return &ExitError{Code: code, Err: errors.New(msg)}
}

// maxIndentGrowth bounds how much larger indenting may make a report: one
// whose answer nests so deep that each line would carry thousands of
// blanks (a model's answer of a megabyte, 5,000 arrays deep, would be
// gigabytes indented) is printed compact.
const maxIndentGrowth = 8

// indentedSize is the length json.Indent with two blanks a level would
// give the compact JSON b, counted without making it.
func indentedSize(b []byte) int64 {
	n, depth := int64(len(b)), int64(0)
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if i+1 < len(b) && b[i+1] != '}' && b[i+1] != ']' {
				n += 1 + 2*depth
			}
		case c == '}' || c == ']':
			depth--
			if i > 0 && b[i-1] != '{' && b[i-1] != '[' {
				n += 1 + 2*depth
			}
		case c == ',':
			n += 1 + 2*depth
		case c == ':':
			n++
		}
	}
	return n
}

// shownJSON is a JSON text, the answer, as standard output shows it:
// compact, and with every character a terminal would act on or hide
// written as a JSON escape (termtext.Escape: C1 controls such as the
// 8-bit CSI U+009B, bidi overrides, zero-width characters, U+2028), so
// that the same value reaches a program reading it (jq -r prints it as it
// was) while the model's answer cannot clear, recolour or reorder the
// person's screen. Canonicalising tool arguments writes an escaped
// \u009b back as the raw character, so the answer is escaped here, as it
// is printed.
func shownJSON(b json.RawMessage) string {
	return termtext.Escape(string(compact(b)))
}

func compact(b json.RawMessage) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// LoadFunc compiles the agent at path for a run, with the agents it calls
// compiled into its plan, printing its findings on e.Stderr; it returns
// the plan and the directory its relative paths resolve against. prices
// is the run's --prices file ("" for AGENTC_PRICES, else the embedded
// table alone), which the compiler's cost check reads as the run does.
type LoadFunc func(e Env, path, prices string) (*plan.Plan, string, error)

// load reads a plan file, or compiles a manifest with compile; it returns
// the plan and the directory its relative paths resolve against. Without
// compile (in the runtime program), a manifest is an error.
func load(e Env, compile LoadFunc, path, prices string) (*plan.Plan, string, error) {
	p, isPlan, err := plan.ReadFile(path)
	switch {
	case isPlan && err != nil:
		return nil, "", &ExitError{Code: ExitFindings, Err: err}
	case err != nil:
		return nil, "", &ExitError{Code: ExitUsage, Err: err}
	case isPlan:
		return p, filepath.Dir(path), nil
	}
	if compile == nil {
		// A .json file that is not JSON at all is most likely a plan cut
		// short or edited: say where it breaks, as for a plan.
		if strings.EqualFold(filepath.Ext(path), ".json") {
			if data, err := userfile.Read(path, plan.MaxPlanBytes, "a plan"); err == nil && !json.Valid(data) {
				_, err = plan.Read(path, data)
				return nil, "", &ExitError{Code: ExitFindings, Err: fmt.Errorf("%w (%s runs only plans)", err, RuntimeProgram)}
			}
		}
		return nil, "", &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s is not a compiled plan; %s runs only plans: compile it with agentc compile, or run it with agentc", path, RuntimeProgram)}
	}
	return compile(e, path, prices)
}

// MaxInput is the largest run input, in bytes: a run's first message is
// rendered from it, and every request of the run sends it again.
const MaxInput = 8 << 20

// retargetHint says what a model call that diverged on its provider or
// its model most likely means: the journal was recorded with --model (or
// without the --model this replay has). Empty where neither diverged.
func retargetHint(changes []string) string {
	for _, field := range []string{"provider", "model"} {
		for _, c := range changes {
			if rest, ok := strings.CutPrefix(c, "/"+field+": "); ok {
				then, now, _ := strings.Cut(rest, " -> ")
				return fmt.Sprintf("the journal's calls went to %s %s, this run's to %s: if it was recorded with --model, replay it with the same --model", field, then, now)
			}
		}
	}
	return ""
}

// readInput reads the run's input as the flag says, or from standard input
// when the agent declares an input schema and no flag was given.
func readInput(e Env, flag string, p *plan.Plan) (json.RawMessage, error) {
	var data []byte
	var err error
	switch {
	case flag == "-" || flag == "" && p.Agent.Input != nil:
		if in, ok := e.Stdin.(*os.File); ok && flag == "" && IsTerminal(in) {
			// Else agentc waits, silent, for what the person does not
			// know to type.
			fmt.Fprintf(e.Stderr, "agentc: agent %s takes an input: reading it from standard input, as JSON, to its end (Ctrl-D); --input gives it instead\n", p.Agent.Name)
		}
		data, err = userfile.ReadFrom(e.Stdin, MaxInput, "standard input", "a run's input")
	case strings.HasPrefix(flag, "@"):
		// A FIFO is read too (--input @<(command)), within the bound; not
		// a device, whose bytes never end (/dev/zero), as --batch.
		var f *os.File
		if f, err = os.Open(flag[1:]); err == nil {
			if fi, serr := f.Stat(); serr == nil && fi.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
				f.Close()
				return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--input: %s is %s, not a file of input or a pipe (--input - reads standard input)", flag[1:], userfile.Kind(fi.Mode()))}
			}
			data, err = userfile.ReadFrom(f, MaxInput, flag[1:], "a run's input")
			f.Close()
		}
	default:
		data = []byte(flag)
	}
	var tl *userfile.TooLargeError
	if errors.As(err, &tl) {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--input: the input is larger than the %d MiB a run accepts", MaxInput>>20)}
	}
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--input: %w", err)}
	}
	return data, nil
}

// eventsOut is an --events file. It keeps the first error writing it,
// which the command warns of when it closes the file: a full disk would
// otherwise drop every event after it without a word.
type eventsOut struct {
	f    *os.File
	name string
	err  error
}

// createEvents creates the --events file name.
func createEvents(name string) (*eventsOut, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, &ExitError{Code: ExitFindings, Err: err}
	}
	return &eventsOut{f: f, name: name}, nil
}

func (o *eventsOut) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.f.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

// close closes the file and says on stderr if it is not whole.
func (o *eventsOut) close(stderr io.Writer) {
	if err := o.f.Close(); o.err == nil {
		o.err = err
	}
	if o.err != nil {
		fmt.Fprintf(stderr, "agentc: warning: --events %s is not whole: %v\n", o.name, o.err)
	}
}

// eventPrinter writes events as progress lines on w (none when w is nil:
// --quiet) and, if f is set, as JSON lines to f, with the secrets
// redacted.
func eventPrinter(w io.Writer, f io.Writer, secrets *redact.Set) func(agentrt.Event) {
	var enc *json.Encoder
	if f != nil {
		enc = json.NewEncoder(secrets.Writer(f))
	}
	open := "" // the part of a streamed reply being shown, if any
	return func(ev agentrt.Event) {
		if enc != nil {
			_ = enc.Encode(ev)
		}
		if w == nil { // --quiet
			return
		}
		if ev.Type == agentrt.EventModelDelta {
			// The pieces arrive redacted; they are shown as they come,
			// after a line that says whose they are.
			switch {
			case ev.Part == agentrt.PartRestart:
				if open != "" {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "agentc: round %d: the reply was cut off; it starts again\n", ev.Round)
				open = ""
			case ev.Part != open:
				if open != "" {
					fmt.Fprintln(w)
				}
				if ev.Part == agentrt.PartAnswer {
					fmt.Fprintf(w, "agentc: round %d: answer (provisional, not yet validated): ", ev.Round)
				} else {
					fmt.Fprintf(w, "agentc: round %d: %s: ", ev.Round, ev.Model)
				}
				open = ev.Part
				fallthrough
			default:
				io.WriteString(w, ev.Delta)
			}
			return
		}
		if open != "" {
			fmt.Fprintln(w)
			open = ""
		}
		var b strings.Builder
		b.WriteString("agentc: ")
		if ev.Agent != "" {
			b.WriteString(ev.Agent + ": ")
		}
		if ev.Round > 0 {
			fmt.Fprintf(&b, "round %d: ", ev.Round)
		}
		b.WriteString(ev.Type)
		for _, s := range []string{ev.Model, ev.Tool, ev.Outcome, ev.Bound} {
			if s != "" {
				b.WriteString(" " + s)
			}
		}
		switch {
		case ev.Usage != nil && ev.Cost != nil && (ev.Cost.USD > 0 || ev.Cost.Estimated):
			// A free run (the test model) prints no cost.
			fmt.Fprintf(&b, " (%d tokens, %s)", ev.Usage.Total(), CostText(*ev.Cost))
		case ev.Usage != nil:
			fmt.Fprintf(&b, " (%d tokens)", ev.Usage.Total())
		}
		if ev.Message != "" {
			// Redacted before the cut, which would leave a secret's
			// prefix for w's redaction to miss.
			b.WriteString(": " + oneLine(secrets.String(ev.Message), 200))
		}
		fmt.Fprintln(w, b.String())
	}
}

// oneLine shortens a message for a progress line: its first line, cut at
// max runes.
func oneLine(s string, max int) string {
	first, rest, multi := strings.Cut(s, "\n")
	r := []rune(first)
	if len(r) > max {
		return string(r[:max]) + "…"
	}
	if multi && strings.TrimSpace(rest) != "" {
		return first + " …"
	}
	return first
}

// toolsError is the error of a run or a batch whose tools could not be
// built: a divergence (diverged says whose) when an mcp server offers
// other tools than its journal recorded, the stop signal's code when one
// cut the build short, else 1.
func toolsError(err error, sigs *signals, diverged string) error {
	var serverChanged *tool.ServerChangedError
	switch {
	case errors.As(err, &serverChanged):
		return &ExitError{Code: exitDiverged, Err: fmt.Errorf("%s: %w", diverged, err)}
	case sigs.code() != 0 && errors.Is(err, context.Canceled):
		return &ExitError{Code: sigs.code(), Err: err}
	}
	return &ExitError{Code: ExitFindings, Err: err}
}

// closing closes a run's tools, saying on stderr what went wrong.
func closing(e Env, closeTools func() error) {
	if err := closeTools(); err != nil {
		fmt.Fprintf(e.Stderr, "agentc: closing tools: %v\n", err)
	}
}

// checkOutputs refuses, as a usage error before anything is read or
// written, a file the run writes that is a file it reads, or the other
// file it writes, or that is in a batch's --record or --replay directory.
func checkOutputs(path string, f Flags, extra ...userfile.Named) error {
	outs := []userfile.Named{{What: "--events", Path: f.events}}
	// A batch's --replay names the directory of the journals it reads.
	ins := append([]userfile.Named{{What: "the agent", Path: path}, {What: "--replay", Path: f.replay, Dir: f.batch != ""},
		{What: "--prices", Path: f.prices}, {What: "--lock", Path: f.lock}}, extra...)
	if name, ok := strings.CutPrefix(f.input, "@"); ok {
		ins = append(ins, userfile.Named{What: "--input", Path: name})
	}
	for _, g := range f.inputFiles {
		if _, path, ok := strings.Cut(g, "="); ok && path != "-" && path != "" {
			ins = append(ins, userfile.Named{What: "--input-file", Path: path})
		}
	}
	if f.batch != "" {
		ins = append(ins, userfile.Named{What: "--batch", Path: f.batch}, userfile.Named{What: "--record", Path: f.record, Dir: true})
	} else {
		outs = append(outs, userfile.Named{What: "--record", Path: f.record})
	}
	if err := userfile.CheckOutputs(outs, ins); err != nil {
		return UsageError("%v", err)
	}
	return nil
}
