//go:build !unix || aix || solaris

package flock

import "os"

// Supported reports whether this system has flock(2): Windows, AIX and
// Solaris do not.
const Supported = false

// Try takes no lock here and reports that it holds one: callers that need
// more than that check Supported.
func Try(*os.File, Mode) (bool, error) { return true, nil }

// Unsupported is false: Try returns no error here.
func Unsupported(error) bool { return false }
