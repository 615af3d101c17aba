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
// written does not matter. It takes effect partway through start-up, not
// before it: Go initialises a package after every package it imports and,
// among those ready, in order of import path (the Go specification, since
// Go 1.21). This one needs os and runtime/debug, whose paths, like every
// path of the standard library's runtime parts (internal/..., os, sync,
// syscall, time), sort after the libraries' (cloud.google.com,
// cuelang.org, github.com, go..., golang.org, google.golang.org), so each
// library that does not need them initialises first: in agentc, about 240
// packages, and a collection at the default first goal (4 MiB) still
// falls among them (GODEBUG=inittrace=1,gctrace=1: one of agentc vet's
// two; none in agentc-runtime run). Setting it earlier would mean reaching
// into the runtime by linkname, which agentc does not do.
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
