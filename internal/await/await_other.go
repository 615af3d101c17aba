//go:build !linux

package await

import (
	"errors"
	"os"
	"syscall"
	"time"
)

func processEnd(pid int, timeout time.Duration) error {
	if poll(func() bool { return ended(pid) }, timeout) {
		return nil
	}
	return timedOut("still runs", timeout)
}

func file(path string, match func([]byte) bool, timeout time.Duration) ([]byte, error) {
	var data []byte
	if poll(func() bool { d, ok := read(path, match); data = d; return ok }, timeout) {
		return data, nil
	}
	return nil, timedOut("no match", timeout)
}

func watch(_ string, cond func() bool, timeout time.Duration) error {
	if poll(cond, timeout) {
		return nil
	}
	return timedOut("no match", timeout)
}

// ended says whether pid no longer exists (a zombie goes unseen here).
func ended(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	defer p.Release()
	return errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
