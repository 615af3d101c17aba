//go:build !unix || aix || solaris

package journal

import (
	"io/fs"
	"os"
)

const noFollow, nonBlock = 0, 0

func links(fs.FileInfo) uint64 { return 1 }

// tryLock takes no lock: this system has no flock(2) (Windows, AIX, …).
func tryLock(*os.File, bool) (bool, error) { return true, nil }
