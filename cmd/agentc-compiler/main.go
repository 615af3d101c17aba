// Command agentc-compiler is agentc with every verb: vet, digest, compile
// and run. The agentc command starts it for everything but a run of a
// compiled plan.
package main

import (
	_ "agentc.dev/agentc/internal/gcpace" // before the libraries initialise

	"os"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
)

func main() { os.Exit(cli.Main(cuecmd.Compiler())) }
