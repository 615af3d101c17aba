package textcut_test

import (
	"testing"

	"agentc.dev/agentc/internal/leaf/textcut"
)

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"}, // é is two bytes: not split
		{"aé", 3, "aé"},
		{"€x", 1, ""}, // € is three bytes
		{"€x", 3, "€"},
	} {
		if got := textcut.Prefix(c.s, c.max); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}

func TestMarked(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"aaaé-tail", 4, "aaa… (10 bytes in all)"}, // é is two bytes: not split
	} {
		if got := textcut.Marked(c.s, c.max); got != c.want {
			t.Errorf("Marked(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}
