// Package dispatch is the agentc command: it reads just enough of the
// command line to pick the program that does the work and executes it in
// its own place. A run of a compiled plan goes to the runtime program,
// which does not load the compiler; everything else (vet, digest, compile,
// a run of a manifest, help, a command line it cannot read) goes to the
// compiler program, which has every verb and reports every usage error.
//
// It imports nothing but the standard library, so it starts in about a
// millisecond.
package dispatch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agentc.dev/agentc/internal/launch"
)

const (
	compilerProgram = launch.CompilerProgram
	runtimeProgram  = launch.RuntimeProgram
)

// Main executes the program args call for and returns only if that fails.
// Without the runtime program, the compiler program, which runs plans
// too, is used.
func Main() int {
	path, err := find(Route(os.Args[1:], readRegular), launch.Find)
	if err == nil {
		err = launch.Exec(path, os.Args[1:])
	}
	fmt.Fprintf(os.Stderr, "agentc: %v\n", err)
	return 1
}

// find finds prog, or the compiler program in place of a missing runtime.
func find(prog string, find func(string) (string, error)) (string, error) {
	path, err := find(prog)
	if err != nil && prog == runtimeProgram {
		if p, cerr := find(compilerProgram); cerr == nil {
			return p, nil
		}
	}
	return path, err
}

// readRegular reads a regular file. Anything else (a pipe, a device) is
// read once, by the program that runs it, so here it is not a plan.
func readRegular(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return os.ReadFile(name)
}

// runValueFlags are the flags of the run verb that take a value, as
// "--name value" or "--name=value". A test keeps the list equal to the
// run verb's own.
var runValueFlags = map[string]bool{
	"input": true, "model": true, "seed": true, "events": true, "dir": true, "base-url": true,
	"deadline": true, "tool-budget": true, "token-budget": true, "rounds": true, "record": true, "replay": true, "lock": true,
}

// runBoolFlags are the run verb's flags that take none. Help is not among
// them: the compiler program prints it, with every verb.
var runBoolFlags = map[string]bool{"report": true, "require-lock": true}

// Route returns the program for the command line args; readFile reads a
// run's path to tell a plan from a manifest.
func Route(args []string, readFile func(string) ([]byte, error)) string {
	path, ok := runPath(args)
	if !ok || !strings.EqualFold(filepath.Ext(path), ".json") {
		return compilerProgram
	}
	data, err := readFile(path)
	if err != nil || !looksLikePlan(data) {
		return compilerProgram
	}
	return runtimeProgram
}

// runPath returns the path of a run command line: false for any other
// verb, for a run with no path (it means ".", which is not a plan) and for
// anything the compiler program should report (an unknown flag, a missing
// value, two paths).
func runPath(args []string) (string, bool) {
	if len(args) == 0 || args[0] != "run" {
		return "", false
	}
	var paths []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			switch {
			case runBoolFlags[name]:
			case runValueFlags[name] && hasValue:
			case runValueFlags[name] && i+1 < len(args):
				i++
			default:
				return "", false
			}
		case a == "-":
			paths = append(paths, a)
		case strings.HasPrefix(a, "-"):
			return "", false
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) != 1 {
		return "", false
	}
	return paths[0], true
}

// looksLikePlan tells whether a file may be a plan: one holds its format,
// "agentc.plan/...". A JSON manifest that merely mentions it is passed on
// by the runtime program, which reads the file in full.
func looksLikePlan(data []byte) bool {
	return bytes.Contains(data, []byte(`"agentc.plan/`))
}
