//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package runcmd

import "os"

// discardTyped does nothing here: only the lines agentc itself read
// before a call was shown are dropped (prompter.ask).
func discardTyped(*os.File) {}
