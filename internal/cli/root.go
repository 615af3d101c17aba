// Package cli is the agentc program's command line: the command tree of
// every verb. It does not read CUE itself: the verbs that do (vet, digest,
// compile) and the compiling of a manifest given to run come from a
// [Compiler] (package cuecmd). The run verb is package runcmd's, which
// the agentc-runtime program runs without this package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"agentc.dev/agentc/internal/providers"
	"agentc.dev/agentc/internal/runcmd"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/telemetry/otlp"
)

// The command line's environment, errors and exit codes are the run
// verb's, which the runtime program has without this package.
type (
	Env       = runcmd.Env
	ExitError = runcmd.ExitError
)

const (
	ExitOK       = runcmd.ExitOK
	ExitFindings = runcmd.ExitFindings
	ExitUsage    = runcmd.ExitUsage
)

// UsageError is an error of the command line: exit 2, with a pointer to
// the help.
func UsageError(format string, args ...any) error { return runcmd.UsageError(format, args...) }

// Compiler is the part of the command line that reads CUE.
type Compiler struct {
	// Verbs returns the commands that check and compile manifests.
	Verbs func(Env) []*cobra.Command
	// Load compiles the agent at path for run, printing its findings on
	// e.Stderr; it returns the plan and the directory its relative paths
	// resolve against.
	Load runcmd.LoadFunc
	// Agents expands the paths serve is given into a path an agent: a
	// directory, or dir/..., into each agent it holds, found as digest
	// finds them (manifests, and compiled plans); any other path is
	// itself.
	Agents func(e Env, paths []string) ([]string, error)
	// Retarget makes a plan for the model a run's --model names.
	Retarget runcmd.RetargetFunc
	// ConfigLimits reads the rate_limits of the agentc.yaml that applies
	// to an agent a run is given.
	ConfigLimits runcmd.ConfigLimitsFunc
	// IsArgError tells an input the command could not use, which is no
	// finding: a path argument that names nothing loadable, a
	// configuration file that does not read. Exit 2, with no pointer to
	// the help.
	IsArgError func(error) bool
}

// Main runs the agentc program, with c's verbs and run, over the
// process's arguments and streams, and returns the exit code.
func Main(c *Compiler) int {
	runcmd.LibraryLog(os.Stderr)
	dir, _ := os.Getwd()
	return Run(os.Args[1:], Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: dir, Program: true, Telemetry: otlp.FromEnv}, c)
}

// Run runs the command line args with c's verbs and run, and returns the
// exit code.
func Run(args []string, e Env, c *Compiler) int {
	if e.Providers == nil {
		// agentc carries every provider.
		e.Providers = providers.All()
	}
	root := newRootCmd(e, c)
	root.SetArgs(args)
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	// A usage error points to the help of the verb that refused it.
	prog := root.Name()
	if cmd != nil {
		prog = cmd.CommandPath()
	}
	// A command's own errors end as the run verb's do: an exit error's
	// code, else 1.
	var xe *ExitError
	var re *runError
	// An error may quote a manifest, a file or a tool's output.
	stderr := termtext.Writer(e.Stderr)
	switch {
	case errors.As(err, &xe):
		return runcmd.ExitCode(xe, stderr, prog)
	case c.IsArgError != nil && c.IsArgError(err):
		fmt.Fprintf(stderr, "agentc: %v\n", err)
		return ExitUsage
	case errors.As(err, &re):
		return runcmd.ExitCode(re.err, stderr, prog)
	}
	// What is left is cobra's own: unknown commands, wrong arguments. A
	// wrong number of arguments shows what the verb takes.
	fmt.Fprintf(stderr, "agentc: %v\n", err)
	if cmd != nil && cmd != root && strings.Contains(err.Error(), " arg(s)") {
		fmt.Fprintf(stderr, "Usage: %s\n", cmd.UseLine())
	}
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", prog)
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
		if err == nil || errors.As(err, &xe) || c.IsArgError != nil && c.IsArgError(err) {
			return err
		}
		return &runError{err: err}
	}
}

// newRootCmd builds the command tree. Nothing is global: each call returns
// a fresh tree bound to e.
func newRootCmd(e Env, c *Compiler) *cobra.Command {
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
	// agentc --version (and -v): the build, and the plan and journal
	// formats it reads and writes.
	root.Version = runcmd.VersionText("agentc")
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	// What the verbs write on standard error may quote a manifest, a
	// plan, a journal or a file's name, which a pull request chooses:
	// every line goes through termtext, so that a terminal acts on none
	// of it and a CI runner takes none of it for a workflow command. run
	// escapes its own, after redacting the run's secrets, and needs the
	// terminal itself for its progress bar and its questions.
	es := e
	es.Stderr = termtext.Writer(e.Stderr)
	cmds := append(c.Verbs(es), newRunCmd(e, es, c), newServeCmd(es, c), newWorkerCmd(es), newJournalCmd(es), newViewCmd(es), newApproveCmd(es))
	for _, cmd := range cmds {
		jobErrors(cmd, c)
		root.AddCommand(cmd)
	}
	// cobra's completion command: agentc completion bash|zsh|fish|powershell
	// prints the shell's script (docs/ci.md says how to install it). Made
	// here rather than when the tree runs, so that a shell it does not
	// know is a usage error, not its help and exit 0.
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		if cmd.Name() == "completion" {
			cmd.Args = cobra.ArbitraryArgs
			cmd.RunE = func(_ *cobra.Command, args []string) error {
				if len(args) == 0 {
					return UsageError("completion: name a shell: bash, zsh, fish or powershell")
				}
				return UsageError("completion: unknown shell %q: want bash, zsh, fish or powershell", args[0])
			}
		}
	}
	return root
}
