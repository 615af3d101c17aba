// Package await is for tests that wait for something started outside
// their process to happen: a process to end, a file to be written. On
// Linux it waits on the kernel's word (a pidfd becomes readable when its
// process ends; inotify reports a write to a directory), so a test waits
// exactly as long as the thing takes and no longer; elsewhere it looks
// again every few milliseconds. Each wait is bounded by a timeout, after
// which it fails, so a test that would hang fails instead.
package await

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ProcessEnd waits until the process pid has ended: it no longer exists,
// or is a zombie (which PID 1 in a container may never reap). It fails
// when timeout passes first.
func ProcessEnd(pid int, timeout time.Duration) error {
	if err := processEnd(pid, timeout); err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	return nil
}

// File waits until the file at path exists and match accepts what it
// holds, and returns that. The file's directory must exist. It fails when
// timeout passes first.
func File(path string, match func([]byte) bool, timeout time.Duration) ([]byte, error) {
	data, err := file(path, match, timeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// Glob waits until a file whose name matches pattern (filepath.Glob's)
// exists and match accepts what it holds, and returns its path. Only the
// last element of the pattern may hold wildcards, and its directory must
// exist. It fails when timeout passes first.
func Glob(pattern string, match func([]byte) bool, timeout time.Duration) (string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return "", fmt.Errorf("%s: %w", pattern, err)
	}
	var found string
	cond := func() bool {
		names, _ := filepath.Glob(pattern)
		for _, name := range names {
			if _, ok := read(name, match); ok {
				found = name
				return true
			}
		}
		return false
	}
	if err := watch(filepath.Dir(pattern), cond, timeout); err != nil {
		return "", fmt.Errorf("%s: %w", pattern, err)
	}
	return found, nil
}

// read returns the file's content when match accepts it.
func read(path string, match func([]byte) bool) ([]byte, bool) {
	data, err := os.ReadFile(path)
	if err != nil || !match(data) {
		return nil, false
	}
	return data, true
}

// timedOut is the error of a wait that ran out of time.
func timedOut(what string, timeout time.Duration) error {
	return fmt.Errorf("%s: not within %v", what, timeout)
}

// poll checks cond every few milliseconds until it holds or timeout
// passes: for what the kernel does not report.
func poll(cond func() bool, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
