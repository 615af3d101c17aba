//go:build !unix

package filestore

const noFollow = 0
