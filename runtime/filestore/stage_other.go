//go:build !unix || aix || solaris

package filestore

import (
	"os"
	"time"
)

// holdsOpen: with no flock(2) to hold, a staging file is closed once
// written, and can be renamed and removed on every system.
const holdsOpen = false

// abandonedAfter is how long a staging file must have lain untouched
// before a sweep removes it. This system has no flock(2) to tell a live
// writer's file, so age alone decides, and the margin is a day.
const abandonedAfter = 24 * time.Hour

func holdStaging(*os.File) error { return nil }

// sweepOne removes the staging file name in root when it is a regular
// file (never a link or a directory) untouched for abandonedAfter.
func sweepOne(root *os.Root, name string, now time.Time) {
	fi, err := root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < abandonedAfter {
		return
	}
	root.Remove(name)
}
