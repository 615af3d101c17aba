// Package textcut cuts text to a size in bytes without splitting a
// character, for the places that show only the start of a long text (a
// tool's result in a report, an example in a finding).
package textcut

import (
	"fmt"
	"unicode/utf8"
)

// Prefix returns the longest start of s that is at most max bytes and
// ends on a rune boundary: s itself when it fits.
func Prefix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Marked returns s when it is at most max bytes, and else its Prefix of
// max bytes followed by "… (N bytes in all)", so that a reader sees both
// that it was cut and how long it was.
func Marked(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes in all)", Prefix(s, max), len(s))
}
