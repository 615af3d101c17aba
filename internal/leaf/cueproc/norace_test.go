//go:build !race

package cueproc

// holdMiB is what TestRun holds in a child: half of Memory.
const holdMiB = Memory >> 21

// growSays is how a child that allocated without end is reported.
const growSays = `exit status 2 ("runtime: out of memory`
