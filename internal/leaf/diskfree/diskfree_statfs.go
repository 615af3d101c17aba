//go:build linux || darwin || freebsd || dragonfly

package diskfree

import "golang.org/x/sys/unix"

func free1(dir string) (uint64, bool, error) {
	var st unix.Statfs_t
	for {
		err := unix.Statfs(dir, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, true, err
		}
		break
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true, nil
}
