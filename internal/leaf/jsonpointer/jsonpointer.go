// Package jsonpointer escapes and unescapes the reference tokens of JSON
// Pointers (RFC 6901): the one way agentc's packages write a member name
// into a pointer and read it back.
package jsonpointer

import "strings"

// Escape returns the reference token for a member name: "~" written as
// "~0", then "/" as "~1".
func Escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// Unescape returns the member name a reference token stands for: "~1" read
// as "/", then "~0" as "~", in that order, so that "~01" is "~1". A "~"
// followed by anything else is kept as it is.
func Unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// Join returns the pointer to a value by the member names (or array
// indexes) on the way to it: each escaped and preceded by "/"; "" for the
// whole document.
func Join(names []string) string {
	var b strings.Builder
	for _, name := range names {
		b.WriteByte('/')
		b.WriteString(Escape(name))
	}
	return b.String()
}
