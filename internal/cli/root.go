// Package cli is agentc's command line: the command tree, the run verb,
// and exit codes. It does not read CUE: the verbs that do (vet, digest,
// compile) and the compiling of a manifest given to run come from a
// [Compiler], which the agentc-compiler program supplies and the
// agentc-runtime program, which runs compiled plans only, does not.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"os"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/launch"
	"agentc.dev/agentc/plan"
)

// Exit codes shared by every verb; the run codes come with the run verb.
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
}

// Compiler is the part of the command line that reads CUE.
type Compiler struct {
	// Verbs returns the commands that check and compile manifests.
	Verbs func(Env) []*cobra.Command
	// Load compiles the agent at path for run, printing its findings on
	// e.Stderr; it returns the plan and the directory its relative paths
	// resolve against.
	Load func(e Env, path string) (*plan.Plan, string, error)
	// IsArgError tells a path argument that names nothing loadable: exit
	// 2, with no pointer to the help.
	IsArgError func(error) bool
}

// CompilerProgram and RuntimeProgram are the names of agentc's two
// programs, which the agentc command executes: the first has every verb,
// the second runs compiled plans only and so starts without the compiler.
const (
	CompilerProgram = "agentc-compiler"
	RuntimeProgram  = "agentc-runtime"
)

// Main runs a program with the process's arguments and streams and
// returns the exit code. With c nil it is the runtime program: a run of
// anything that needs compiling (a manifest, or a plan calling a manifest)
// is handed to the compiler program, executed in this process's place
// before the run has read or written anything.
func Main(c *Compiler) int {
	dir, _ := os.Getwd()
	e := Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir}
	return Run(os.Args[1:], e, c, func() error {
		path, err := launch.Find(CompilerProgram)
		if err != nil {
			return err
		}
		return launch.Exec(path, CompilerProgram, os.Args[1:])
	})
}

// Run runs the command line args with c's verbs (none but run when c is
// nil) and returns the exit code. handover, when set, is how a program
// without a compiler passes on a run that needs one; it returns only if it
// fails.
func Run(args []string, e Env, c *Compiler, handover func() error) int {
	root := newRootCmd(e, c, handover)
	root.SetArgs(args)
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var xe *ExitError
	if errors.As(err, &xe) {
		if xe.Err != nil {
			fmt.Fprintf(e.Stderr, "agentc: %v\n", xe.Err)
		}
		if xe.Code == ExitUsage {
			fmt.Fprintln(e.Stderr, "Run 'agentc --help' for usage.")
		}
		return xe.Code
	}
	if c != nil && c.IsArgError != nil && c.IsArgError(err) {
		fmt.Fprintf(e.Stderr, "agentc: %v\n", err)
		return ExitUsage
	}
	var re *runError
	if errors.As(err, &re) {
		fmt.Fprintf(e.Stderr, "agentc: %v\n", re.err)
		return ExitFindings
	}
	// What is left is cobra's own: unknown commands, wrong arguments.
	fmt.Fprintf(e.Stderr, "agentc: %v\nRun 'agentc --help' for usage.\n", err)
	return ExitUsage
}

// runError is a failure of a command's job (an I/O error, say), as opposed
// to cobra's errors about the command line.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// jobErrors marks the errors a command's RunE returns as job failures
// (exit 1), leaving usage and exit errors as they are.
func jobErrors(cmd *cobra.Command, c *Compiler) {
	run := cmd.RunE
	cmd.RunE = func(cc *cobra.Command, args []string) error {
		err := run(cc, args)
		var xe *ExitError
		if err == nil || errors.As(err, &xe) || c != nil && c.IsArgError != nil && c.IsArgError(err) {
			return err
		}
		return &runError{err: err}
	}
}

// newRootCmd builds the command tree. Nothing is global: each call returns
// a fresh tree bound to e.
func newRootCmd(e Env, c *Compiler, handover func() error) *cobra.Command {
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
	root.SetIn(e.Stdin)
	root.SetOut(e.Stdout)
	root.SetErr(e.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	root.CompletionOptions.DisableDefaultCmd = true
	var cmds []*cobra.Command
	if c != nil {
		cmds = c.Verbs(e)
	}
	cmds = append(cmds, newRunCmd(e, c, handover))
	for _, cmd := range cmds {
		jobErrors(cmd, c)
		root.AddCommand(cmd)
	}
	return root
}

// NewRunCmd returns the run verb as the runtime program has it, for tests
// that compare its flags with the agentc command's reading of them.
func NewRunCmd() *cobra.Command { return newRunCmd(Env{}, nil, nil) }
