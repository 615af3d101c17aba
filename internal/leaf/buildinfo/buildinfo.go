// Package buildinfo says which build of agentc is running: the module
// version the go command stamped into the program, or the commit it was
// built from when it carries no version.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the program's module version: a release (v1.2.3), the
// pseudo-version the go command derives from a commit
// (v0.0.0-20261205033000-698483fabcde, with +dirty for a modified
// checkout), or "(devel)" when the build recorded none.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return version(bi)
}

func version(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	// go build -buildvcs=false, go run and test binaries stamp no
	// version; a commit, when recorded, still tells builds apart.
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "(devel) " + rev
}

// Text is what a program's --version prints: its name and version, the Go
// release and platform it was built for, and the formats of the files it
// reads and writes, given as name and format pairs.
func Text(program string, formats ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", program, Version())
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, f := range formats {
		fmt.Fprintf(&b, "%s: %s\n", f[0], f[1])
	}
	return b.String()
}
