// Command agentc compiles, checks and runs declarative LLM agents written as
// CUE manifests.
//
// agentc is three programs installed together (go install
// agentc.dev/agentc/cmd/...): this command, which starts the one a command
// line needs in its own place; agentc-compiler, which has every verb; and
// agentc-runtime, which runs compiled plans without loading the compiler.
package main

import (
	"os"

	"agentc.dev/agentc/internal/dispatch"
)

func main() { os.Exit(dispatch.Main()) }
