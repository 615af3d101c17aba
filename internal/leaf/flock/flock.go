// Package flock takes flock(2) locks without waiting, where the system has
// them. A lock lasts as long as the open file it was taken on, so a
// process that dies, however it dies, lets go of its locks.
package flock

// Mode is the kind of lock: a shared lock excludes exclusive ones, an
// exclusive lock excludes both.
type Mode int

const (
	Shared Mode = iota
	Exclusive
)
