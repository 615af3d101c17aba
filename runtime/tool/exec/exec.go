// Package exec is the exec tool kind: it lets a model run one program that
// the manifest fixes, with arguments rendered from the call, and returns
// what the program printed.
//
// The argument vector is fixed in shape. argv[0] is the program, literal
// text, never a template. Every later element is a template (the language
// of [plan.ParseTemplate]) rendered over the call's arguments, decoded with
// json.Decoder.UseNumber so integers render exactly, and each element
// becomes exactly one argument of the program, however many spaces,
// quotes, semicolons or newlines the values hold. There is no shell and no
// word splitting: the vector goes to the operating system as it is.
//
// The call's arguments must be one JSON object; empty arguments count as
// {}, for a tool whose argv uses none. Rendered arguments are checked
// before anything runs:
//   - An element that does not begin with literal text (such as "{{.path}}"
//     or "{{.a}}{{.b}}") must not render to text that starts with '-', or
//     the program would read a value as an option: "-rf", "-" and "-5" are
//     refused there. An element whose literal prefix is itself the option
//     (such as "--rev={{.rev}}" or "-n{{.n}}") is declared by the author
//     and takes any value. Options a template prints from inside an action
//     (such as "{{if .v}}-v{{end}}") count as values and are refused: write
//     options as literal text.
//   - No argument may contain a NUL byte.
//   - An argument that renders "<no value>", text/template's rendering of
//     an argument the call left out or gave as null, is refused rather
//     than passed on. Optional arguments belong in {{if}} or {{with}}.
//
// A program written without a slash is looked up on PATH when the tool is
// called, not when it is built, since a plan may be vetted on another
// machine; one found through a relative PATH entry (such as ".") is
// refused. A relative program path with a slash resolves against the base
// directory (the manifest's or plan's directory). The working directory,
// dir, is relative to the base directory unless absolute, and defaults to
// it; a relative dir must stay under the base directory, through ".." or
// symbolic links alike, and is resolved when the tool is called. An
// absolute dir is the author's explicit choice and is taken as it is. On
// Windows, batch files are refused, since cmd.exe re-parses their
// arguments.
//
// The program gets an empty stdin and an environment of only PATH and the
// variables the tool's env lists, copied from agentc's environment where
// they are set, and AGENTC_TOOL_PROCESS, a random value of the call's own
// that marks what the call starts. Nothing else passes: not HOME, not
// LANG, and above all no provider key, unless the manifest names it. (A
// program run with confine.enforce "off" is not held to its environment:
// it can read what the user can, agentc's own process included.)
//
// The program runs confined, as the tool's confine block declares (nil:
// the defaults): on Linux, it reads only the system's programs and
// libraries and the declared paths, writes only those declared writable,
// has no network unless declared, and is the second process of a PID
// namespace of its own, so that the kernel kills all it started when it
// exits; where the kernel lacks a part, New warns, or fails when the tool
// requires confinement (see the internal confine package). What follows
// holds of a program that runs unconfined.
//
// The program runs in a process group of its own (on Unix). When the
// timeout passes or the call's context ends, the whole group is killed.
// When the program has exited, whatever it left running in its group is
// killed too and, on Linux, every process that still carries the call's
// mark, wherever it moved (setsid included), with all their descendants;
// those this process adopted (a child subreaper, see
// [agentc.dev/agentc/runtime/tool.AdoptOrphans]) are reaped. So nothing
// the program started outlives the call, unless it both left the group
// and replaced its environment (env -i), or runs as another user; the
// call stops waiting for such a process's output a second after the
// program exits. On Linux the program is also killed if this process
// dies (even by kill -9). On other Unix systems only the group is
// killed; elsewhere only the program.
//
// stdout and stderr are captured apart, each cut at max_bytes with a note
// (the rest is read and discarded, so the program is never blocked on a
// full pipe); bytes that are not UTF-8 become U+FFFD. The result is stdout,
// followed by a "stderr:" section when stderr is not empty, or "(no
// output)". A program that exits non-zero, dies by a signal or times out
// yields an error result (IsError) that names the exit status and carries
// the output; a call refused before the program starts returns an error;
// a call whose context ends returns the context's error. Errors never show
// the base directory; the program's own output is passed on as it is.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	osexec "os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"text/template/parse"
	"time"
	"unicode/utf8"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool/internal/confine"
	"agentc.dev/agentc/runtime/tool/internal/proc"
	"agentc.dev/agentc/runtime/tool/internal/toolio"
)

// DefaultMaxBytes caps each of stdout and stderr when the plan sets no
// max_bytes; the manifest schema has the same default.
const DefaultMaxBytes = 1 << 20

// DefaultTimeout bounds a call when the plan sets no timeout; the manifest
// schema has the same default.
const DefaultTimeout = 30 * time.Second

// waitDelay is how long a call waits for the output pipes to close after
// the program exits and what it started is killed; a process that escaped
// (see the package documentation) can hold them open no longer than this.
const waitDelay = time.Second

// MaxArgBytes bounds what one element of argv renders to: 128 KiB, the
// longest argument Linux takes (MAX_ARG_STRLEN); a longer one could never
// be run.
const MaxArgBytes = 128 << 10

// noValue is what text/template prints for a missing or null value.
const noValue = "<no value>"

// Tool is an exec tool: a runtime.Tool that runs one fixed program. It
// holds nothing between calls and is safe for concurrent use.
type Tool struct {
	program  string           // argv[0] as written
	args     []*plan.Template // argv[1:]
	bare     []bool           // args[i] does not begin with literal text
	base     string           // absolute; never in an error
	dir      string           // as written; "" is the base directory
	env      []string         // names to pass, without PATH
	timeout  time.Duration
	maxBytes int
	confine  confine.Policy
	spec     runtime.ToolSpec
	secrets  *redact.Set // replaced before an output is cut
	outputs  map[string]plan.FileField
	offline  bool // its calls are served, never made (Offline)
}

// Option configures New.
type Option func(*Tool)

// WithSecrets gives the secrets to replace in an output before it is cut
// at max_bytes, so that a cut never shows part of one (the run replaces
// them in what is not cut).
func WithSecrets(s *redact.Set) Option {
	return func(t *Tool) { t.secrets = s }
}

// Offline makes a tool whose calls are served (from a journal, a fault
// script, or a Temporal worker's activity) and never made here: New does not ask what this
// system can confine (a probe that starts a process), so a declaration
// that requires confinement is not refused on a machine that could not
// give it, nor warned about, and Call refuses to run the program.
func Offline() Option {
	return func(t *Tool) { t.offline = true }
}

var _ runtime.Tool = (*Tool)(nil)

// New returns the exec tool called name that t declares. baseDir is the
// directory of the agent's manifest or plan. New checks only the shape of
// the declaration: the program and the working directory are found when
// the tool is called. t.Timeout "" means DefaultTimeout and t.MaxBytes 0
// means DefaultMaxBytes.
func New(name string, t plan.Tool, baseDir string, opts ...Option) (*Tool, error) {
	fail := func(format string, args ...any) (*Tool, error) {
		return nil, fmt.Errorf("exec tool %q: "+format, append([]any{name}, args...)...)
	}
	if t.Kind != "" && t.Kind != "exec" {
		return fail("kind is %q, not exec", t.Kind)
	}
	if t.Input == nil || len(bytes.TrimSpace(t.Input.Schema)) == 0 {
		return fail("no input schema")
	}
	if len(t.Argv) == 0 || t.Argv[0] == "" {
		return fail("argv needs a program as its first element")
	}
	if strings.Contains(t.Argv[0], "{{") {
		return fail("argv[0]: the program must be fixed, not a template")
	}
	if strings.IndexByte(t.Argv[0], 0) >= 0 {
		return fail("argv[0] contains a NUL byte")
	}
	tool := &Tool{program: t.Argv[0], dir: t.Dir, maxBytes: t.MaxBytes, timeout: DefaultTimeout}
	for _, o := range opts {
		o(tool)
	}
	for i, text := range t.Argv[1:] {
		tmpl, err := plan.ParseTemplate(fmt.Sprintf("argv[%d]", i+1), text)
		if err != nil {
			return fail("%s", strings.TrimPrefix(err.Error(), "template: "))
		}
		tool.args = append(tool.args, tmpl.Bounded(MaxArgBytes))
		tool.bare = append(tool.bare, !startsWithText(tmpl))
	}

	if t.MaxBytes < 0 {
		return fail("max_bytes is %d; it must be positive", t.MaxBytes)
	}
	if tool.maxBytes == 0 {
		tool.maxBytes = DefaultMaxBytes
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 {
			return fail("timeout %q is not a positive duration (write e.g. \"30s\")", t.Timeout)
		}
		tool.timeout = d
	}
	for _, v := range t.Env {
		if !proc.EnvName(v) {
			return fail("env: %q is not a variable name", v)
		}
		if v != "PATH" && !slices.Contains(tool.env, v) {
			tool.env = append(tool.env, v)
		}
	}
	if d := filepath.FromSlash(t.Dir); d != "" && !filepath.IsAbs(d) && !filepath.IsLocal(d) {
		return fail("dir %q leaves the base directory; a relative dir must stay under it", t.Dir)
	}
	if strings.IndexByte(t.Dir, 0) >= 0 {
		return fail("dir contains a NUL byte")
	}
	base, err := filepath.Abs(baseDir)
	if err != nil {
		return fail("base directory: %v", err)
	}
	tool.base = base
	if tool.offline {
		// The declaration is still checked, as it is when the calls are made.
		tool.confine, err = confine.Declared(t.Confine, base)
	} else {
		tool.confine, err = confine.ForTool(name, t.Confine, base)
	}
	if err != nil {
		return fail("%v", err)
	}
	for _, n := range slices.Sorted(maps.Keys(t.OutputFiles)) {
		o := t.OutputFiles[n]
		if err := plan.CheckOutputFile(n, o); err != nil {
			return fail("%v", err)
		}
		if tool.outputs == nil {
			tool.outputs = map[string]plan.FileField{}
		}
		tool.outputs[n] = o.Field(n)
	}
	tool.spec = runtime.ToolSpec{Name: name, Description: t.Description, Schema: bytes.Clone(t.Input.Schema)}
	return tool, nil
}

// startsWithText reports whether a template's output begins with literal
// text of its own, rather than with what an action prints.
func startsWithText(t *plan.Template) bool {
	if t.Tree == nil || t.Tree.Root == nil || len(t.Tree.Root.Nodes) == 0 {
		return false
	}
	n, ok := t.Tree.Root.Nodes[0].(*parse.TextNode)
	return ok && len(n.Text) > 0
}

// Close lets go of what the tool holds: the paths its confine block
// declares, held open from New so that each call's program reaches what
// was declared, whatever is at their names later. A call after it fails.
func (t *Tool) Close() error { return t.confine.Close() }

// Spec describes the tool to a model: the name, the plan's description and
// its input schema.
func (t *Tool) Spec() runtime.ToolSpec {
	s := t.spec
	s.Schema = bytes.Clone(s.Schema)
	return s
}

// Call runs the program once with arguments rendered from args.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (runtime.ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return runtime.ToolResult{}, err
	}
	if t.offline {
		return runtime.ToolResult{}, fmt.Errorf("exec tool %q is offline: its calls are served, never run here", t.spec.Name)
	}
	out := &outputs{tool: t}
	defer out.remove()
	argv, files, err := t.render(ctx, args, out)
	if err != nil {
		return runtime.ToolResult{}, err
	}
	path, err := t.lookProgram()
	if err != nil {
		return runtime.ToolResult{}, err
	}
	dir, err := t.workDir()
	if err != nil {
		return runtime.ToolResult{}, err
	}
	res, err := t.run(ctx, path, dir, argv, files, out.dir)
	if err != nil || res.IsError || len(out.names) == 0 {
		return res, err
	}
	return out.collect(ctx, res)
}

// render decodes the arguments and renders the argument vector, program
// first. Its errors are meant for the model.
//
// {{file "NAME"}} in an element is the path of the run's file input NAME:
// its blob in the run's file store, which agentc makes and the program
// may read, never a path the model chose. files lists the blobs given.
// {{output_file "NAME"}} is the path where the program writes its output
// file NAME, in a directory of the call's own (out).
func (t *Tool) render(ctx context.Context, raw json.RawMessage, out *outputs) (argv, files []string, err error) {
	data, err := decodeArgs(raw)
	if err != nil {
		return nil, nil, err
	}
	paths := plan.Paths{
		File: func(name string) (string, error) {
			p, err := runtime.InputFilePath(ctx, name)
			if err == nil {
				files = append(files, p)
			}
			return p, err
		},
		OutputFile: out.path,
	}
	argv = make([]string, 0, 1+len(t.args))
	argv = append(argv, t.program)
	var b strings.Builder
	for i, tmpl := range t.args {
		n := i + 1
		b.Reset()
		if err := tmpl.WithContext(ctx).ExecutePaths(&b, data, paths); err != nil {
			return nil, nil, fmt.Errorf("argument %d: %s", n, execReason(err))
		}
		s := b.String()
		switch {
		case strings.IndexByte(s, 0) >= 0:
			return nil, nil, fmt.Errorf("argument %d contains a NUL byte, which no program argument can hold", n)
		case strings.Contains(s, noValue):
			return nil, nil, fmt.Errorf("argument %d uses a value the call did not give, or gave as null (it rendered %q); give every value the tool's schema describes", n, noValue)
		case t.bare[i] && strings.HasPrefix(s, "-"):
			return nil, nil, fmt.Errorf("argument %d (%s) would start with '-' and be read as an option; a value here must not start with '-'", n, quoteShort(s))
		}
		argv = append(argv, s)
	}
	return argv, files, nil
}

// decodeArgs decodes the call's arguments. Empty arguments are an empty
// object, for tools whose argv uses none.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	return toolio.Arguments(raw)
}

// execReason shortens a template execution error to where and why:
// `template: argv[2]:1:4: executing "argv[2]" at <.a.b>: can't evaluate
// field b in type interface {}` becomes `at <.a.b>: can't evaluate ...`.
func execReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, " at <"); i >= 0 {
		return msg[i+1:]
	}
	return strings.TrimPrefix(msg, "template: ")
}

// quoteShort quotes s, cut to a length a message can carry.
func quoteShort(s string) string {
	const limit = 40
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}

// lookProgram finds the program: on PATH when its name has no slash,
// against the base directory when it is a relative path.
func (t *Tool) lookProgram() (string, error) {
	p := t.program
	if !strings.ContainsRune(p, '/') && !strings.ContainsRune(p, filepath.Separator) {
		path, err := osexec.LookPath(p)
		switch {
		case errors.Is(err, osexec.ErrDot):
			return "", fmt.Errorf("program %q is found only through a relative entry of PATH (such as \".\"), which is refused", p)
		case err != nil:
			return "", fmt.Errorf("program %q: not found on PATH", p)
		}
		return path, t.checkProgram(path)
	}
	path := filepath.FromSlash(p)
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.base, path)
	}
	if _, err := osexec.LookPath(path); err != nil {
		var e *osexec.Error
		if errors.As(err, &e) {
			err = e.Err
		}
		where := ""
		if !filepath.IsAbs(filepath.FromSlash(p)) {
			where = " (relative to the base directory)"
		}
		return "", fmt.Errorf("program %q%s: %s", p, where, reason(err))
	}
	return path, t.checkProgram(path)
}

// checkProgram refuses programs whose arguments another parser reads
// again: on Windows, cmd.exe runs batch files and re-parses their command
// line, which would undo the one-value-one-argument rule.
func (t *Tool) checkProgram(path string) error {
	if goruntime.GOOS == "windows" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".bat", ".cmd":
			return fmt.Errorf("program %q is a batch file, which cmd.exe would re-parse; it is refused", t.program)
		}
	}
	return nil
}

// workDir resolves the working directory. A relative dir must stay under
// the base directory once symbolic links are resolved.
func (t *Tool) workDir() (string, error) {
	fail := func(format string, args ...any) (string, error) {
		given := t.dir
		if given == "" {
			given = "."
		}
		return "", fmt.Errorf("working directory %q: "+format, append([]any{given}, args...)...)
	}
	dir := filepath.FromSlash(t.dir)
	if filepath.IsAbs(dir) {
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			return fail("%s", reason(err))
		case !fi.IsDir():
			return fail("is not a directory")
		}
		return dir, nil
	}
	base, err := filepath.EvalSymlinks(t.base)
	if err != nil {
		return fail("the base directory is unavailable: %s", reason(err))
	}
	real, err := filepath.EvalSymlinks(filepath.Join(base, dir))
	if err != nil {
		return fail("%s", reason(err))
	}
	if rel, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(rel) {
		return fail("leaves the base directory (through a symbolic link)")
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return fail("%s", reason(err))
	case !fi.IsDir():
		return fail("is not a directory")
	}
	return real, nil
}

// environ is the child's whole environment: PATH and the listed variables
// that are set. It is never nil, since a nil Env would pass everything.
func (t *Tool) environ() []string {
	env := []string{}
	for _, name := range append([]string{"PATH"}, t.env...) {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// run starts the program and waits for it, its output and its group.
//
// The program may read files and write in outDir, when they are given.
func (t *Tool) run(ctx context.Context, path, dir string, argv, files []string, outDir string) (runtime.ToolResult, error) {
	rOut, wOut, err := os.Pipe()
	if err != nil {
		return runtime.ToolResult{}, fmt.Errorf("starting %q: %s", t.program, reason(err))
	}
	rErr, wErr, err := os.Pipe()
	if err != nil {
		rOut.Close()
		wOut.Close()
		return runtime.ToolResult{}, fmt.Errorf("starting %q: %s", t.program, reason(err))
	}
	cmd := osexec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	cmd.Env = t.environ()
	cmd.Stdout, cmd.Stderr = wOut, wErr
	group := proc.New(cmd)
	policy := t.confine
	if len(files) > 0 {
		// The program reads the run's files it is given, and no other.
		policy.Read = append(slices.Clip(policy.Read), files...)
		policy.Shown = maps.Clone(policy.Shown)
		if policy.Shown == nil {
			policy.Shown = map[string]string{}
		}
		for _, f := range files {
			policy.Shown[f] = "a file of the run"
		}
	}
	if outDir != "" {
		// It writes its output files there, and nowhere else it was not
		// let.
		policy.Write = append(slices.Clip(policy.Write), outDir)
		policy.Shown = maps.Clone(policy.Shown)
		if policy.Shown == nil {
			policy.Shown = map[string]string{}
		}
		policy.Shown[outDir] = "the call's output directory"
	}
	confined, err := policy.Wrap(cmd)
	if err != nil {
		rOut.Close()
		rErr.Close()
		wOut.Close()
		wErr.Close()
		return runtime.ToolResult{}, fmt.Errorf("starting %q: %s", t.program, reason(err))
	}

	// The program dies with the thread that starts it (Linux): this one,
	// until the program has exited.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	err = group.Start()
	confined.Started()
	wOut.Close()
	wErr.Close()
	if err != nil {
		rOut.Close()
		rErr.Close()
		confined.Close() // the status pipe's end, which no trampoline writes
		var e *osexec.Error
		if errors.As(err, &e) {
			err = e.Err
		}
		return runtime.ToolResult{}, fmt.Errorf("starting %q: %s", t.program, reason(err))
	}

	// Past the cap, as much more as a secret's longest form, so that one
	// starting before the cap is replaced whole, and a rune, to see
	// whether the cap splits one.
	look := t.secrets.Lookahead() + utf8.UTFMax
	stdout := &capped{max: t.maxBytes, keep: t.maxBytes + look, secrets: t.secrets}
	stderr := &capped{max: t.maxBytes, keep: t.maxBytes + look, secrets: t.secrets}
	var readers sync.WaitGroup
	for _, c := range []struct {
		w *capped
		r *os.File
	}{{stdout, rOut}, {stderr, rErr}} {
		readers.Go(func() { io.Copy(c.w, c.r) })
	}

	tctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	exited := make(chan struct{})
	killed := make(chan bool, 1)
	go func() {
		select {
		case <-tctx.Done():
			group.Kill()
			killed <- true
		case <-exited:
			killed <- false
		}
	}()
	waitErr := cmd.Wait()
	close(exited)
	byUs := <-killed
	group.Sweep() // whatever the program left running

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(waitDelay):
		// A process that escaped the sweep holds a pipe open.
	}
	rOut.Close()
	rErr.Close()
	<-drained

	// Through the trampoline, the program's own status is reported apart.
	state := ""
	if cmd.ProcessState != nil {
		state = cmd.ProcessState.String()
	}
	succeeded := cmd.ProcessState != nil && cmd.ProcessState.Success()
	if st, err := confined.Result(); err != nil {
		return runtime.ToolResult{}, fmt.Errorf("starting %q: %s", t.program, strings.TrimPrefix(err.Error(), confine.ErrStart.Error()+": "))
	} else if st.Known {
		state, succeeded, waitErr = policy.Said(st), st.Success, nil
	} else if confined != nil && state != "" {
		// What ended is the trampoline, before it could say how the
		// program did.
		state = "the program's confinement ended before the program (" + state + ")"
	}
	if byUs && !succeeded {
		if err := ctx.Err(); err != nil {
			return runtime.ToolResult{}, err
		}
		return runtime.ToolResult{Content: failure(fmt.Sprintf("timed out after %s; the program was killed", t.timeout), stdout, stderr), IsError: true}, nil
	}
	var exitErr *osexec.ExitError
	switch {
	case !succeeded && (waitErr == nil || errors.As(waitErr, &exitErr)):
		return runtime.ToolResult{Content: failure("the program failed: "+state, stdout, stderr), IsError: true}, nil
	case waitErr != nil:
		return runtime.ToolResult{}, fmt.Errorf("running %q: %s", t.program, reason(waitErr))
	}
	return runtime.ToolResult{Content: success(stdout, stderr)}, nil
}

// success renders a successful run: stdout as it is, then stderr under a
// heading.
func success(stdout, stderr *capped) string {
	var b strings.Builder
	b.WriteString(stdout.text("stdout"))
	if stderr.total > 0 {
		newline(&b)
		b.WriteString("stderr:\n")
		b.WriteString(stderr.text("stderr"))
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return b.String()
}

// failure renders a failed run: what happened, then each stream under a
// heading.
func failure(what string, stdout, stderr *capped) string {
	var b strings.Builder
	b.WriteString(what)
	if stdout.total == 0 && stderr.total == 0 {
		b.WriteString(" (no output)")
	}
	for _, s := range []struct {
		name string
		c    *capped
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if s.c.total > 0 {
			newline(&b)
			b.WriteString(s.name + ":\n")
			b.WriteString(s.c.text(s.name))
		}
	}
	return b.String()
}

func newline(b *strings.Builder) {
	if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
}

// capped keeps the first keep bytes written to it (max and what a secret
// needs past it) and counts the rest.
type capped struct {
	max, keep int
	secrets   *redact.Set
	buf       []byte
	total     int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.keep - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// text returns what was kept as UTF-8, with a note when it was cut. The
// secrets are replaced before the cut, which never shows part of one.
func (c *capped) text(name string) string {
	if c.total <= int64(c.max) {
		return strings.ToValidUTF8(string(c.buf), "\uFFFD")
	}
	kept, n := c.secrets.Prefix(string(c.buf), c.max)
	s := strings.ToValidUTF8(kept, "\uFFFD")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + fmt.Sprintf("[%s cut: the first %d of %d bytes are shown (max_bytes)]\n", name, n, c.total)
}

// reason says why an operation failed without the path: errors from the
// os package carry host paths.
func reason(err error) string { return toolio.Reason(err) }
