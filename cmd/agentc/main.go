// Command agentc compiles, checks and runs declarative LLM agents written as
// CUE manifests.
package main

import "os"

func main() { os.Exit(Main()) }
