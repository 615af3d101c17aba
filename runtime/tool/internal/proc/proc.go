// Package proc runs tool programs so that nothing they start outlives
// them. Each program runs as a Group: in a process group of its own (on
// Unix), with a mark in its environment that every process it starts
// inherits. When the program has ended, Sweep kills its process group
// and, on Linux, every process that still carries the mark, wherever it
// moved (a new group or session included), with all their descendants.
//
// A program whose only child processes are its tools' (the agentc
// command) can also adopt what they leave behind (Adopt, a Linux child
// subreaper): a process that escapes both its group and its mark (setsid
// and a cleared environment) is then still this process's child, and
// Release kills it when the runs are over.
package proc

import (
	"crypto/rand"
	"os/exec"
	"runtime"
	"sync"
)

// MarkVar is the environment variable that marks a tool program and what
// it starts; its value is random, one per Group.
const MarkVar = "AGENTC_TOOL_PROCESS"

// Group is a tool program and everything it starts.
type Group struct {
	cmd  *exec.Cmd
	mark string // MarkVar=value, as it appears in an environment
	pid  int    // once started; guarded by reg.mu
}

// reg is every Group started and not yet swept: the processes os/exec
// waits for, which this package must never reap, and what KillAll kills.
var reg struct {
	mu   sync.Mutex
	live map[*Group]bool
	// starting counts starts under way in other packages' code, whose
	// process is not known yet (see Starting).
	starting int
	// ever says a Group has started, or begun to: before that this
	// process has no descendant, and Release has nothing to look for.
	ever bool
}

// New prepares cmd, not yet started, to run as a Group: in a process
// group of its own, and marked in its environment. It appends the mark
// to cmd.Env, which must be set already (nil means this process's whole
// environment, which would then not pass). On Linux
// the program is also killed when the thread that starts it ends, so that
// it does not outlive this process (even after kill -9): start it from a
// goroutine locked to its thread (runtime.LockOSThread) until it has
// exited.
func New(cmd *exec.Cmd) *Group {
	g := &Group{cmd: cmd, mark: MarkVar + "=" + rand.Text()}
	cmd.Env = append(cmd.Env, g.mark)
	setAttr(cmd)
	return g
}

// Start starts the program.
func (g *Group) Start() error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if err := g.cmd.Start(); err != nil {
		return err
	}
	g.addLocked()
	return nil
}

// Starting is for a program that other code starts (an SDK's transport):
// call it before that code may start the program, and the function it
// returns once it has started or failed to.
func (g *Group) Starting() (started func()) {
	reg.mu.Lock()
	reg.starting++
	reg.ever = true
	reg.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			reg.mu.Lock()
			defer reg.mu.Unlock()
			reg.starting--
			if g.cmd.Process != nil {
				g.addLocked()
			}
		})
	}
}

func (g *Group) addLocked() {
	g.pid = g.cmd.Process.Pid
	reg.ever = true
	if reg.live == nil {
		reg.live = map[*Group]bool{}
	}
	reg.live[g] = true
}

// Kill kills the program and its process group at once (a timeout, a
// cancelled call).
func (g *Group) Kill() {
	reg.mu.Lock()
	pid := g.pid
	reg.mu.Unlock()
	if pid != 0 {
		killGroup(g.cmd.Process, pid)
	}
}

// Sweep kills what is left of the Group once its program has exited and
// been waited for: its process group and, on Linux, every process that
// carries its mark and their descendants; it reaps those of them this
// process has adopted. It is safe to call more than once.
func (g *Group) Sweep() {
	reg.mu.Lock()
	pid := g.pid
	delete(reg.live, g)
	reg.mu.Unlock()
	if pid == 0 {
		return
	}
	killGroup(g.cmd.Process, pid)
	sweep(g.mark)
}

// Adopt makes this process, on Linux, the parent of every orphan among
// its descendants (a child subreaper), where the kernel allows it;
// elsewhere it does nothing. A program that adopts starts its other
// child processes in its own process group (os/exec's default): from then
// on, a sweep also reaps this process's children that exited, are no
// Group's program and are of another process group.
func Adopt() { adopt() }

// Release kills every process this process adopted that is still
// running, and what it started, and reaps them: for the end of a
// program's runs, when no Group runs any more.
func Release() { release() }

// KillAll kills every Group's program that is still running, its process
// group and, on Linux, every descendant of this process, without waiting
// for any of them: for a program that exits at once.
func KillAll() {
	reg.mu.Lock()
	var marks []string
	for g := range reg.live {
		killGroup(g.cmd.Process, g.pid)
		marks = append(marks, g.mark)
	}
	reg.mu.Unlock()
	killAll(marks)
}

// ownedLocked returns the pids os/exec waits for.
func ownedLocked() map[int]bool {
	owned := map[int]bool{}
	for g := range reg.live {
		owned[g.pid] = true
	}
	return owned
}

// OnThread runs f on a goroutine locked to its OS thread, and keeps the
// thread until the function it returns is called: a program that f
// starts, which on Linux is killed when the thread that started it ends,
// then lives as long as it should.
func OnThread(f func()) (release func()) {
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f()
		close(done)
		<-stop
	}()
	<-done
	var once sync.Once
	return func() { once.Do(func() { close(stop) }) }
}

// EnvName reports whether s is a variable name a tool's env may list: a
// letter or an underscore, then letters, digits and underscores (the
// manifest schema's ^[A-Za-z_][A-Za-z0-9_]*$).
func EnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
