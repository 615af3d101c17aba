//go:build linux

package proc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// settleTime bounds how long a sweep waits for the processes it killed
// to die, so that it can reap them; one stuck in the kernel (an
// unreachable network file system) is left to Release.
const settleTime = 2 * time.Second

// execRetries bounds how often marked reads a process that is in the
// middle of an execve: 100 times 0.1 ms.
const execRetries = 100

// maxRounds bounds how often a sweep looks again for processes forked
// while it was killing their parents.
const maxRounds = 50

var (
	self    = os.Getpid()
	adopted atomic.Bool
)

func setAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func adopt() {
	if unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil {
		adopted.Store(true)
	}
}

// sweep kills every process that carries mark and their descendants, and
// reaps those that end as this process's children, with any other child
// that is no Group's program, has exited and is not of this process's
// own process group.
func sweep(mark string) {
	settle(killTrees(func(s stat) bool { return marked(s, mark) }))
	reapStray(false)
}

// release kills every process adopted, with its descendants, and reaps
// them. A process that never started a Group has none, and is spared the
// look through every process of the system.
func release() {
	if !adopted.Load() {
		return
	}
	reg.mu.Lock()
	ever, owned := reg.ever, ownedLocked()
	reg.mu.Unlock()
	if !ever {
		return
	}
	settle(killTrees(func(s stat) bool { return s.ppid == self && !owned[s.pid] }))
	reapStray(true)
}

// killAll kills every descendant of this process and every process that
// carries one of marks, with its descendants, once and without waiting.
func killAll(marks []string) {
	roots := func(s stat) bool {
		if s.ppid == self {
			return true
		}
		for _, m := range marks {
			if marked(s, m) {
				return true
			}
		}
		return false
	}
	for _, s := range trees(processes(), roots) {
		kill(s)
	}
}

// stat is what /proc/PID/stat says of a process.
type stat struct {
	pid, ppid, pgrp int
	state           byte
	kthread         bool // a kernel thread, which has no environment
	// start is when the process started, in clock ticks since boot:
	// with the pid, it names one process even after the pid is reused.
	start uint64
}

// pfKthread is the flag of a kernel thread in /proc/PID/stat.
const pfKthread = 0x00200000

// dead reports whether the process has ended and waits to be reaped.
func (s stat) dead() bool { return s.state == 'Z' || s.state == 'X' }

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return stat{}, false
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return stat{}, false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return stat{}, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return stat{}, false
	}
	return stat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], kthread: flags&pfKthread != 0, start: start}, true
}

// processes lists every process /proc shows.
func processes() []stat {
	entries, _ := os.ReadDir("/proc")
	var out []stat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if s, ok := readStat(pid); ok {
			out = append(out, s)
		}
	}
	return out
}

// marked reports whether the environment a live process started with
// holds mark. It is unreadable for another user's processes and for one
// that is exiting; a process that replaced its environment (env -i) loses
// it. A process in the middle of an execve shows neither environment nor
// command line for a moment, and is read again.
func marked(s stat, mark string) bool {
	if s.dead() || s.kthread {
		return false
	}
	dir := "/proc/" + strconv.Itoa(s.pid) + "/"
	for range execRetries {
		b, err := os.ReadFile(dir + "environ")
		if err != nil {
			return false
		}
		if len(b) > 0 {
			for kv := range bytes.SplitSeq(b, []byte{0}) {
				if string(kv) == mark {
					return true
				}
			}
			return false
		}
		if c, err := os.ReadFile(dir + "cmdline"); err != nil || len(c) > 0 {
			return false // an empty environment indeed
		}
		time.Sleep(100 * time.Microsecond)
	}
	return false
}

// trees returns the processes of ps that root selects and all their
// descendants, never this process.
func trees(ps []stat, root func(stat) bool) []stat {
	children := map[int][]stat{}
	for _, s := range ps {
		children[s.ppid] = append(children[s.ppid], s)
	}
	var out []stat
	seen := map[int]bool{self: true}
	var walk func(s stat)
	walk = func(s stat) {
		if seen[s.pid] {
			return
		}
		seen[s.pid] = true
		out = append(out, s)
		for _, c := range children[s.pid] {
			walk(c)
		}
	}
	for _, s := range ps {
		if s.pid != self && root(s) {
			walk(s)
		}
	}
	return out
}

// killTrees kills every live process that root selects and every
// descendant of those, looking again until a look finds none it has not
// killed (a parent may fork before it dies), and returns what it killed:
// pids with their start times.
func killTrees(root func(stat) bool) map[int]uint64 {
	killed := map[int]uint64{}
	for range maxRounds {
		fresh := 0
		for _, s := range trees(processes(), root) {
			if start, ok := killed[s.pid]; s.dead() || ok && start == s.start {
				continue
			}
			if kill(s) {
				killed[s.pid] = s.start
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	return killed
}

// kill sends SIGKILL to the process s names, unless its pid now names
// another process. A pidfd holds the process while its start time is
// checked; kernels without pidfds (before 5.3) leave a moment in which
// the pid could be reused.
func kill(s stat) bool {
	same := func() bool {
		now, ok := readStat(s.pid)
		return ok && now.start == s.start
	}
	fd, err := unix.PidfdOpen(s.pid, 0)
	switch {
	case err == nil:
		defer unix.Close(fd)
		return same() && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
	case errors.Is(err, unix.ESRCH):
		return false
	}
	return same() && unix.Kill(s.pid, unix.SIGKILL) == nil
}

// settle waits, up to settleTime, for the processes killed to die, and
// reaps each that dies as this process's child: killed directly, or
// adopted when its killed parent died first. It waits for those pids
// alone, never for any child, so it takes no exit status os/exec waits
// for.
func settle(killed map[int]uint64) {
	deadline := time.Now().Add(settleTime)
	for len(killed) > 0 {
		for pid, start := range killed {
			s, ok := readStat(pid)
			switch {
			case !ok || s.start != start:
				delete(killed, pid) // reaped by its parent
			case !s.dead():
				// Dying still.
			case s.ppid == self:
				reap(pid)
				delete(killed, pid)
			default:
				if _, ok := killed[s.ppid]; !ok {
					delete(killed, pid) // its parent, not one of ours, reaps it
				}
			}
		}
		if len(killed) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// reapStray reaps this process's children that have exited and are no
// Group's program: orphans it adopted that no sweep could name (one that
// exited before its Group ended, or lost its mark). It reaps none while a
// start is under way whose process is not known yet. Unless all, it
// spares a child of this process's own process group: one this process
// started itself outside a Group (an evaluation of CUE, a probe of the
// kernel), which a Group's program never is (it leads a group of its
// own), and whose exit status os/exec, waiting for it on another
// goroutine, would otherwise lose ("no child processes"). An orphan that
// joined this process's group is reaped at Release, with all.
func reapStray(all bool) {
	if !adopted.Load() {
		return
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.starting > 0 {
		return
	}
	owned := ownedLocked()
	own := unix.Getpgrp()
	for _, s := range processes() {
		if s.ppid == self && s.dead() && !owned[s.pid] && (all || s.pgrp != own) {
			reap(s.pid)
		}
	}
}

func reap(pid int) {
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}
