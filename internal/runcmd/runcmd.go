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
	nethttp "net/http"
	"os"

	"github.com/spf13/pflag"

	"agentc.dev/agentc/internal/launch"
)

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
}

// The programs' names, as the agentc command starts them.
const (
	CompilerProgram = launch.CompilerProgram
	RuntimeProgram  = launch.RuntimeProgram
)

// Main is the runtime program: it runs the process's command line if it
// is a run of a plan, and otherwise executes the compiler program in its
// place.
func Main() int {
	dir, _ := os.Getwd()
	e := Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Program: true}
	return Run(os.Args[1:], e, func() error {
		path, err := launch.Find(CompilerProgram)
		if err != nil {
			return err
		}
		return launch.Exec(path, os.Args[1:])
	})
}

// Run runs the command line args as the runtime program does and returns
// the exit code. Anything but a well-formed run (another verb, help, a
// flag it does not know, flags that exclude each other) and any run that
// needs compiling is passed to
// handover, untouched, before anything is read or written: the compiler
// program answers it, with its own messages. handover returns only if it
// fails.
func Run(args []string, e Env, handover func() error) int {
	fail := func(err error) int {
		fmt.Fprintf(e.Stderr, "agentc: %v\n", err)
		return ExitFindings
	}
	pass := func() int {
		err := errors.New("no handover")
		if handover != nil {
			err = handover()
		}
		return fail(fmt.Errorf("%s runs only plans, and could not pass this command line on: %w", RuntimeProgram, err))
	}
	if len(args) == 0 || args[0] != "run" {
		return pass()
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Register(fs)
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 1 || fs.Changed("record") && fs.Changed("replay") {
		return pass()
	}
	path := "."
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := RunAgent(ctx, e, NewLoader(nil, handover), path, f, fs.Changed)
	return ExitCode(err, e.Stderr)
}

// ExitCode prints what err says went wrong on stderr and returns the exit
// code for it: an ExitError's, else 1.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var xe *ExitError
	if errors.As(err, &xe) {
		if xe.Err != nil {
			fmt.Fprintf(stderr, "agentc: %v\n", xe.Err)
		}
		if xe.Code == ExitUsage {
			fmt.Fprintln(stderr, "Run 'agentc --help' for usage.")
		}
		return xe.Code
	}
	fmt.Fprintf(stderr, "agentc: %v\n", err)
	return ExitFindings
}
