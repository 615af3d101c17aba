package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// A tool is a program a test runs that is built from the Go module proxy:
// the cue command (of the cuelang.org/go version agentc builds with) and
// actionlint. Built once, into the go command's bin directory (or
// $AGENTC_TOOLS) under a name that carries its version, and kept there:
// the first build takes a minute or more, later runs find it.
type tool struct {
	name, pkg string
	// version is the module version to build, or "" for the version in
	// agentc's go.mod.
	version string

	once sync.Once
	path string
	err  error
}

var (
	cueTool        = &tool{name: "cue", pkg: "cuelang.org/go/cmd/cue"}
	actionlintTool = &tool{name: "actionlint", pkg: "github.com/rhysd/actionlint/cmd/actionlint", version: "v1.7.12"}
)

// program returns the tool's path, building it the first time.
func (t *tool) program() (string, error) {
	t.once.Do(func() { t.path, t.err = t.build() })
	return t.path, t.err
}

func (t *tool) build() (string, error) {
	dest := os.Getenv("AGENTC_TOOLS")
	if dest == "" {
		out, err := exec.Command("go", "env", "GOPATH").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOPATH: %v", err)
		}
		dest = filepath.Join(strings.TrimSpace(strings.Split(string(out), string(os.PathListSeparator))[0]), "bin")
	}
	version := t.version
	if version == "" {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", strings.SplitN(t.pkg, "/cmd/", 2)[0]).Output()
		if err != nil {
			return "", fmt.Errorf("go list -m %s: %v", t.pkg, err)
		}
		version = strings.TrimSpace(string(out))
	}
	prog := filepath.Join(dest, t.name+"-"+version)
	if _, err := os.Stat(prog); err == nil {
		return prog, nil
	}
	fmt.Fprintf(os.Stderr, "building %s@%s into %s\n", t.pkg, version, dest)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	// Built beside its place and renamed, so that a build cut short
	// leaves no program to find.
	tmp, err := os.MkdirTemp(dest, "."+t.name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, t.name)
	cmd := exec.Command("go", "install", t.pkg+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp)
	if t.version == "" {
		// In agentc's module, whose go.sum has the tool's dependencies.
		cmd = exec.Command("go", "build", "-o", built, t.pkg)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", t.pkg, err, out)
	}
	if err := os.Rename(built, prog); err != nil {
		return "", err
	}
	return prog, nil
}
