package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
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

// runExit maps a report to the exit code: 0 answered within every bound;
// 3, 4, 5, 7, 8 the bound that ended the run (5 also when an answer
// arrived and the token budget or pool was spent); 130 interrupted (129 or
// 143 when SIGHUP or SIGTERM did it, see stopSignals); 1 failed otherwise.
func runExit(rep *agentrt.Report) int {
	switch {
	case rep.Divergence != nil:
		return exitDiverged
	case rep.Interrupted:
		return exitInterrupted
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
	record, replay                     string
	lock                               string
	seed                               int64
	report, requireLock                bool
	deadline                           time.Duration
	toolBudget, tokenBudget, rounds    int
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "the run's input: JSON, @file.json, or - for standard input")
	fs.StringVar(&f.model, "model", "", `run against another model; "test" is the offline test model`)
	fs.Int64Var(&f.seed, "seed", 0, "vary the test model's values")
	fs.BoolVar(&f.report, "report", false, "print the run report instead of the bare answer")
	fs.StringVar(&f.events, "events", "", "write every event to this file as JSON lines")
	fs.StringVar(&f.dir, "dir", "", "resolve the agent's relative paths against this directory")
	fs.StringVar(&f.baseURL, "base-url", "", "the provider's base URL (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the manifest's model.base_url)")
	fs.DurationVar(&f.deadline, "deadline", 0, "override budgets.deadline (e.g. 90s)")
	fs.IntVar(&f.toolBudget, "tool-budget", -1, "override budgets.tools")
	fs.IntVar(&f.tokenBudget, "token-budget", 0, "override budgets.tokens")
	fs.IntVar(&f.rounds, "rounds", 0, "override budgets.rounds (model calls)")
	fs.StringVar(&f.record, "record", "", "journal every model and tool call to this file; an existing journal is resumed")
	fs.StringVar(&f.replay, "replay", "", "serve every model and tool call from this journal: no network, no tool side effects")
	fs.StringVar(&f.lock, "lock", "", "check the agents against this lock file (default: the nearest agentc.sum at or above the agent's directory)")
	fs.BoolVar(&f.requireLock, "require-lock", false, "refuse to run an agent the lock file does not hold, or without a lock file")
}

// RunAgent runs the agent at path (a plan, or a manifest compiled by ld)
// with the flags; changed says which flags were given. Every secret the
// run reads — the provider keys, the variables its tools are given — is
// redacted from what it writes: standard output and error, the events
// file, the journal, the report and the error it returns.
func RunAgent(ctx context.Context, e Env, ld *Loader, path string, f Flags, changed func(name string) bool) error {
	secrets := &redact.Set{}
	for _, pr := range providers {
		secrets.Add(os.Getenv(pr.keyVar))
	}
	e.Stdout, e.Stderr = secrets.Writer(e.Stdout), secrets.Writer(e.Stderr)
	err := runAgent(ctx, e, ld, path, f, changed, secrets)
	var xe *ExitError
	if errors.As(err, &xe) && xe.Err != nil {
		return &ExitError{Code: xe.Code, Err: secrets.Error(xe.Err)}
	}
	return secrets.Error(err)
}

func runAgent(ctx context.Context, e Env, ld *Loader, path string, f Flags, changed func(name string) bool, secrets *redact.Set) error {
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return err
	}
	for _, j := range []struct{ flag, file string }{{"--record", f.record}, {"--replay", f.replay}} {
		if f.events != "" && j.file != "" && sameFile(f.events, j.file) {
			return UsageError("--events names the journal %s (%s): events would overwrite it", j.file, j.flag)
		}
	}
	p, dir, err := ld.load(e, path)
	if err != nil {
		return err
	}
	// The lock is found from the agent's own directory, whatever --dir
	// says, and checked before anything else is read.
	lock, err := openLock(e, f, dir)
	if err != nil {
		return err
	}
	if err := lock.check(p, path); err != nil {
		return err
	}
	if f.dir != "" {
		dir = f.dir
	}
	// Without the compiler, every agent the run may call must be a plan
	// too; if one is not, the run fails now, before it has read its input
	// or written anything.
	if err := ld.callees(e, p, path, dir, map[string]bool{}); err != nil {
		return err
	}
	input, err := readInput(e, f.input, p)
	if err != nil {
		return err
	}
	opts := agentrt.Options{}
	if changed("deadline") {
		if f.deadline <= 0 {
			return UsageError("--deadline must be positive")
		}
		opts.Budgets.Deadline = &f.deadline
	}
	if changed("tool-budget") {
		if f.toolBudget < 0 {
			return UsageError("--tool-budget must not be negative")
		}
		opts.Budgets.Tools = &f.toolBudget
	}
	if changed("token-budget") {
		if f.tokenBudget <= 0 {
			return UsageError("--token-budget must be positive")
		}
		opts.Budgets.Tokens = &f.tokenBudget
	}
	if changed("rounds") {
		if f.rounds <= 0 {
			return UsageError("--rounds must be positive")
		}
		opts.Budgets.Rounds = &f.rounds
	}
	// The journal's lock comes first, before anything is written.
	jn, err := openJournal(e, p, f)
	if err != nil {
		return err
	}
	defer jn.close(e)
	var eventsFile *os.File
	if f.events != "" {
		eventsFile, err = os.Create(f.events)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		defer eventsFile.Close()
	}
	opts.Events = eventPrinter(e.Stderr, eventsFile, secrets)
	opts.Secrets = secrets
	opts.Journal = jn.rt
	// The provider that answers, which a journal's fingerprints name.
	opts.Provider = f.model
	modelFor := newModelFor(providerFlags{model: f.model, seed: f.seed, baseURL: f.baseURL, keyHosts: hosts}, os.Getenv, opts.Events)
	if f.replay != "" {
		modelFor = func(*plan.Plan) (agentrt.Model, error) { return offlineModel{}, nil }
	}
	opts.Model, err = modelFor(p)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	// A stop signal stops starting tools' servers too.
	ctx, sigs := onStopSignal(ctx, e)
	defer sigs.stop()
	if e.Program {
		// What tools leave behind comes to this process, which kills it
		// once the tools are closed.
		release := tool.AdoptOrphans()
		defer release()
	}
	// A called agent is checked against the run's lock before any of its
	// tools is built.
	resolve := func(path string) (*plan.Plan, string, error) {
		p, dir, err := ld.resolve(e, path)
		if err == nil {
			err = lock.check(p, relPath(path, e.Dir))
		}
		return p, dir, err
	}
	tools, closeTools, err := tool.Build(ctx, p, tool.Env{
		BaseDir:  dir,
		ModelFor: modelFor,
		Resolve:  resolve,
		Events:   opts.Events,
		// Tests answer http tools' requests without a network.
		HTTPTransport: e.HTTPTransport,
		Servers:       jn.servers,
		Offline:       f.replay != "",
		OnServer:      jn.onServer,
		Provider:      f.model,
		Secrets:       secrets,
	})
	var serverChanged *tool.ServerChangedError
	if errors.As(err, &serverChanged) {
		return &ExitError{Code: exitDiverged, Err: fmt.Errorf("the run diverged from its journal: %w", err)}
	}
	if code := sigs.code(); code != 0 && errors.Is(err, context.Canceled) {
		return &ExitError{Code: code, Err: err}
	}
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	if err := jn.start(p); err != nil {
		return err
	}
	defer func() {
		if err := closeTools(); err != nil {
			fmt.Fprintf(e.Stderr, "agentc: closing tools: %v\n", err)
		}
	}()
	opts.Tools = tools
	r, err := agentrt.New(p, opts)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	rep, err := r.Run(ctx, input)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	if f.report {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s\n", out)
	} else if len(rep.Answer) > 0 {
		fmt.Fprintf(e.Stdout, "%s\n", compact(rep.Answer))
	}
	if d := rep.Divergence; d != nil {
		fmt.Fprintf(e.Stderr, "agentc: %s\n", d.Reason)
		for _, c := range d.Changes {
			fmt.Fprintf(e.Stderr, "agentc:   %s\n", c)
		}
	}
	code := runExit(rep)
	if code == exitInterrupted && sigs.code() != 0 {
		code = sigs.code()
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

func compact(b json.RawMessage) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// LoadFunc compiles the agent at path for a run, printing its findings on
// e.Stderr; it returns the plan and the directory its relative paths
// resolve against.
type LoadFunc func(e Env, path string) (*plan.Plan, string, error)

// Loader reads the plans of a run: the agent's, and those of the agents
// it calls, each read once. A manifest is compiled by its LoadFunc;
// without one (in the runtime program), a manifest is an error.
type Loader struct {
	compile LoadFunc
	plans   map[string]loaded
}

// NewLoader returns a loader that compiles manifests with compile, or
// refuses them when it is nil.
func NewLoader(compile LoadFunc) *Loader {
	return &Loader{compile: compile}
}

type loaded struct {
	p   *plan.Plan
	dir string
}

// load reads a plan file, or compiles a manifest; it returns the plan and
// the directory its relative paths resolve against.
func (ld *Loader) load(e Env, path string) (*plan.Plan, string, error) {
	if l, ok := ld.plans[path]; ok {
		return l.p, l.dir, nil
	}
	p, dir, err := ld.read(e, path)
	if err != nil {
		return nil, "", err
	}
	if ld.plans == nil {
		ld.plans = map[string]loaded{}
	}
	ld.plans[path] = loaded{p, dir}
	return p, dir, nil
}

func (ld *Loader) read(e Env, path string) (*plan.Plan, string, error) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", &ExitError{Code: ExitUsage, Err: err}
		}
		if plan.IsPlan(data) {
			p, err := plan.Read(path, data)
			if err != nil {
				return nil, "", &ExitError{Code: ExitFindings, Err: err}
			}
			return p, filepath.Dir(path), nil
		}
	}
	if ld.compile == nil {
		return nil, "", &ExitError{Code: ExitFindings, Err: &notPlanError{path: path}}
	}
	return ld.compile(e, path)
}

// notPlanError is an agent that is not a compiled plan, in a program
// without the compiler.
type notPlanError struct {
	path   string
	caller string // the plan that calls it, if any
	tool   string // and the tool it is called by
}

func (e *notPlanError) Error() string {
	what := e.path + " is not a compiled plan"
	fix := "compile it with agentc compile, or run it with agentc"
	if e.caller != "" {
		what = fmt.Sprintf("%s calls %s (tool %s), which is not a compiled plan", e.caller, e.path, e.tool)
		fix = "point the tool at a plan compiled with agentc compile, or run it with agentc"
	}
	return fmt.Sprintf("%s; %s runs only plans: %s", what, RuntimeProgram, fix)
}

// callees checks, in a program without the compiler, that every agent p
// calls, and every agent those call, is a plan, reading each: a run fails
// on a manifest before it reads its input. dir is where p's relative
// paths resolve; name is how p was named.
func (ld *Loader) callees(e Env, p *plan.Plan, name, dir string, seen map[string]bool) error {
	if ld.compile != nil {
		return nil
	}
	tools := make([]string, 0, len(p.Agent.Capabilities.Tools))
	for t := range p.Agent.Capabilities.Tools {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	for _, tname := range tools {
		t := p.Agent.Capabilities.Tools[tname]
		if t.Kind != "agent" {
			continue
		}
		path := t.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		callee, cdir, err := ld.load(e, path)
		var np *notPlanError
		if errors.As(err, &np) {
			return &ExitError{Code: ExitFindings, Err: &notPlanError{path: relPath(path, e.Dir), caller: name, tool: tname}}
		}
		if err != nil {
			// A callee that is missing or broken fails the run when its
			// tool is built, as it does in agentc.
			continue
		}
		if err := ld.callees(e, callee, relPath(path, e.Dir), cdir, seen); err != nil {
			return err
		}
	}
	return nil
}

// resolve loads a called agent's plan like load, with its findings in the
// error rather than on standard error.
func (ld *Loader) resolve(e Env, path string) (*plan.Plan, string, error) {
	var findings bytes.Buffer
	e.Stderr = &findings
	p, dir, err := ld.load(e, path)
	if err != nil {
		if msg := strings.TrimSpace(findings.String()); msg != "" {
			return nil, "", fmt.Errorf("%s", msg)
		}
		return nil, "", err
	}
	return p, dir, nil
}

// MaxInput is the largest run input, in bytes: a run's first message is
// rendered from it, and every request of the run sends it again.
const MaxInput = 8 << 20

// readInput reads the run's input as the flag says, or from standard input
// when the agent declares an input schema and no flag was given.
func readInput(e Env, flag string, p *plan.Plan) (json.RawMessage, error) {
	var data []byte
	var err error
	switch {
	case flag == "-" || flag == "" && p.Agent.Input != nil:
		data, err = io.ReadAll(io.LimitReader(e.Stdin, MaxInput+1))
	case strings.HasPrefix(flag, "@"):
		var f *os.File
		if f, err = os.Open(flag[1:]); err == nil {
			data, err = io.ReadAll(io.LimitReader(f, MaxInput+1))
			f.Close()
		}
	default:
		data = []byte(flag)
	}
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--input: %w", err)}
	}
	if len(data) > MaxInput {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--input: the input is larger than the %d MiB a run accepts", MaxInput>>20)}
	}
	return data, nil
}

// eventPrinter writes events as progress lines on w and, if f is set, as
// JSON lines to f, with the secrets redacted.
func eventPrinter(w io.Writer, f *os.File, secrets *redact.Set) func(agentrt.Event) {
	var enc *json.Encoder
	if f != nil {
		enc = json.NewEncoder(secrets.Writer(f))
	}
	return func(ev agentrt.Event) {
		if enc != nil {
			_ = enc.Encode(ev)
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
		if ev.Usage != nil {
			fmt.Fprintf(&b, " (%d tokens)", ev.Usage.Total())
		}
		if ev.Message != "" {
			b.WriteString(": " + oneLine(ev.Message, 200))
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
