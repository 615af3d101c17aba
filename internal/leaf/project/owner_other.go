//go:build !unix

package project

// ownedByUser reports whether dir belongs to the user running agentc;
// where the system has no owner IDs to compare, every directory counts
// as the user's and the project root alone bounds the search.
func ownedByUser(dir string) bool { return true }
