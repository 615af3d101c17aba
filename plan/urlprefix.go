package plan

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// URLPrefix is one entry of an http tool's allow list, parsed. A request
// URL is under it when the scheme, host and port are equal and the path
// starts with Path at a segment boundary. Vet and the http tool both parse
// entries with ParseURLPrefix, so they refuse the same ones.
type URLPrefix struct {
	Raw    string     // as declared, for messages
	Scheme string     // "http" or "https"
	Host   string     // lower case; an IP literal in its canonical form
	IP     netip.Addr // valid when Host is an IP literal
	Port   int        // explicit or the scheme's default
	Path   string     // canonical escaped path, at least "/"
}

// ParseURLPrefix parses an allow-list entry. It must be an absolute http
// or https URL with a host and nothing a prefix cannot sensibly match: no
// user information, query, fragment or dot segments.
func ParseURLPrefix(s string) (URLPrefix, error) {
	if err := CheckURLChars(s); err != nil {
		return URLPrefix{}, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return URLPrefix{}, errors.Unwrap(err) // url.Error repeats the URL
	}
	if err := checkForm(u); err != nil {
		return URLPrefix{}, err
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return URLPrefix{}, errors.New("a prefix has no query or fragment; it matches scheme, host, port and path")
	}
	p, err := splitURL(u)
	if err != nil {
		return URLPrefix{}, err
	}
	p.Raw = s
	return p, nil
}

// URLPrefixOf returns the narrowest prefix a request URL u is under: its
// scheme, host, port and canonical path, which an allow list compares
// with those of its entries (Raw is left empty). It refuses what no
// request may be: a URL that is not of the form scheme://host/path with
// an http or https scheme, one with user information, a malformed host
// or port, a dot segment or control character in the path, and a query
// with a character that must be percent-encoded.
func URLPrefixOf(u *url.URL) (URLPrefix, error) {
	if err := checkForm(u); err != nil {
		return URLPrefix{}, err
	}
	// The query is sent as it is written: it must be well formed.
	if err := CheckURLChars(u.RawQuery); err != nil {
		return URLPrefix{}, fmt.Errorf("in the query: %v", err)
	}
	return splitURL(u)
}

// SameHost reports whether q names p's host. An IP literal matches only
// the same address, and a name only the same name: no resolution, no
// suffix or subdomain matching.
func (p URLPrefix) SameHost(q URLPrefix) bool {
	if p.IP.IsValid() || q.IP.IsValid() {
		return p.IP == q.IP
	}
	return p.Host == q.Host
}

// CoversPath reports whether the canonical path path is under p's path at
// a segment boundary: "/repos" covers "/repos" and "/repos/x" but not
// "/repository", and "/repos/" covers "/repos/x" but not "/repos".
func (p URLPrefix) CoversPath(path string) bool {
	if strings.HasSuffix(p.Path, "/") {
		return strings.HasPrefix(path, p.Path)
	}
	return path == p.Path || strings.HasPrefix(path, p.Path+"/")
}

// splitURL returns the host, port and path of u, which checkForm
// accepted.
func splitURL(u *url.URL) (URLPrefix, error) {
	p := URLPrefix{Scheme: u.Scheme}
	var err error
	if p.Host, p.IP, err = parseHost(u); err != nil {
		return URLPrefix{}, err
	}
	if p.Port, err = parsePort(u); err != nil {
		return URLPrefix{}, err
	}
	if p.Path, err = canonicalPath(u); err != nil {
		return URLPrefix{}, err
	}
	return p, nil
}

// checkForm checks what every URL, prefix or request, must be:
// scheme://host/path with an http or https scheme and no user
// information.
func checkForm(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return errors.New("not an absolute URL; it must start with http:// or https://")
		}
		return fmt.Errorf("the scheme %q is not allowed; only http and https are", u.Scheme)
	case u.Opaque != "":
		return fmt.Errorf("not of the form %s://host/path", u.Scheme)
	case u.User != nil:
		return errors.New(`user information before the host ("user@" or "user:password@") is not allowed`)
	case u.Host == "":
		return errors.New("the URL has no host")
	}
	return nil
}

// parseHost returns u's host in lower case and, for an IP literal, its
// address. A name must be plain ASCII (an internationalised name is
// written in its punycode form, "xn--..."), so no two spellings of one
// name can differ by case folding or Unicode lookalikes.
func parseHost(u *url.URL) (string, netip.Addr, error) {
	h := u.Hostname()
	if h == "" {
		return "", netip.Addr{}, errors.New("the URL has no host")
	}
	if strings.HasPrefix(u.Host, "[") {
		ip, err := netip.ParseAddr(h)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", netip.Addr{}, fmt.Errorf("the host %q is not an IPv6 address without a zone", h)
		}
		return ip.String(), ip, nil
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if !ip.Is4() {
			return "", netip.Addr{}, fmt.Errorf("the host %q is an IPv6 address outside brackets", h)
		}
		return ip.String(), ip, nil
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", netip.Addr{}, fmt.Errorf("the host %q is not a plain ASCII name (letters, digits, '-', '.', '_'; internationalised names in punycode) or an IP address", h)
		}
	}
	return strings.ToLower(h), netip.Addr{}, nil
}

// parsePort returns u's port, or the scheme's default port.
func parsePort(u *url.URL) (int, error) {
	s := u.Port()
	if s == "" {
		if u.Scheme == "https" {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("the port %q is not a port number", s)
	}
	return n, nil
}

// maxDecodes bounds how many times a path is percent-decoded while
// looking for dot segments.
const maxDecodes = 8

// canonicalPath returns u's path as it is sent, with percent-encoding
// normalised (unreserved characters decoded, hex digits upper case), so
// that prefixes compare by what a server sees: "%2F" stays an encoded
// byte inside a segment and never matches a "/".
//
// It refuses "." and ".." segments, including percent-encoded ones (also
// encoded more than once), ones written with backslashes, and ones
// followed by a ";" parameter ("..;"), since some servers or proxies
// decode or normalise those before routing and could climb out of a
// prefix. It also refuses encoded control characters.
func canonicalPath(u *url.URL) (string, error) {
	if err := checkSegments(u.Path); err != nil {
		return "", err
	}
	esc := u.EscapedPath()
	if esc == "" {
		esc = "/"
	}
	if esc[0] != '/' {
		return "", fmt.Errorf("the path %q does not start with /", esc)
	}
	var b strings.Builder
	for i := 0; i < len(esc); i++ {
		c := esc[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(esc) || !isHex(esc[i+1]) || !isHex(esc[i+2]) {
			return "", fmt.Errorf("the path %q has a malformed percent-encoding", esc)
		}
		v := unhex(esc[i+1])<<4 | unhex(esc[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			fmt.Fprintf(&b, "%%%02X", v)
		}
		i += 2
	}
	return b.String(), nil
}

// checkSegments refuses dot segments in a decoded path, at every depth
// of further decoding: "." and "..", and what a server may read as them.
// A segment that is not UTF-8 once decoded (an overlong "." is %C0%AE),
// which a lenient decoder reads as dots; and one that Unicode's
// compatibility folding (NFKC) makes "." or ".." (full-width "．", the
// one-dot leader "․", the two-dot leader "‥"), which a server that folds
// names reads as them.
func checkSegments(p string) error {
	for range maxDecodes {
		if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return errors.New("the path has a control character (percent-encoded)")
		}
		for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			seg, _, _ = strings.Cut(seg, ";")
			switch {
			case seg == "." || seg == "..":
				return fmt.Errorf(`the path has a %q segment; "." and ".." are refused, also when percent-encoded`, seg)
			case !utf8.ValidString(seg):
				return fmt.Errorf("the path has a segment that is not UTF-8 once decoded (%q), which a server may read as another (an overlong \".\")", seg)
			case isDots(norm.NFKC.String(seg)):
				return fmt.Errorf(`the path has a segment a server may read as dots (%q); "." and ".." are refused, also when percent-encoded or written with other characters`, seg)
			}
		}
		next, err := url.PathUnescape(p)
		if err != nil || next == p {
			return nil
		}
		p = next
	}
	return fmt.Errorf("the path is percent-encoded more than %d times over", maxDecodes)
}

// isDots reports whether s is a dot segment.
func isDots(s string) bool { return s == "." || s == ".." }

// CheckURLChars refuses characters that may not appear in a URL as
// written (RFC 3986): spaces, quotes, backslashes, control characters,
// non-ASCII and a "%" that does not start a percent-encoded byte. net/url
// would let some of them through into the request line; a template should
// encode the values it inserts, for instance with urlquery.
func CheckURLChars(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Errorf(`the "%%" at offset %d does not start a percent-encoded byte (%%XX)`, i)
			}
		case c >= utf8.RuneSelf:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fmt.Errorf("the character %q at offset %d must be percent-encoded (a template can use urlquery)", r, i)
		case !isURLChar(c):
			return fmt.Errorf("the character %q at offset %d must be percent-encoded (a template can use urlquery)", rune(c), i)
		}
	}
	return nil
}

// isURLChar reports whether c may appear unencoded in a URL: unreserved,
// gen-delims or sub-delims of RFC 3986.
func isURLChar(c byte) bool {
	return isUnreserved(c) || strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
