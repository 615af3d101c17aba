package jsonpointer

import (
	"strings"
	"testing"
)

var tokens = []struct {
	name, tok string
}{
	{"", ""},
	{"a", "a"},
	{"a/b", "a~1b"},
	{"m~n", "m~0n"},
	{"~1", "~01"},
	{"~0", "~00"},
	{"/~", "~1~0"},
	{"~/", "~0~1"},
	{"//", "~1~1"},
	{"é/ü", "é~1ü"},
}

func TestEscape(t *testing.T) {
	for _, tt := range tokens {
		if got := Escape(tt.name); got != tt.tok {
			t.Errorf("Escape(%q) = %q, want %q", tt.name, got, tt.tok)
		}
		if got := Unescape(tt.tok); got != tt.name {
			t.Errorf("Unescape(%q) = %q, want %q", tt.tok, got, tt.name)
		}
	}
}

// TestUnescapeLenient: a "~" that escapes nothing is kept, not an error.
func TestUnescapeLenient(t *testing.T) {
	for tok, want := range map[string]string{"~": "~", "~2": "~2", "a~": "a~", "~~1": "~/", "~~01": "~~1"} {
		if got := Unescape(tok); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", tok, got, want)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{""}, "/"},
		{[]string{"", ""}, "//"},
		{[]string{"properties", "a/b", "items", "0"}, "/properties/a~1b/items/0"},
		{[]string{"~"}, "/~0"},
	} {
		if got := Join(tt.names); got != tt.want {
			t.Errorf("Join(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}

// FuzzEscape: every name survives the round trip, its token holds no "/"
// and no "~" but "~0" and "~1", and every such token is the escape of the
// name it stands for.
func FuzzEscape(f *testing.F) {
	for _, tt := range tokens {
		f.Add(tt.name)
		f.Add(tt.tok)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := Escape(s)
		if got := Unescape(tok); got != s {
			t.Fatalf("Unescape(Escape(%q)) = %q", s, got)
		}
		if !wellFormed(tok) {
			t.Fatalf("Escape(%q) = %q, not a reference token", s, tok)
		}
		if wellFormed(s) {
			if got := Escape(Unescape(s)); got != s {
				t.Fatalf("Escape(Unescape(%q)) = %q", s, got)
			}
		}
	})
}

// wellFormed tells whether tok is a reference token as RFC 6901 writes
// one: no "/", and every "~" followed by "0" or "1".
func wellFormed(tok string) bool {
	if strings.Contains(tok, "/") {
		return false
	}
	for i := range len(tok) {
		if tok[i] == '~' && (i+1 == len(tok) || tok[i+1] != '0' && tok[i+1] != '1') {
			return false
		}
	}
	return true
}
