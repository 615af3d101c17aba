package proc

import (
	"regexp"
	"testing"
)

// TestEnvName holds EnvName to the schema's pattern over every name of up
// to three bytes drawn from the bytes at the edges of its classes.
func TestEnvName(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	edges := []byte{0, '/', '0', '9', ':', '@', 'A', 'Z', '[', '^', '_', '`', 'a', 'z', '{', 0x7f, 0x80, 0xff}
	var names []string
	var grow func(s string)
	grow = func(s string) {
		names = append(names, s)
		if len(s) == 3 {
			return
		}
		for _, b := range edges {
			grow(s + string([]byte{b}))
		}
	}
	grow("")
	for _, s := range append(names, "PATH", "HOME", "_x1", "1x", "A-B", "A B", "É") {
		if got, want := EnvName(s), pattern.MatchString(s); got != want {
			t.Errorf("EnvName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
