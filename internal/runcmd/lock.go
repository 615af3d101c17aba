package runcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/project"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
)

// runLock is the lock file a run's agents are checked against: a plan's
// seal catches a plan damaged by accident, but anyone who can edit a plan
// can reseal it, so only digests recorded elsewhere catch that.
type runLock struct {
	path    string       // "" when no lock was named or found
	lock    *digest.Lock // nil when path is ""
	require bool
	stderr  io.Writer
}

// openLock reads the lock file named by --lock or, without it, the nearest
// agentc.sum in dir (the agent's directory) or a directory above it in its
// project (package internal/leaf/project).
func openLock(e Env, f Flags, dir string) (*runLock, error) {
	l := &runLock{path: f.lock, require: f.requireLock, stderr: e.Stderr}
	if l.path == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, &ExitError{Code: ExitFindings, Err: err}
		}
		if l.path = digest.FindLock(project.Dirs(abs)...); l.path == "" {
			// Under --require-lock, the agent's check says what is missing.
			return l, nil
		}
		l.path = relPath(l.path, e.Dir)
	}
	var data []byte
	var err error
	if f.lock != "" {
		data, err = userfile.Read(l.path, plan.MaxLockBytes, "a lock file")
	} else {
		// Found in the project: it must lie beneath its root, its links
		// followed, as a configuration file must.
		abs, _ := filepath.Abs(l.path)
		data, err = userfile.ReadBeneath(project.Root(filepath.Dir(abs)), l.path, plan.MaxLockBytes, "a lock file")
	}
	if err != nil {
		if f.lock != "" && errors.Is(err, fs.ErrNotExist) {
			return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--lock: %w", err)}
		}
		return nil, &ExitError{Code: ExitFindings, Err: err}
	}
	if l.lock, err = digest.ParseLock(l.path, data); err != nil {
		return nil, &ExitError{Code: ExitFindings, Err: err}
	}
	return l, nil
}

// check compares an agent the run loaded from path with its lock entry:
// a digest that moved is an error, and so, under --require-lock, is no
// lock or no entry; an agent the lock does not hold is otherwise run with
// a note. It reports whether the agent's entry matched.
func (l *runLock) check(p *plan.Plan, path string) (bool, error) {
	name := p.Agent.Name
	fail := func(format string, args ...any) (bool, error) {
		return false, &ExitError{Code: ExitFindings, Err: fmt.Errorf("agent %q (%s) "+format, append([]any{name, path}, args...)...)}
	}
	if l.lock == nil {
		if l.require {
			return fail("has no lock file: no %s beside it or in a directory above, and --require-lock requires one; record its digests with agentc digest --write, or name a lock with --lock", digest.LockFile)
		}
		return false, nil
	}
	moved, ok := l.lock.Compare(digest.Entry{Name: name, Contract: p.Digests.Contract, Plan: p.Digests.Plan})
	if !ok {
		if l.require {
			return fail("has no entry in %s, and --require-lock requires one; record it with agentc digest --write %s", l.path, path)
		}
		fmt.Fprintf(l.stderr, "agentc: %s holds no agent %q: %s runs unchecked\n", l.path, name, path)
		return false, nil
	}
	if len(moved) > 0 {
		return fail("is not the agent %s records: %s. The lock pins each agent's digests, and a run refuses an agent that moved from them, whatever its model. If the change is meant, record it with agentc digest --write %s and run again; if not, run the version that was reviewed",
			l.path, moved, path)
	}
	return true, nil
}

// checkCallees checks the agents a plan calls whose caller's entry did not
// match (the lock does not hold it), as check does the plan's own agent,
// and so on down: a caller's plan digest covers its callees' plans, so an
// entry that matched has checked everything below it. dir is the caller's
// directory, which callees' paths are relative to, for messages.
func (l *runLock) checkCallees(p *plan.Plan, dir string) error {
	for _, name := range slices.Sorted(maps.Keys(p.Callees)) {
		c := p.Callees[name]
		path, cdir := c.Within(dir)
		matched, err := l.check(c.Plan, path)
		if err == nil && !matched {
			err = l.checkCallees(c.Plan, cdir)
		}
		if err != nil {
			code := ExitFindings
			var xe *ExitError
			if errors.As(err, &xe) {
				code, err = xe.Code, xe.Err
			}
			return &ExitError{Code: code, Err: fmt.Errorf("tool %q: the called agent %q: %w", name, c.Path, err)}
		}
	}
	return nil
}

// relPath returns p relative to dir when it lies below it.
func relPath(p, dir string) string {
	if dir == "" {
		return p
	}
	if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}
