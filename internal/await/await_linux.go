package await

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// waitReadable waits, up to the deadline, until fd is readable.
func waitReadable(fd int, deadline time.Time) (bool, error) {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, os.NewSyscallError("poll", err)
		}
		if n > 0 {
			return true, nil
		}
	}
}

func processEnd(pid int, timeout time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil // gone, and reaped
	}
	if err != nil {
		// A kernel before 5.3 has no pidfd.
		if poll(func() bool { return ended(pid) }, timeout) {
			return nil
		}
		return timedOut("still runs", timeout)
	}
	defer unix.Close(fd)
	// A pidfd is readable once its process has ended, reaped or not.
	ok, err := waitReadable(fd, time.Now().Add(timeout))
	if err != nil {
		return err
	}
	if !ok {
		return timedOut("still runs", timeout)
	}
	return nil
}

// ended says whether pid no longer exists or is a zombie, from /proc.
func ended(pid int) bool {
	if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
		return true
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
		}
	}
	return false
}

func file(path string, match func([]byte) bool, timeout time.Duration) ([]byte, error) {
	var data []byte
	err := watch(filepath.Dir(path), func() bool {
		d, ok := read(path, match)
		data = d
		return ok
	}, timeout)
	return data, err
}

// watch waits until cond holds, looking again each time the kernel reports
// a file created, written or moved into dir.
func watch(dir string, cond func() bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("inotify_init1", err)
	}
	defer unix.Close(in)
	// Watched before the first look, so no write between the two is missed.
	if _, err := unix.InotifyAddWatch(in, dir, unix.IN_CREATE|unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		return os.NewSyscallError("inotify_add_watch", err)
	}
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		if cond() {
			return nil
		}
		ok, err := waitReadable(in, deadline)
		if err != nil {
			return err
		}
		if !ok {
			return timedOut("no match", timeout)
		}
		// The events only say to look again: drain them.
		for {
			if _, err := unix.Read(in, buf); err != nil {
				break
			}
		}
	}
}
