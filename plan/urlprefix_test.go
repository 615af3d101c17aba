package plan

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestParseURLPrefix(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want URLPrefix
	}{
		{"https://api.example.com/repos/", URLPrefix{Scheme: "https", Host: "api.example.com", Port: 443, Path: "/repos/"}},
		{"http://docs.example.org", URLPrefix{Scheme: "http", Host: "docs.example.org", Port: 80, Path: "/"}},
		{"https://API.Example.com:8443/v1", URLPrefix{Scheme: "https", Host: "api.example.com", Port: 8443, Path: "/v1"}},
		{"https://api.example.com:0443/", URLPrefix{Scheme: "https", Host: "api.example.com", Port: 443, Path: "/"}},
		{"http://127.0.0.1:8080/v1", URLPrefix{Scheme: "http", Host: "127.0.0.1", IP: netip.MustParseAddr("127.0.0.1"), Port: 8080, Path: "/v1"}},
		{"https://[0::1]:8443/", URLPrefix{Scheme: "https", Host: "::1", IP: netip.MustParseAddr("::1"), Port: 8443, Path: "/"}},
		{"https://xn--bcher-kva.example/", URLPrefix{Scheme: "https", Host: "xn--bcher-kva.example", Port: 443, Path: "/"}},
		{"https://api.example.com/re%70os/a%2fb/%7e", URLPrefix{Scheme: "https", Host: "api.example.com", Port: 443, Path: "/repos/a%2Fb/~"}},
		{"https://az-AZ_09.example:1/", URLPrefix{Scheme: "https", Host: "az-az_09.example", Port: 1, Path: "/"}},
		{"https://api.example.com/%41%4a%4A%4f%4F%7a%7A%30%39%3a%3A%2F%2f%60", URLPrefix{Scheme: "https", Host: "api.example.com", Port: 443, Path: "/AJJOOzz09%3A%3A%2F%2F%60"}},
		{"http://api.example.com:65535/a%20b", URLPrefix{Scheme: "http", Host: "api.example.com", Port: 65535, Path: "/a%20b"}},
	} {
		got, err := ParseURLPrefix(tt.raw)
		tt.want.Raw = tt.raw
		if err != nil || got != tt.want {
			t.Errorf("ParseURLPrefix(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

func TestParseURLPrefixRefuses(t *testing.T) {
	for _, tt := range []struct{ raw, why string }{
		{"", "not an absolute URL"},
		{"api.example.com", "not an absolute URL"},
		{"ftp://api.example.com/", `scheme "ftp"`},
		{"https:api.example.com/", "not of the form"},
		{"https://user@api.example.com/", "user information"},
		{"https://user:pw@api.example.com/", "user information"},
		{"https://api.example.com/?q=1", "no query or fragment"},
		{"https://api.example.com/?", "no query or fragment"},
		{"https://api.example.com/#top", "no query or fragment"},
		{"https://api.example.com/#", "no query or fragment"},
		{"https://api.example.com/a/../b", `".."`},
		{"https://api.example.com/a/./b", `"."`},
		{"https://api.example.com/a/%2e%2e/b", `".."`},
		{"https://api.example.com/a/%252e%252e/b", `".."`},
		{"https://api.example.com/a/..;/b", `".."`},
		{"https://api.example.com/a%5C..%5Cb", `".."`},
		// What a server may read as dots: an overlong "." (not UTF-8), a
		// full-width "．", the one-dot and two-dot leaders (NFKC).
		{"https://api.example.com/a/%C0%AE%C0%AE/b", "not UTF-8 once decoded"},
		{"https://api.example.com/a/%EF%BC%8E%EF%BC%8E/b", "a server may read as dots"},
		{"https://api.example.com/a/%E2%80%A4/b", "a server may read as dots"},
		{"https://api.example.com/a/%E2%80%A5/b", "a server may read as dots"},
		{"https://api.example.com/a/%25C0%25AE/b", "not UTF-8 once decoded"},
		{"https://api.example.com/a%00", "control character"},
		{"https://api.example.com/a%" + strings.Repeat("25", 9) + "41", "more than 8 times"},
		{"https://bücher.example/", "must be percent-encoded"},
		{"https://api.example.com/a b", "must be percent-encoded"},
		{"https://api.example.com/\x80", "the character '\uFFFD' at offset 24 must be percent-encoded"},
		{`https://api.example.com\@evil.com/`, "must be percent-encoded"},
		{"https://api.example.com/%zz", `"%" at offset`},
		{"https://api.example.com/%4", `the "%" at offset 24 does not start a percent-encoded byte`},
		{"https://api.example.com/%", `the "%" at offset 24 does not start a percent-encoded byte`},
		{"https:///x", "no host"},
		{"https://:443/x", "no host"},
		{"https://api.example.com:0/", "port"},
		{"https://api.example.com:65536/", "port"},
		{"https://api.example.com:443:443/", "host"},
		{"https://b%C3%BCcher.example/", "not a plain ASCII name"},
		{"https://[fe80::1%25lo]/", "zone"},
		{"https://[127.0.0.1]/", "invalid IP-literal"},
	} {
		if p, err := ParseURLPrefix(tt.raw); err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParseURLPrefix(%q) = %+v, %v; want an error saying %q", tt.raw, p, err, tt.why)
		}
	}
}

func TestURLPrefixMatch(t *testing.T) {
	for _, tt := range []struct {
		prefix, url string
		sameHost    bool
		covers      bool
	}{
		{"https://api.example.com/repos/", "https://API.example.com/repos/x", true, true},
		{"https://api.example.com/repos/", "https://api.example.com/repos", true, false},
		{"https://api.example.com/repos", "https://api.example.com/repos", true, true},
		{"https://api.example.com/repos", "https://api.example.com/repos/x", true, true},
		{"https://api.example.com/repos", "https://api.example.com/repository", true, false},
		{"https://api.example.com/repos", "https://api.example.com/repos%2Fx", true, false},
		{"https://api.example.com/", "https://x.api.example.com/", false, true},
		{"https://api.example.com/", "https://api.example.com./", false, true},
		{"http://127.0.0.1/", "http://127.0.0.1/x", true, true},
		{"http://[::1]/", "http://[0:0::1]/x", true, true},
		{"http://[::ffff:127.0.0.1]/", "http://127.0.0.1/", false, true},
		{"http://localhost/", "http://127.0.0.1/", false, true},
	} {
		p, err := ParseURLPrefix(tt.prefix)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		r, err := URLPrefixOf(u)
		if err != nil {
			t.Fatalf("URLPrefixOf(%q): %v", tt.url, err)
		}
		if got := p.SameHost(r); got != tt.sameHost {
			t.Errorf("%s: SameHost(%s) = %v, want %v", tt.prefix, tt.url, got, tt.sameHost)
		}
		if got := p.CoversPath(r.Path); got != tt.covers {
			t.Errorf("%s: CoversPath(%q) = %v, want %v", tt.prefix, r.Path, got, tt.covers)
		}
	}
}

// FuzzParseURLPrefix: parsing an entry never panics, and an entry it
// accepts is a URL under itself, with parts that read back the same once
// written out again.
func FuzzParseURLPrefix(f *testing.F) {
	for _, seed := range []string{
		"https://api.example.com/repos/", "http://127.0.0.1:8080/v1", "https://[::1]:8443/", "http://docs.example.org",
		"HTTPS://API.example.com:0443/re%70os/a%2fb", "https://user@api.example.com/", "https://api.example.com/a/%2e%2e/b",
		"https://api.example.com/?q", "https://[::1%25lo]/", "https://bücher.example/", "https://api.example.com/a/%C0%AE%C0%AE/b", "https://api.example.com/a/%EF%BC%8E%EF%BC%8E/b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := ParseURLPrefix(raw)
		if err != nil {
			return
		}
		if p.Raw != raw || p.Scheme != "http" && p.Scheme != "https" || p.Port < 1 || p.Port > 65535 ||
			!strings.HasPrefix(p.Path, "/") || p.Host != strings.ToLower(p.Host) || p.IP.IsValid() != (p.IP.String() == p.Host) {
			t.Fatalf("%q parsed to %+v", raw, p)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		r, err := URLPrefixOf(u)
		if err != nil || !p.SameHost(r) || r.Scheme != p.Scheme || r.Port != p.Port || !p.CoversPath(r.Path) {
			t.Fatalf("%q is not under itself: %+v, %v", raw, r, err)
		}
		host := p.Host
		if p.IP.Is6() {
			host = "[" + host + "]"
		}
		again := fmt.Sprintf("%s://%s:%d%s", p.Scheme, host, p.Port, p.Path)
		q, err := ParseURLPrefix(again)
		if q.Raw = raw; err != nil || q != p {
			t.Fatalf("%q parsed to %+v, written out as %q to %+v, %v", raw, p, again, q, err)
		}
	})
}
