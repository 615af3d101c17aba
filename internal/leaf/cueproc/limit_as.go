//go:build unix && !openbsd

package cueproc

import "syscall"

// rlimitMemory is the limit on the address space a process maps.
const rlimitMemory = syscall.RLIMIT_AS
