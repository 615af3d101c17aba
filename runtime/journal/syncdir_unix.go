//go:build unix

package journal

import (
	"errors"
	"syscall"
)

// dirSyncRefused tells whether err is a file system's refusal to sync a
// directory, which some (network and FUSE file systems among them) answer
// with EINVAL or ENOTSUP, rather than a failure to write.
func dirSyncRefused(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, errors.ErrUnsupported)
}
