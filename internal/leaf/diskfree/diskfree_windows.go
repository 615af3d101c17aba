//go:build windows

package diskfree

import "golang.org/x/sys/windows"

func free1(dir string) (uint64, bool, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, true, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, true, err
	}
	return avail, true, nil
}
