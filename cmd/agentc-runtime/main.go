// Command agentc-runtime is agentc's run verb without the compiler: it runs
// compiled plans, and starts without loading CUE or the command tree of
// the other verbs. The agentc command starts it for a run of a plan; a
// command line that turns out to need more (a manifest, a plan calling
// one, help) is passed to agentc-compiler before anything is read.
package main

import (
	_ "agentc.dev/agentc/internal/gcpace" // before the libraries initialise

	"os"

	"agentc.dev/agentc/internal/runcmd"
)

func main() { os.Exit(runcmd.Main()) }
