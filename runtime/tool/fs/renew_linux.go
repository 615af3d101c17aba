package fs

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// renewRoot returns the directory now at real when the held root was
// removed (it has no links left), found by a lookup that follows no link
// on the whole path (openat2's RESOLVE_NO_SYMLINKS): a directory made
// again in the root's place, never one a link there, or in a directory
// above it, leads to. Otherwise, or where the system cannot tell, nil.
func renewRoot(held *os.Root, real string) *os.Root {
	fi, err := held.Stat(".")
	if err != nil {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink > 0 {
		return nil
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, real, &unix.OpenHow{
		Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	r, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil
	}
	return r
}
