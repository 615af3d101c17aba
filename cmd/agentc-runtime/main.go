// Command agentc-runtime is agentc's run verb without the compiler, for
// hosts and containers that only run plans: it runs plans written by
// agentc compile, with the flags of agentc run, and links neither CUE nor
// the other verbs. A plan carries the agents it calls, so it needs no other
// file; a manifest is refused before anything is read.
package main

import (
	_ "agentc.dev/agentc/internal/gcpace" // the collector's pace (GOGC=200)

	"os"

	"agentc.dev/agentc/internal/runcmd"
)

func main() { os.Exit(runcmd.Main()) }
