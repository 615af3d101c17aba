//go:build unix

package project

import (
	"os"
	"syscall"
)

// ownedByUser reports whether dir belongs to the user running agentc
// (its effective user).
func ownedByUser(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
