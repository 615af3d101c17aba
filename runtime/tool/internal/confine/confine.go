// Package confine runs a tool's program confined: on Linux, in a new user,
// PID, IPC, mount (its mounts read-only but the paths the tool declares
// writable) and (unless the tool declares network) network namespace, under
// a Landlock ruleset that lets it read only the system's programs and
// libraries and the paths the tool declares, and write only those it
// declares writable, and under a seccomp filter that refuses it Unix
// sockets and io_uring (a Unix socket reaches the host's services by
// path, which neither the network namespace nor Landlock rules), the
// kernel's keyrings, and changes of a file's owner or extended attributes
// and set-ID modes, which Landlock does not rule either. When the
// program exits, everything it started ends with it: the kernel kills
// every process of the PID namespace when the namespace's first process
// ends.
//
// Go cannot run code between fork and exec, so the restrictions are
// applied by a trampoline: this program started again (as
// tramp.Program), which restricts one of its threads, drops its
// capabilities, starts the tool's program from it as its child, waits for
// it, reports its exit status on a pipe and exits. A policy's Limits are
// set by one more start of this program between the two (the stage),
// which becomes the program. Package tramp holds both sides; its init
// makes any program that links this package the trampoline or the stage
// when started as one, before the program's libraries initialise.
//
// Where the kernel lacks a part (Landlock, user namespaces, or seccomp),
// the program runs with what is left and New says so in a warning; a
// policy that requires confinement refuses to run instead. Without user
// namespaces the trampoline is a child subreaper that kills everything the
// program left, and Landlock (ABI 4 and later) refuses TCP connect and
// bind when the tool declares no network; the program shares the host's
// System V IPC. On other systems the program runs unconfined, with a
// warning.
package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/tool/internal/confine/internal/tramp"
)

// Enforce levels, as a manifest's confine.enforce spells them.
const (
	Best    = "best"    // confine as far as the kernel allows; warn of the rest
	Require = "require" // refuse to run where the kernel cannot confine wholly
	Off     = "off"     // run unconfined
)

// Policy is what a tool's program may reach. The zero Policy confines
// with the defaults: the system's files readable, nothing else, no
// network.
type Policy struct {
	// Read and Write are absolute paths, files or directories: Read
	// readable (and executable), Write readable and writable.
	Read, Write []string
	// Shown is how each path of Read and Write is written in the
	// manifest, for errors, which never show the base directory.
	Shown   map[string]string
	Network bool
	Enforce string // Best ("" too), Require or Off
	// Limits bound each of the program's processes (Linux); the zero
	// Limits bounds nothing.
	Limits plan.Limits

	// pins holds each path of Read and Write open, on Linux, from when
	// ForTool made the policy (or, for a path missing then, the first
	// program it confined that found it), and the trampoline's rules
	// are made on what is held, not on the name: whoever may write
	// beside a declared path (another tool's confine.write) cannot put a
	// link to elsewhere under its name and have the next program's rules
	// follow it there. Copies of a policy share it.
	pins *pins
}

// pins are the paths a policy holds open, by path: only those it was
// made with (declared), never those a call adds for itself (its output
// directory, the run's files), which are held for that call's program
// alone.
type pins struct {
	mu       sync.Mutex
	declared map[string]bool
	files    map[string]*os.File
	closed   bool
	// base is the manifest's directory, and relative the declared
	// paths written relative to it, by absolute path: where a
	// program may write, a link can be put, so below base a declared
	// path is held only where no link leads it (see openDeclared).
	base     string
	relative map[string]string
}

// Close closes the paths the policy holds, and those of its copies; a
// program confined after it is refused.
func (p Policy) Close() error {
	if p.pins == nil {
		return nil
	}
	p.pins.mu.Lock()
	defer p.pins.mu.Unlock()
	p.pins.closed = true
	for path, f := range p.pins.files {
		f.Close()
		delete(p.pins.files, path)
	}
	return nil
}

// Resolve makes a Policy of the paths a manifest declares, relative to
// base unless absolute.
func Resolve(read, write []string, network bool, enforce, base string) (Policy, error) {
	p := Policy{Network: network, Enforce: enforce, Shown: map[string]string{}, pins: &pins{}}
	switch enforce {
	case "", Best, Require, Off:
	default:
		return Policy{}, fmt.Errorf("confine.enforce is %q; it must be %q, %q or %q", enforce, Best, Require, Off)
	}
	for _, list := range []struct {
		name  string
		given []string
		out   *[]string
	}{{"read", read, &p.Read}, {"write", write, &p.Write}} {
		for _, g := range list.given {
			if g == "" || strings.IndexByte(g, 0) >= 0 {
				return Policy{}, fmt.Errorf("confine.%s: %q is not a path", list.name, g)
			}
			abs := filepath.FromSlash(g)
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(base, abs)
			}
			abs = filepath.Clean(abs)
			*list.out = append(*list.out, abs)
			p.Shown[abs] = g
		}
	}
	p.pins.declared = map[string]bool{}
	for _, a := range append(append([]string{}, p.Read...), p.Write...) {
		p.pins.declared[a] = true
	}
	p.pins.base, p.pins.relative = base, map[string]string{}
	for a, g := range p.Shown {
		if !filepath.IsAbs(filepath.FromSlash(g)) {
			p.pins.relative[a] = filepath.Clean(filepath.FromSlash(g))
		}
	}
	return p, nil
}

// stageLimits is what the stage sets for p, or nil when p bounds nothing.
func (p Policy) stageLimits() *tramp.Limits {
	cpu, _ := p.Limits.CPUSeconds() // checked by Declared
	l := tramp.Limits{CPU: cpu, Memory: p.Limits.Memory, FileSize: p.Limits.FileSize}
	if l == (tramp.Limits{}) {
		return nil
	}
	return &l
}

// Run is one program started through the trampoline.
type Run struct {
	r, w   *os.File
	temps  []*os.File // paths held for this program alone
	once   sync.Once
	done   chan struct{} // closed once status and err are read
	status Status
	err    error
}

// Started closes this process's end of the status pipe, and the paths
// held for this program alone, once the command has started (or failed
// to).
func (r *Run) Started() {
	if r == nil {
		return
	}
	if r.w != nil {
		r.w.Close()
		r.w = nil
	}
	for _, f := range r.temps {
		f.Close()
	}
	r.temps = nil
}

// Close reads the status pipe and closes it, for a program whose status
// is not asked for; call it once the program has ended.
func (r *Run) Close() { r.Result() }

// ErrStart is the error Result returns when the trampoline could not
// start the program; its text says why, without the base directory.
var ErrStart = errors.New("the confined program did not start")

// Status is how the program ended, as the trampoline reported it.
type Status struct {
	Known   bool   // the trampoline reported it (it was not killed first)
	Success bool   // it exited with status 0
	Text    string // as os.ProcessState.String says it
	// Passed names the limit that killed the program: "cpu" (SIGXCPU,
	// or SIGKILL once it had used its CPU time's soft limit, CPU then
	// being the CPU time it and the processes it waited for had used)
	// or "file_size" (SIGXFSZ); empty otherwise.
	Passed string
	CPU    time.Duration
}

// Explain says which of p's limits the status shows the program passed,
// as a clause to follow the status, or "" when none.
func (p Policy) Explain(st Status) string {
	switch {
	case st.Passed == "cpu" && p.Limits.CPU != "" && st.CPU > 0:
		n, _ := p.Limits.CPUSeconds()
		return fmt.Sprintf("its CPU time, %.1f s with the processes it waited for, passed confine.limits.cpu (%d s)", st.CPU.Seconds(), n)
	case st.Passed == "cpu" && p.Limits.CPU != "":
		n, _ := p.Limits.CPUSeconds()
		return fmt.Sprintf("its CPU time passed confine.limits.cpu (%d s)", n)
	case st.Passed == "file_size" && p.Limits.FileSize > 0:
		return fmt.Sprintf("a file it wrote reached confine.limits.file_size (%s)", userfile.Size(p.Limits.FileSize))
	}
	return ""
}

// Said is how a call's result says the program ended: the status as
// os.ProcessState says it, and the limit it passed, if any.
func (p Policy) Said(st Status) string {
	if why := p.Explain(st); why != "" {
		return st.Text + ": " + why
	}
	return st.Text
}

// Result reads, once the command has been waited for, what the
// trampoline reported: how the program ended, or why it could not start
// it (an error wrapping ErrStart).
func (r *Run) Result() (Status, error) {
	if r == nil {
		return Status{}, nil
	}
	r.read()
	<-r.done
	return r.status, r.err
}

// Ended is how the program ended, once the trampoline has reported it,
// waiting for that at most d: for a program that may have ended by
// itself, whose command is not waited for here (a server whose
// connection closed). ok is false when nothing was reported within d, or
// the trampoline could not start the program.
func (r *Run) Ended(d time.Duration) (st Status, ok bool) {
	if r == nil {
		return Status{}, false
	}
	r.read()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		select {
		case <-r.done: // reported as the time ran out
		default:
			return Status{}, false
		}
	}
	return r.status, r.err == nil && r.status.Known
}

// read starts reading the status pipe, once: the report comes when the
// trampoline ends.
func (r *Run) read() {
	r.once.Do(func() {
		r.Started()
		go func() {
			defer close(r.done)
			r.status, r.err = r.report()
		}()
	})
}

func (r *Run) report() (Status, error) {
	defer r.r.Close()
	b, _ := io.ReadAll(io.LimitReader(r.r, 4096))
	return parseStatus(string(b))
}

// parseStatus reads the trampoline's report: "status N" (a wait status),
// followed by " cpu MS" when the program was killed (SIGKILL) having used
// MS milliseconds of CPU time, its soft limit or more, or "error REASON".
func parseStatus(msg string) (Status, error) {
	switch {
	case strings.HasPrefix(msg, "status "):
		f := strings.Fields(msg[len("status "):])
		if len(f) == 0 {
			break
		}
		s, err := strconv.Atoi(f[0])
		switch {
		case err != nil:
		case len(f) == 1:
			return describe(s), nil
		case len(f) == 3 && f[1] == "cpu":
			ms, err := strconv.ParseInt(f[2], 10, 64)
			if st := describe(s); err == nil && ms > 0 && st.Text != "" {
				st.Passed, st.CPU = "cpu", time.Duration(ms)*time.Millisecond
				return st, nil
			}
		}
	case strings.HasPrefix(msg, "error "):
		return Status{}, fmt.Errorf("%w: %s", ErrStart, msg[len("error "):])
	}
	return Status{}, nil
}

// wrap makes cmd start the trampoline, which runs cmd's program under s.
func wrap(cmd *exec.Cmd, s tramp.Spec) (*Run, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program, to confine the tool: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.Path, s.Argv, s.Program = cmd.Path, cmd.Args, cmd.Path
	s.Status = 3 + len(cmd.ExtraFiles)
	args, err := tramp.Args(s)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Path = exe
	cmd.Args = args
	return &Run{r: r, w: w, done: make(chan struct{})}, nil
}

// shownPaths lists how each path of p is written, Read then Write.
func (p Policy) shownPaths() []string {
	var out []string
	for _, a := range append(append([]string{}, p.Read...), p.Write...) {
		out = append(out, p.Shown[a])
	}
	return out
}

// ForTool is the policy c declares for the program of the tool called
// name (an exec tool's, or a stdio mcp server's), with base the
// manifest's directory; nil c is the default. It reports on standard
// error, once for each tool and reason, what this system cannot enforce,
// and fails instead when c requires it.
func ForTool(name string, c *plan.Confine, base string) (Policy, error) {
	p, err := Declared(c, base)
	if err != nil {
		return Policy{}, err
	}
	warnings, err := p.Check()
	if err != nil {
		return Policy{}, err
	}
	p.pinExisting()
	for _, w := range warnings {
		if _, dup := warned.LoadOrStore(name+"\x00"+w, true); !dup {
			fmt.Fprintf(os.Stderr, "agentc: warning: tool %q is not wholly confined: %s (set confine.enforce to \"require\" to refuse to run so, or \"off\" to run unconfined without this warning)\n", name, w)
		}
	}
	return p, nil
}

// Declared is the policy c declares, with base the manifest's directory
// (nil c is the default), without asking what this system can enforce:
// for a tool whose calls are never made here.
func Declared(c *plan.Confine, base string) (Policy, error) {
	if c == nil {
		c = &plan.Confine{}
	}
	p, err := Resolve(c.Read, c.Write, c.Network, c.Enforce, base)
	if err != nil || c.Limits == nil {
		return p, err
	}
	if err := c.Limits.Check(); err != nil {
		return Policy{}, err
	}
	if p.Enforce == Off && *c.Limits != (plan.Limits{}) {
		return Policy{}, fmt.Errorf("confine.limits: confine.enforce is %q, which runs the program as it is, with no limits", Off)
	}
	p.Limits = *c.Limits
	return p, nil
}

var warned sync.Map // tool name and warning → true
