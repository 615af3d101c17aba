package plan

import (
	"fmt"
	"net/textproto"
	"slices"
	"strings"
)

// reservedHeaders are set by the HTTP client from the request itself.
var reservedHeaders = []string{"Connection", "Content-Length", "Host", "Transfer-Encoding", "Te", "Trailer", "Upgrade"}

// CheckHeaderName says why an http tool may not declare a header of this
// name: it is not an HTTP token (RFC 9110), or the client sets it from the
// request. Names are case-insensitive; textproto.CanonicalMIMEHeaderKey
// gives the form two declarations are compared in.
func CheckHeaderName(name string) error {
	if !isToken(name) {
		return fmt.Errorf("%q is not a valid HTTP header name", name)
	}
	if slices.Contains(reservedHeaders, textproto.CanonicalMIMEHeaderKey(name)) {
		return fmt.Errorf("%q is set by the HTTP client from the request and may not be declared", name)
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
