// Package project says which directories make up the project a directory
// belongs to, for the files agentc looks for above an agent (agentc.yaml,
// agentc.sum): the directory itself and each above it up to the project's
// root, never past a directory the user running does not own. A file
// placed above the project, in a shared or system directory, is no part
// of it.
package project

import (
	"os"
	"path/filepath"
)

// Markers mark a project's root: the first directory, going up, that
// holds one of them.
var Markers = []string{"cue.mod", "go.mod", ".git"}

// IsRoot reports whether dir is a project's root.
func IsRoot(dir string) bool {
	for _, m := range Markers {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}

// Dirs are the directories of the project dir (absolute) belongs to, in
// which a file agentc looks for may apply to dir, nearest first: dir, and
// each above it up to the project root. The search never enters a
// directory the user running does not own. With no project root above
// dir (none, or none before such a directory), only dir itself: a file in
// /tmp or a home directory applies to nothing below it.
func Dirs(dir string) []string {
	dirs := []string{dir}
	for d := dir; !IsRoot(d); {
		parent := filepath.Dir(d)
		if parent == d || !ownedByUser(parent) {
			return dirs[:1]
		}
		d = parent
		dirs = append(dirs, d)
	}
	return dirs
}

// Root is the last of Dirs(dir): the project's root, or dir itself when
// there is none above it. A file agentc finds for dir (a configuration or
// lock file) must lie beneath it.
func Root(dir string) string {
	dirs := Dirs(dir)
	return dirs[len(dirs)-1]
}
