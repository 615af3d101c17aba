package cueproc

import "syscall"

// rlimitMemory is the limit on a process's data, which on OpenBSD counts
// the anonymous memory Go's heap maps (it has no RLIMIT_AS).
const rlimitMemory = syscall.RLIMIT_DATA
