package http

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// fuzzAllow is the allow list FuzzAllowed checks URLs against.
var fuzzAllow = []string{
	"https://api.example.com/repos/",
	"http://127.0.0.1:8080/v1",
	"https://[::1]:8443/",
	"http://docs.example.org",
}

// FuzzAllowed checks any URL against a fixed allow list. No URL may panic
// the check, and a URL it allows must, by an independent reading, have
// exactly an allowed scheme, host and port, no user information and a
// path under the prefix with no dot segment at any depth of decoding; it
// must also still be allowed once written back out and parsed again.
func FuzzAllowed(f *testing.F) {
	for _, seed := range []string{
		"https://api.example.com/repos/x", "https://api.example.com/repos/../admin",
		"https://api.example.com/repos/%2e%2e/admin", "https://api.example.com@evil.com/repos/",
		"https://api.example.com.evil.com/repos/", "http://127.0.0.1:8080/v1/x", "http://127.0.0.1:8080/v10",
		"https://[::1]:8443/x", "https://[0::1]:8443/x", "http://docs.example.org", "HTTP://DOCS.example.org:80/a%2Fb",
		"https://api.example.com/repos/x%2F..%2F..%2Fadmin", "https://api.example.com/repos/..;/x",
	} {
		f.Add(seed)
	}
	a, err := parseAllow(fuzzAllow)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := a.target(raw)
		if err != nil {
			return
		}
		if !independentlyAllowed(t, u) {
			t.Fatalf("%q was allowed but is outside %v (%#v)", raw, fuzzAllow, u)
		}
		again, err := a.target(u.String())
		if err != nil {
			t.Fatalf("%q was allowed, but written back as %q it is refused: %v", raw, u.String(), err)
		}
		if again.String() != u.String() {
			t.Fatalf("%q does not read back as itself: %q, then %q", raw, u.String(), again.String())
		}
	})
}

// independentlyAllowed re-reads an allowed URL without the code under
// test and says whether it is under one of fuzzAllow.
func independentlyAllowed(t *testing.T, u *url.URL) bool {
	if u.User != nil || u.Opaque != "" {
		return false
	}
	// No dot segment at any depth of decoding, with either separator. The
	// loop ends: a decoding that changes p shortens it.
	p := u.Path
	for {
		for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if seg, _, _ := strings.Cut(seg, ";"); seg == "." || seg == ".." {
				return false
			}
		}
		next, err := url.PathUnescape(p)
		if err != nil || next == p {
			break
		}
		p = next
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	path := cmpOr(u.Path, "/")
	for _, e := range fuzzAllow {
		pre, err := url.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		prePort, _ := strconv.Atoi(cmpOr(pre.Port(), map[string]string{"http": "80", "https": "443"}[pre.Scheme]))
		prePath := cmpOr(pre.Path, "/")
		host := u.Hostname()
		sameHost := strings.ToLower(host) == pre.Hostname()
		if ip, err := netip.ParseAddr(host); err == nil {
			preIP, err := netip.ParseAddr(pre.Hostname())
			sameHost = err == nil && ip == preIP && strings.HasPrefix(u.Host, "[") == strings.HasPrefix(pre.Host, "[")
		}
		// The decoded path is under the prefix, and so are the segments
		// of the path as sent: an encoded "/" is not a separator.
		underBoth := underPath(path, prePath) && underSegments(cmpOr(u.EscapedPath(), "/"), prePath)
		if u.Scheme == pre.Scheme && sameHost && n == prePort && underBoth {
			return true
		}
	}
	return false
}

func underPath(p, pre string) bool {
	if strings.HasSuffix(pre, "/") {
		return strings.HasPrefix(p, pre)
	}
	return p == pre || strings.HasPrefix(p, pre+"/")
}

// underSegments reports whether the escaped path esc, split into
// segments that are then decoded, starts with the segments of pre.
func underSegments(esc, pre string) bool {
	segs := strings.Split(esc, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return false
		}
		segs[i] = d
	}
	want := strings.Split(pre, "/")
	if strings.HasSuffix(pre, "/") {
		want = want[:len(want)-1] // any further segment, even empty
		if len(segs) <= len(want) {
			return false
		}
	}
	if len(segs) < len(want) {
		return false
	}
	for i := range want {
		if segs[i] != want[i] {
			return false
		}
	}
	return true
}
