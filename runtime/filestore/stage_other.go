//go:build !unix || aix

package filestore

import (
	"os"
	"time"
)

// abandonedAfter is how long a staging file must have been left alone
// before a sweep removes it. This system has no flock(2) to tell a live
// writer's file, so age alone decides, and the margin is a day.
const abandonedAfter = 24 * time.Hour

func holdStaging(*os.File) error { return nil }

func released(string) bool { return true }
