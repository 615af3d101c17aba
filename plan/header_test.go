package plan

import (
	"strings"
	"testing"
)

// TestCheckHeaderName: a declared header name is an HTTP token, and not
// one the client sets from the request, in any case.
func TestCheckHeaderName(t *testing.T) {
	tests := []struct {
		name string
		want string // "" when it may be declared
	}{
		{"X-Api-Key", ""},
		{"accept", ""},
		{"azAZ09!#$%&'*+-.^_`|~", ""},
		{"", `"" is not a valid HTTP header name`},
		{"X Key", `"X Key" is not a valid HTTP header name`},
		{"X-Key:", `"X-Key:" is not a valid HTTP header name`},
		{"X-Kéy", `"X-Kéy" is not a valid HTTP header name`},
		{"X-Key\x7f", `"X-Key\x7f" is not a valid HTTP header name`},
		{"@", `"@" is not a valid HTTP header name`},
		{"[", `"[" is not a valid HTTP header name`},
		{"{", `"{" is not a valid HTTP header name`},
		{"/", `"/" is not a valid HTTP header name`},
		{"host", `"host" is set by the HTTP client from the request and may not be declared`},
		{"CONTENT-LENGTH", `"CONTENT-LENGTH" is set by the HTTP client from the request and may not be declared`},
		{"Te", `"Te" is set by the HTTP client from the request and may not be declared`},
	}
	for _, tt := range tests {
		err := CheckHeaderName(tt.name)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q refused: %v", tt.name, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("%q: got %v, want %s", tt.name, err, tt.want)
		}
	}
	// Every byte outside the token characters is refused, each on its own.
	for c := range 256 {
		s := string([]byte{byte(c)})
		want := c > ' ' && c < 0x7f && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c))
		if got := CheckHeaderName(s) == nil; got != want {
			t.Errorf("byte %#x: accepted %v, want %v", c, got, want)
		}
	}
}
