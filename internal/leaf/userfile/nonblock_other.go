//go:build !unix

package userfile

const nonblock = 0
