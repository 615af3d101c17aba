// Package runcmd is agentc's run verb without the command tree: running
// a plan (or a manifest, given a compiler), its journal, its providers and
// its exit codes. It is all the agentc-runtime program links, so it
// imports neither CUE nor cobra, whose help templates (text/template)
// would make the linker keep every exported method of every type and
// double the program.
package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	nethttp "net/http"
	"os"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/internal/leaf/buildinfo"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/telemetry"
)

// VersionText is what program --version prints: the build, and the
// formats of the plans and journals it reads and writes.
func VersionText(program string) string {
	return buildinfo.Text(program, [2]string{"plans", plan.Format}, [2]string{"journals", journal.Format})
}

// Exit codes shared by every verb; the run codes are in run.go.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
)

// ExitError ends a command with a code. A nil Err means the command has
// already said what went wrong.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is an error of the command line: exit 2, with a pointer to
// the help.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Env is what a command reads and writes; tests give their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Dir            string // the working directory, for relative file names
	// Ctx, when set, is the commands' context (tests cancel it); interrupts
	// cancel it too.
	Ctx context.Context
	// HTTPTransport, when set, carries http tools' requests (tests answer
	// them without a network).
	HTTPTransport nethttp.RoundTripper
	// Program says the command is the process's own program, not code in
	// a test or a host: a run then adopts what its tools' processes leave
	// behind (Linux) and kills it when it ends, and a second stop signal
	// ends the process at once.
	Program bool
	// Telemetry, when set, starts telemetry from the environment (see
	// package telemetry/otlp) for the runs a command makes: it returns
	// nil when telemetry is off, and the function that exports what is
	// left when the command ends.
	Telemetry TelemetryFunc
	// Providers are the providers the program links beyond openai and
	// anthropic, by name (agentc's: google, bedrock); a plan naming
	// another is an error naming the program to run it with.
	Providers map[string]ProviderFunc
	// stderrTTY says Stderr is a terminal, where a batch draws a
	// progress bar on rawStderr, Stderr before the secrets are redacted
	// from it (the bar holds only counts); RunAgent sets both.
	stderrTTY bool
	rawStderr io.Writer
	// aboveBar is what Stderr writes to on a terminal: the terminal, or,
	// while a batch draws its bar, the bar's, which writes above it.
	aboveBar *aboveBar
}

// TelemetryFunc starts telemetry; warn is where export failures are
// reported.
type TelemetryFunc func(ctx context.Context, warn io.Writer, secrets *redact.Set) (*telemetry.Telemetry, func(), error)

// RuntimeProgram is the name of the program that runs plans without the
// compiler.
const RuntimeProgram = "agentc-runtime"

// Help says what the run verb does, after the paragraph on what it runs:
// both programs print it.
const Help = `Input: --input JSON, --input @file.json, or --input - for standard input.
Without --input, an agent that declares an input schema reads standard input.
The input is validated against the input schema before any model call.

Standard output holds only the validated answer (JSON); with --report it holds
the run report instead, a JSON object whose "answer" is the answer. Progress
goes to standard error; --events writes every event as JSON lines.

--model test runs the agent against the offline test model, which needs no
provider and no key: it calls each tool once with arguments made from its
schema, then answers with a value made from the output schema. Otherwise the
manifest's provider is used: keys come from the environment only
(OPENAI_API_KEY, ANTHROPIC_API_KEY; in agentc also GEMINI_API_KEY or
GOOGLE_API_KEY, and AWS's standard chain for Bedrock); the base URL from
--base-url, the provider's variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL),
or the manifest's model.base_url (any OpenAI-compatible server, which may
need no key). A key goes to a manifest's base_url only if
you name its host in AGENTC_KEY_HOSTS (e.g. localhost,gateway.internal:8443).

--rate-limit PROVIDER[:MODEL]=Nrpm,Ntpm paces the calls of every run the
command makes (a batch's items, the agents they call) within requests and
tokens a minute; AGENTC_RATE_LIMITS gives the same entries, separated by
';', and agentc.yaml's rate_limits section (agentc run only) a project's.
The flag decides over the environment, which decides over the file. With
or without limits, a 429 holds every call to that model until its
Retry-After has passed.

Keys, and the values of the variables tools' env names, are replaced by
[redacted] in everything the run writes and everything sent to the model.

Relative paths in the agent (an fs tool's root) resolve against the
manifest's directory, or the plan's; --dir names another.

--record FILE journals every model call and tool call, one line each, synced
as it completes. If FILE exists, the run it holds is resumed: what completed
is served from it, and the run goes on live from there. --replay FILE serves
every call from the journal and makes none: no network, no tool side effects.
A request that is not the one recorded (the manifest changed under the
journal) stops the run with exit 6 and the fields that changed.

Before anything is read or sent, the agent, and each agent it calls, is
checked against the lock file agentc digest --write keeps: --lock FILE, else
the nearest agentc.sum in the agent's directory or above it. An agent whose
contract or plan digest differs from its entry is refused (exit 1); one the
lock does not hold runs, with a note. --require-lock refuses to run without
a lock file, or an agent it does not hold.

--batch FILE runs the agent once per line of a JSON lines file (- for
standard input), --parallel at once: one result line per input on standard
output, in input order, {"index","line","outcome","bound","answer"|"error",
"usage"}, and progress and a summary on standard error. --batch-lines item
reads each line as {"input", "model": "PROVIDER:MODEL", "id"} instead: each
item runs against the model it names, and its result says which. A line's
"@PATH" names a file beneath the batch file's directory, or beneath
--batch-files DIR. --record DIR and --replay DIR then keep one journal per
item in a directory: the same command run again serves finished items from
them and resumes the rest. A batch exits 0 when every item succeeded, 6 when
one diverged, the code its failed items agree on, else 1. --pool-tokens N
shares one token pool among every run; each call reserves its worst case
before it is sent.

A call of a tool that needs approval (its approve: exec, mcp and http other
than GET ask by default) is first checked against the tool's approve_if
(agentc only); else --approve decides: ask (the default) prompts on a
terminal for yes, no (with a reason the model reads) or always for this run,
and off a terminal ends the run with exit 9; yes approves and no denies every
such call. Each decision is journaled: a replay asks nothing.

SIGINT, SIGTERM and SIGHUP stop the run at its next safe point, killing
what its tools started; a second signal ends agentc at once.

Exit codes: 0 answered; 1 failed (no valid answer, bad input, bad agent, an
agent that differs from the lock); 2 usage error; 3 deadline; 4 tool budget;
5 token budget or pool (an answer, if any, is still printed); 6 the run
diverged from its journal; 7 rounds used up; 8 answering turns used up; 9 a
call needed approval no one could give (no terminal, no --approve); 130
interrupted, 143 and 129 stopped by SIGTERM and SIGHUP (a journal holds
every call that completed; run again with the same --record to resume).`

// runtimeHelp is the runtime program's help: what it runs, how to call
// it, then its flags and Help.
const runtimeHelp = `agentc-runtime runs agents compiled by agentc compile: it is agentc's run
verb without the compiler, for hosts and containers that only run plans.
The path is a plan file, which holds the plans of the agents it calls: no
other file is read for them. A manifest is refused before anything is read
(exit 1): compile it with agentc compile, or run it with agentc.

Usage:
  agentc-runtime run [flags] plan.json
  agentc-runtime --version

Flags:
`

// Main is the runtime program: it runs the process's command line and
// returns the exit code.
func Main() int {
	LibraryLog(os.Stderr)
	dir, _ := os.Getwd()
	return Run(os.Args[1:], Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Program: true})
}

// Run runs the command line args as the runtime program does and returns
// the exit code. Its one verb is run, with the flags agentc's run verb
// has; a path that is not a plan fails before the input is read.
func Run(args []string, e Env) int {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Register(fs)
	help := func() int {
		fmt.Fprint(e.Stdout, runtimeHelp+fs.FlagUsages()+"\n"+Help+"\n")
		return ExitOK
	}
	usage := func(format string, args ...any) int {
		fmt.Fprintf(e.Stderr, "agentc: %s\nRun '%s --help' for usage.\n", fmt.Sprintf(format, args...), RuntimeProgram)
		return ExitUsage
	}
	if len(args) == 0 {
		return usage("%s runs plans: %s run plan.json", RuntimeProgram, RuntimeProgram)
	}
	switch args[0] {
	case "run":
	case "-h", "--help", "help":
		return help()
	case "-v", "--version":
		fmt.Fprint(e.Stdout, VersionText(RuntimeProgram))
		return ExitOK
	default:
		return usage("unknown command %q: %s has only run, for compiled plans; agentc has every verb", args[0], RuntimeProgram)
	}
	err := fs.Parse(args[1:])
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return help()
	case err != nil:
		return usage("%v", err)
	case fs.NArg() > 1:
		return usage("run takes one plan, not %d paths", fs.NArg())
	case fs.Changed("record") && fs.Changed("replay"):
		return usage("--record and --replay exclude each other")
	}
	path := "."
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return ExitCode(RunAgent(ctx, e, nil, path, f, fs.Changed), e.Stderr, RuntimeProgram)
}

// ExitCode prints what err says went wrong on stderr and returns the exit
// code for it: an ExitError's, else 1. A usage error points to the help
// of prog, the command that refused it ("agentc run").
func ExitCode(err error, stderr io.Writer, prog string) int {
	if err == nil {
		return ExitOK
	}
	stderr = termtext.Writer(stderr)
	var xe *ExitError
	if errors.As(err, &xe) {
		if xe.Err != nil {
			fmt.Fprintf(stderr, "agentc: %v\n", xe.Err)
		}
		if xe.Code == ExitUsage {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", prog)
		}
		return xe.Code
	}
	fmt.Fprintf(stderr, "agentc: %v\n", err)
	return ExitFindings
}

// LibraryLog sends the lines the libraries agentc uses write to Go's
// standard logger (an SDK's "Error ..." for a stream it could not read,
// OpenTelemetry's failed exports) to w as agentc's own lines go to its
// standard error: every provider key agentc reads redacted, nothing in
// them that a terminal would act on or a CI runner take for a workflow
// command, and under agentc's name. Left as they were, they reached the
// process's standard error raw.
func LibraryLog(w io.Writer) {
	log.SetFlags(0)
	log.SetPrefix("agentc: ")
	log.SetOutput(redact.Of(ProviderSecrets()...).Writer(termtext.Writer(w)))
}
