// Package diskfree says how much room the file system holding a directory
// has left for the process's own user.
package diskfree

// Free returns how many bytes the file system holding dir has free for
// an unprivileged user to write (what df calls available, short of any
// blocks the system keeps for its administrator), where the system can
// say; ok is false where agentc does not ask it (systems other than Linux,
// macOS, FreeBSD, DragonFly and Windows).
func Free(dir string) (free uint64, ok bool, err error) { return free1(dir) }
