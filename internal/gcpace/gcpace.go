// Package gcpace sets the garbage collector's pace for agentc's programs,
// which live for one command: collect when the heap has tripled since the
// last collection, not doubled (GOGC=200 rather than 100). Their heap is
// a few MiB, so the first collections would otherwise fall in the middle
// of start-up, while packages initialise, and cost more time than the
// memory they free: a run of a plan takes 6 ms less and no more memory,
// a vet of 200 manifests peaks 11% higher (BENCHMARKS.md). A GOGC in the
// environment is left to rule.
//
// Import it (blank) in a program's main package; where the import is
// written does not matter. Go initialises a package after every package
// it imports and, among those ready, in order of import path (the Go
// specification, since Go 1.21): this one imports only the standard
// library's runtime parts, and its path, agentc.dev/..., sorts before
// every library that allocates at start-up (cuelang.org, github.com,
// golang.org), so it runs before they do.
package gcpace

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC value set.
const Percent = 200

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Percent)
	}
}
