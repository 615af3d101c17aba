//go:build !linux

package confine

import (
	"fmt"
	"os/exec"
	"runtime"

	"agentc.dev/agentc/plan"
)

// Check says that this system cannot confine: a warning when p's Enforce
// is Best, an error when it is Require.
func (p Policy) Check() (warnings []string, err error) {
	if p.Enforce == Off {
		return nil, nil
	}
	what := fmt.Sprintf("agentc confines tools on Linux only; on %s the program runs with every right of the user", runtime.GOOS)
	if p.Limits != (plan.Limits{}) {
		what += ", and confine.limits do not bound it"
	}
	if p.Enforce == Require {
		return nil, fmt.Errorf("confine.enforce is %q, but %s", Require, what)
	}
	return []string{what}, nil
}

// pinExisting does nothing here: nothing is confined.
func (p Policy) pinExisting() {}

// Wrap does nothing here: the program runs unconfined.
func (p Policy) Wrap(*exec.Cmd) (*Run, error) { return nil, nil }

func describe(int) Status { return Status{} }

// Support says that this system offers nothing to confine with.
func Support() (landlockABI int, namespaces bool) { return 0, false }

// Seccomp says that this system installs no seccomp filter.
func Seccomp() (ok bool, why string) {
	return false, "agentc confines tools on Linux only, not on " + runtime.GOOS
}
