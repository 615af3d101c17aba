// Package tramp is the confined side of package confine: the trampoline,
// which restricts one of its threads and starts a tool's program from it,
// and the stage, which sets the program's resource limits and becomes it.
// Both are the program that links confine started again, and become what
// they are in this package's init.
//
// It imports nothing of agentc's and few libraries, so that the
// trampoline and the stage start as soon as Go has initialised what they
// use: Go initialises a program's packages in the order of their import
// paths as far as their imports allow, and this one sorts before every
// library, so it runs once its own imports are ready, not after every
// package of the program (most of agentc's start, which each confined
// call would otherwise pay once, or twice with limits).
package tramp

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Program is the trampoline's os.Args[0].
const Program = "agentc-confine"

// marker is the trampoline's os.Args[1]; with Program it tells the
// trampoline from a command line a person typed.
const marker = "--agentc-confine-v1"

// StageProgram is the os.Args[0] of the stage between the trampoline and
// a program with limits: this program started once more, already
// confined, which sets the limits on itself and becomes the program
// (execve), so that nothing of agentc's runs under them.
const StageProgram = "agentc-limits"

// stageMarker is the stage's os.Args[1].
const stageMarker = "--agentc-limits-v1"

// Spec is what the trampoline is told, as JSON in os.Args[2]; the
// program's own arguments follow it, each as it is, so that they are
// bounded as an unconfined program's are, not all together in one
// argument.
type Spec struct {
	Path    string   `json:"path"`
	Argv    []string `json:"-"`
	Read    []string `json:"read,omitempty"`
	Write   []string `json:"write,omitempty"`
	Shown   []string `json:"shown,omitempty"` // Read then Write, as written
	Program string   `json:"program"`         // the program's path, readable
	Held    []int    `json:"held,omitempty"`  // descriptors of Read and Write, closed before the program starts
	Network bool     `json:"network,omitempty"`
	NS      bool     `json:"ns,omitempty"`      // in new namespaces
	Seccomp bool     `json:"seccomp,omitempty"` // under the seccomp filter
	Mounts  bool     `json:"mounts,omitempty"`  // in a mount namespace, to be made read-only but for Write
	Status  int      `json:"status"`            // the status pipe's descriptor
	Limits  *Limits  `json:"limits,omitempty"`  // started through the stage, under them
}

// Limits are a policy's limits as the stage sets them: CPU in whole
// seconds, Memory and FileSize in bytes, 0 for none.
type Limits struct {
	CPU      int64 `json:"cpu,omitempty"`
	Memory   int64 `json:"memory,omitempty"`
	FileSize int64 `json:"file_size,omitempty"`
}

// stageSpec is what the stage is told, as JSON in os.Args[2]; the
// program's arguments follow it, as they follow the trampoline's.
type stageSpec struct {
	Path   string   `json:"path"`
	Argv   []string `json:"-"`
	Limits Limits   `json:"limits"`
	Err    int      `json:"err"` // the descriptor it reports a failure on; closed by a successful execve
}

// Args is the command line that starts the trampoline with s, which the
// program that links confine runs as itself.
func Args(s Spec) ([]string, error) {
	return args(Program, marker, s, s.Argv)
}

// args is the command line of the trampoline or the stage: its name, its
// marker, spec as JSON (paths written as they are: < > & not escaped),
// then the program's arguments.
func args(name, mark string, spec any, argv []string) ([]string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(spec); err != nil {
		return nil, err
	}
	return append([]string{name, mark, strings.TrimSuffix(b.String(), "\n")}, argv...), nil
}

// Every program that links package confine (agentc, agentc-runtime, a Go
// host that runs exec tools, their tests) starts itself again as the
// trampoline and the stage, so each must become them before its own main
// runs, and, so as not to initialise first every library it links, from
// this package's init.
func init() {
	if code, ok := Main(); ok {
		os.Exit(code)
	}
}

// Main runs this process as the trampoline or the stage when it was
// started as one, and returns the exit code; ok is false otherwise.
func Main() (code int, ok bool) {
	if len(os.Args) >= 3 && os.Args[0] == StageProgram && os.Args[1] == stageMarker {
		var s stageSpec
		if err := json.Unmarshal([]byte(os.Args[2]), &s); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", StageProgram, err)
			return 125, true
		}
		s.Argv = os.Args[3:]
		return stage(s), true
	}
	if len(os.Args) < 3 || os.Args[0] != Program || os.Args[1] != marker {
		return 0, false
	}
	var s Spec
	if err := json.Unmarshal([]byte(os.Args[2]), &s); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Program, err)
		return 125, true
	}
	s.Argv = os.Args[3:]
	return trampoline(s), true
}
