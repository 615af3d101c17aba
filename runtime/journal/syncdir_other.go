//go:build !unix

package journal

// dirSyncRefused: a directory cannot be synced here (Windows answers
// access denied); a renamed file's entry is as durable as the system
// makes it.
func dirSyncRefused(error) bool { return true }
