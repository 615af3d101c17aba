//go:build !linux && !darwin && !freebsd && !dragonfly && !windows

package diskfree

func free1(string) (uint64, bool, error) { return 0, false, nil }
