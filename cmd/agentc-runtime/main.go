// Command agentc-runtime is agentc's run verb without the compiler: it runs
// compiled plans, and starts without loading CUE. The agentc command starts
// it for a run of a plan; a run that turns out to need compiling (a
// manifest, or a plan calling one) is passed to agentc-compiler before it
// begins.
package main

import (
	"os"

	"agentc.dev/agentc/internal/cli"
)

func main() { os.Exit(cli.Main(nil)) }
