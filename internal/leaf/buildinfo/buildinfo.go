// Package buildinfo says which build of agentc is running: the module
// version the go command stamped into the program, or one given at link
// time.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// stamped is a version given at link time, for a build that has no
// version control information to stamp one from (a source tree without
// .git, as in many container builds):
//
//	go build -ldflags "-X agentc.dev/agentc/internal/leaf/buildinfo.stamped=v1.2.3" ./cmd/agentc
var stamped string

// Version is the program's version: one given at link time, else the
// module version the go command stamped (a release, v1.2.3, or the
// pseudo-version it derives from the clone's commit,
// v0.0.0-20261205033000-698483fabcde, with +dirty for a modified
// checkout), else "(devel)": built without version control information
// (-buildvcs=false, go run, a test binary, a tree without .git).
func Version() string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return version(bi)
}

func version(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" {
		return v
	}
	return "(devel)"
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
