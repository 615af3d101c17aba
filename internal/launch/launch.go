// Package launch finds and executes agentc's programs. The agentc command
// is small: it starts the program a command needs (the compiler, which
// reads CUE, or the runtime, which runs compiled plans without it), so a
// run of a plan never pays for loading the compiler. The programs are
// installed side by side.
package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// The programs the agentc command starts: the first has every verb, the
// second runs compiled plans only and so starts without the compiler.
const (
	CompilerProgram = "agentc-compiler"
	RuntimeProgram  = "agentc-runtime"
)

// Find returns the path of the program name: the one beside the running
// program (as it was invoked, then as it resolves through symbolic links),
// else the one on PATH.
func Find(name string) (string, error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var dirs []string
	if arg0 := os.Args[0]; filepath.Base(arg0) != arg0 {
		dirs = append(dirs, filepath.Dir(arg0))
	} else if p, err := exec.LookPath(arg0); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		if isProgram(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "beside this program"
	if len(dirs) > 0 {
		where = "in " + dirs[0]
	}
	return "", fmt.Errorf("%s is not installed %s nor on PATH; agentc is three programs installed together: go install agentc.dev/agentc/cmd/...", name, where)
}

func isProgram(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return fi.Mode().IsRegular()
	}
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// ErrNotStarted wraps a failure to start a program, as opposed to the
// program's own failure.
var ErrNotStarted = errors.New("could not start")
