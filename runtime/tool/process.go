package tool

import (
	"agentc.dev/agentc/runtime/tool/internal/confine"
	"agentc.dev/agentc/runtime/tool/internal/proc"
)

// AdoptOrphans makes this process, on Linux, the parent of every orphan
// among its descendants (a child subreaper), where the kernel allows it;
// elsewhere it does nothing. Exec tools and mcp servers already kill, when
// a call or a server ends, what the program started, wherever it moved;
// an adopting process also gets the one that both left the program's
// process group and replaced its environment (env -i), and reaps what
// the calls kill, with the adopted orphans that exit. It is meant for a
// program whose child processes are its tools' or stay in its own
// process group, as os/exec starts them (the agentc command): from then
// on, each call's end reaps this process's children that have exited,
// are no tool's program and are of another process group.
//
// The function it returns kills every adopted process still running, and
// what it started, and reaps them: call it when no tool is running any
// more, at the end of the program's runs.
func AdoptOrphans() (release func()) {
	proc.Adopt()
	return proc.Release
}

// KillProcesses kills at once every tool process still running (exec
// programs and mcp servers), with their process groups and, on Linux,
// every descendant of this process, without waiting for any: for a
// program about to exit without closing its tools.
func KillProcesses() { proc.KillAll() }

// Confinement says what this system offers to confine a tool's program:
// Landlock's ABI version (0 without it) and whether new user, PID and
// network namespaces can be made. It is 0 and false but on Linux.
func Confinement() (landlockABI int, namespaces bool) { return confine.Support() }
