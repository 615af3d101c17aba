// Command agentc compiles, checks and runs declarative LLM agents written as
// CUE manifests: every verb (vet, digest, compile, run) in one program.
// agentc-runtime is its run verb alone, for hosts that only run plans.
package main

import (
	_ "agentc.dev/agentc/internal/gcpace" // the collector's pace (GOGC=200)

	"os"

	"agentc.dev/agentc/internal/cli"
	"agentc.dev/agentc/internal/cli/cuecmd"
)

func main() { os.Exit(cli.Main(cuecmd.Compiler())) }
