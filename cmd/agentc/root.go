package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"os"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/manifest"
)

// Exit codes shared by every verb; the run codes come with the run verb.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// exitError ends a command with a code. A nil err means the command has
// already said what went wrong.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// env is what a command reads and writes; tests give their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string // the working directory, for relative file names
	// ctx, when set, is the commands' context (tests cancel it); interrupts
	// cancel it too.
	ctx context.Context
	// httpTransport, when set, carries http tools' requests (tests answer
	// them without a network).
	httpTransport nethttp.RoundTripper
}

// Main runs agentc with the process's arguments and streams and returns
// the exit code.
func Main() int {
	dir, _ := os.Getwd()
	return run(os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, dir: dir})
}

func run(args []string, e env) int {
	root := newRootCmd(e)
	root.SetArgs(args)
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var xe *exitError
	if errors.As(err, &xe) {
		if xe.err != nil {
			fmt.Fprintf(e.stderr, "agentc: %v\n", xe.err)
		}
		if xe.code == exitUsage {
			fmt.Fprintln(e.stderr, "Run 'agentc --help' for usage.")
		}
		return xe.code
	}
	var ae *manifest.ArgError
	if errors.As(err, &ae) {
		fmt.Fprintf(e.stderr, "agentc: %v\n", err)
		return exitUsage
	}
	var re *runError
	if errors.As(err, &re) {
		fmt.Fprintf(e.stderr, "agentc: %v\n", re.err)
		return exitFindings
	}
	// What is left is cobra's own: unknown commands, wrong arguments.
	fmt.Fprintf(e.stderr, "agentc: %v\nRun 'agentc --help' for usage.\n", err)
	return exitUsage
}

// runError is a failure of a command's job (an I/O error, say), as opposed
// to cobra's errors about the command line.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// jobErrors marks the errors a command's RunE returns as job failures
// (exit 1), leaving usage and exit errors as they are.
func jobErrors(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		err := run(c, args)
		var xe *exitError
		var ae *manifest.ArgError
		if err == nil || errors.As(err, &xe) || errors.As(err, &ae) {
			return err
		}
		return &runError{err: err}
	}
}

// newCompiler returns a compiler whose loader reads "-" from e's stdin.
func newCompiler(e env) *compile.Compiler {
	l := manifest.NewLoader()
	l.Stdin = e.stdin
	return compile.New(l)
}

// newRootCmd builds the command tree. Nothing is global: each call returns
// a fresh tree bound to e.
func newRootCmd(e env) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentc",
		Short: "Compile, check and run declarative LLM agents",
		Long: `agentc compiles and runs declarative LLM agents. An agent is a CUE manifest
that declares its tools, its output contract (a JSON Schema) and its budgets.

Exit codes: 0 success; 1 the command's job failed (findings, invalid
manifest); 2 usage error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err}
	})
	root.CompletionOptions.DisableDefaultCmd = true
	for _, cmd := range []*cobra.Command{newVetCmd(e), newDigestCmd(e), newCompileCmd(e), newRunCmd(e)} {
		jobErrors(cmd)
		root.AddCommand(cmd)
	}
	return root
}
