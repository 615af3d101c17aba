//go:build !unix

package fs

const openFlags = 0
