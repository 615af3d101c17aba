//go:build race

package cueproc

// holdMiB is what TestRun holds in a child: the race detector maps its own
// memory beside each byte a program maps, so less of Memory is left to use.
const holdMiB = Memory >> 23

// growSays is how a child that allocated without end is reported: the
// race detector may be the first to fail an allocation, in words of its own.
const growSays = "exit status "
