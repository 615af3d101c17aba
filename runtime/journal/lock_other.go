//go:build !unix

package journal

import (
	"io/fs"
	"os"
)

const noFollow, nonBlock = 0, 0

func links(fs.FileInfo) uint64 { return 1 }

// running says whether a process with the id pid is there: where the
// system cannot say (os.FindProcess succeeds for any id), it is taken to
// be, and a lock file holding its id and no stamp is not taken over.
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
