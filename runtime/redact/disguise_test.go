package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// disguises are the ways a secret is written that the set must see
// through (see the package documentation); each takes the secret and
// the text around it, and returns the text and what of it must not
// survive redaction.
var disguises = []struct {
	name string
	hide func(secret, before, after string) (text string, leaks []string)
}{
	{"as written", plain(func(s string) string { return s })},
	{"upper case", plain(strings.ToUpper)},
	{"lower case", plain(strings.ToLower)},
	{"hex", plain(func(s string) string { return hex.EncodeToString([]byte(s)) })},
	{"HEX", plain(func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) })},
	{"hex of upper case", plain(func(s string) string { return hex.EncodeToString([]byte(strings.ToUpper(s))) })},
	{"URL path", plain(url.PathEscape)},
	{"URL query", plain(url.QueryEscape)},
	{"every byte percent-encoded", plain(func(s string) string { return percentAll(s, false) })},
	{"all but letters and digits percent-encoded", plain(func(s string) string { return percentAll(s, true) })},
	{"percent-encoded, lower-case hex", plain(func(s string) string { return strings.ToLower(percentAll(s, false)) })},
	{"base64", plain(b64(base64.StdEncoding))},
	{"base64 unpadded", plain(b64(base64.RawStdEncoding))},
	{"base64url", plain(b64(base64.URLEncoding))},
	{"base64url unpadded", plain(b64(base64.RawURLEncoding))},
	{"base64 of upper case", plain(func(s string) string { return base64.StdEncoding.EncodeToString([]byte(strings.ToUpper(s))) })},
	{"base64 blob", blob(base64.StdEncoding)},
	{"base64url blob", blob(base64.RawURLEncoding)},
	{"split by newlines", plain(func(s string) string { return splitEvery(s, 3, "\n") })},
	{"split by CRLF", plain(func(s string) string { return splitEvery(s, 5, "\r\n") })},
	{"split by JSON newlines", jsonSplit(4, `\n`)},
	{"split by zero-width spaces", plain(func(s string) string { return splitEvery(s, 1, "\u200b") })},
	{"split by zero-width joiners", plain(func(s string) string { return splitEvery(s, 2, "\u200d\u2060") })},
	{"split by a BOM, JSON-escaped", jsonSplit(2, `\ufeff`)},
	{"base64 wrapped", plain(func(s string) string { return splitEvery(base64.StdEncoding.EncodeToString([]byte(s)), 4, "\n") })},
	{"every character a JSON escape", escaped(false)},
	{"every character a JSON escape, upper-case hex", escaped(true)},
}

// escaped writes every character of the secret as a JSON \u escape.
func escaped(upper bool) func(secret, before, after string) (string, []string) {
	return func(secret, before, after string) (string, []string) {
		e := escapeAll(secret, upper)
		if strings.HasSuffix(before, `\`) {
			// A backslash before makes the first escape's backslash a
			// character: the secret is not there.
			return before + e + after, nil
		}
		// What matching leaves out at its edges is not the secret's.
		core := escapeAll(strings.TrimFunc(secret, func(r rune) bool { return r == '\r' || r == '\n' || unicode.Is(unicode.Cf, r) }), upper)
		return before + e + after, []string{core}
	}
}

// escapeAll writes every character of s as a JSON \u escape, as some
// writers do.
func escapeAll(s string, upper bool) string {
	f := `\u%04x`
	if upper {
		f = `\u%04X`
	}
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, f+f, r1, r2)
			continue
		}
		fmt.Fprintf(&b, f, r)
	}
	return b.String()
}

// plain hides the secret by enc alone: the encoded secret must go.
func plain(enc func(string) string) func(secret, before, after string) (string, []string) {
	return func(secret, before, after string) (string, []string) {
		e := enc(secret)
		return before + e + after, []string{e}
	}
}

// blob writes the secret inside a base64 text with what is around it:
// at each of the three alignments as before's length varies. The
// characters that hold only the secret's bits must go.
func blob(enc *base64.Encoding) func(secret, before, after string) (string, []string) {
	return func(secret, before, after string) (string, []string) {
		a := len(before) % 3
		core := base64Core(enc.WithPadding(base64.NoPadding), secret, (3-a)%3)
		return enc.EncodeToString([]byte(before + secret + after)), []string{core}
	}
}

// jsonSplit splits the secret, as a JSON string holds it, by a JSON
// escape every n characters (never inside an escape).
func jsonSplit(n int, sep string) func(secret, before, after string) (string, []string) {
	return func(secret, before, after string) (string, []string) {
		var b strings.Builder
		for i, r := range []rune(secret) {
			if i > 0 && i%n == 0 {
				b.WriteString(sep)
			}
			e, _ := json.Marshal(string(r))
			b.Write(e[1 : len(e)-1])
		}
		if strings.HasSuffix(before, `\`) {
			// A backslash before a split secret makes its first
			// character an escape: not covered (see the package
			// documentation).
			return before + b.String() + after, nil
		}
		return before + b.String() + after, []string{b.String()}
	}
}

// locate returns where in text the part of leak that is the secret's
// starts, and its length: leak as planted after before, else its first
// occurrence.
func locate(text, before, leak string) (int, int) {
	p := len(before)
	if !strings.HasPrefix(text[min(p, len(text)):], leak) {
		p = strings.Index(text, leak)
	}
	if p < 0 {
		return -1, 0
	}
	inner := edges(leak)
	return p + strings.Index(leak, inner), len(inner)
}

// edges trims from a leak what is not a secret's: base64's padding, and
// the line breaks and format characters that matching leaves out.
func edges(leak string) string {
	for {
		t := strings.TrimFunc(strings.TrimRight(leak, "="), func(r rune) bool {
			return r == '\r' || r == '\n' || unicode.Is(unicode.Cf, r)
		})
		for _, esc := range []string{`\r`, `\n`, `\ufeff`, `\u200b`} {
			t = strings.TrimSuffix(strings.TrimPrefix(t, esc), esc)
		}
		if t == leak {
			return t
		}
		leak = t
	}
}

func b64(enc *base64.Encoding) func(string) string {
	return func(s string) string { return enc.EncodeToString([]byte(s)) }
}

func splitEvery(s string, n int, sep string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%n == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestDisguised: a secret is gone from text around it in every disguise
// covered, at every alignment a base64 text gives it.
func TestDisguised(t *testing.T) {
	secrets := []string{"sk-live-0123456789abcdefghij", "tok/with+base64?chars&=", "clé-secrète-ключ"}
	s := Of(secrets...)
	for _, d := range disguises {
		for _, secret := range secrets {
			for _, before := range []string{"", "x", "xy", "some text: ", "some text:: ", "some text::: "} {
				text, leaks := d.hide(secret, before, " and after")
				got := s.String(text)
				for _, leak := range leaks {
					if strings.Contains(got, leak) {
						t.Errorf("%s, %q after %q: %q survives in %q", d.name, secret, before, leak, got)
					}
				}
				if !strings.Contains(got, Marker) {
					t.Errorf("%s, %q after %q: no marker in %q", d.name, secret, before, got)
				}
			}
		}
	}
}

// TestNormalizingKeepsText: what is left out to match is kept where no
// secret is.
func TestNormalizingKeepsText(t *testing.T) {
	s := Of("sk-live-0123456789")
	in := "a\u200bb\r\nc\\nd\\ufeff é \\\\n sk-live-\u200b0123456789\nend"
	want := "a\u200bb\r\nc\\nd\\ufeff é \\\\n [redacted]\nend"
	if got := s.String(in); got != want {
		t.Errorf("String(%q) = %q, want %q", in, got, want)
	}
}

// TestPrefix: a cut never shows part of a secret: one that starts before
// the cut is replaced whole, and text that could start one the text does
// not hold whole is left out.
func TestPrefix(t *testing.T) {
	secret := "tok-planted-exec-Hn4r6Ty2-0123456789abcdef" // 42 bytes
	s := Of(secret)
	tests := []struct {
		name  string
		text  string
		max   int
		want  string
		wantN int
	}{
		{"fits", "a " + secret + " b", 100, "a [redacted] b", 46},
		{"straddles the cut", "0123456789" + secret + " and more", 50, "0123456789[redacted]", 52},
		{"starts at the cut", "0123456789" + secret, 10, "0123456789", 10},
		{"held in part", "0123456789" + secret[:30], 35, "0123456789", 10},
		{"split, held in part", "0123456789" + splitEvery(secret[:30], 1, "\u200b"), 60, "0123456789", 10},
		{"hex, straddles the cut", "0123456789" + hex.EncodeToString([]byte(secret)), 50, "0123456789[redacted]", 94},
		{"base64, held in part", "0123456789 " + base64.StdEncoding.EncodeToString([]byte(secret))[:30], 35, "0123456789 ", 11},
		// Next to base64, the character it shares with a neighbour goes.
		{"base64 after base64 characters", "0123456789" + base64.StdEncoding.EncodeToString([]byte(secret))[:30], 35, "012345678", 9},
		{"before a secret", "0123456789 " + secret, 11, "0123456789 ", 11},
		{"a rune at the cut", "........é.", 9, "........", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := s.Prefix(tt.text, tt.max)
			if got != tt.want || n != tt.wantN {
				t.Errorf("Prefix(%q, %d) = %q, %d; want %q, %d", tt.text, tt.max, got, n, tt.want, tt.wantN)
			}
		})
	}
	// Without secrets, a cut is textcut's.
	var none *Set
	if got, n := none.Prefix("01234567é9", 9); got != "01234567" || n != 8 {
		t.Errorf("nil set: Prefix = %q, %d", got, n)
	}
}

// FuzzDisguised plants a secret in random text under each disguise: it
// must not survive String, nor show through a cut at any place.
func FuzzDisguised(f *testing.F) {
	f.Add("sk-live-0123456789abcdef", "before ", " after", 10)
	f.Add("tok/with+base64?chars&=", "x", "", 3)
	f.Add("clé-secrète-ключ", "\u200b\n", "\\n", 0)
	// Escaped, the secret takes six bytes a byte, more than the lookahead:
	// cuts in its escapes, and in its first and last.
	f.Add("sk-live-0123456789abcdef", "before ", " after", 90)
	f.Add("sk-live-0123456789abcdef", "before ", " after", 10)
	f.Add("clé-secrète-ключ-😀", "x", "y", 100)
	f.Fuzz(func(t *testing.T, secret, before, after string, cut int) {
		if len(secret) < MinLen || len(secret) > 200 || !utf8.ValidString(secret) {
			return
		}
		s := Of(secret)
		if s.Len() == 0 {
			return
		}
		for _, d := range disguises {
			text, leaks := d.hide(secret, before, after)
			got := s.String(text)
			for _, leak := range leaks {
				if strings.Contains(got, leak) {
					t.Fatalf("%s: %q survives in %q", d.name, leak, got)
				}
			}
			if cut < 0 || cut > len(text) {
				continue
			}
			shown, n := s.Prefix(text, cut)
			for _, leak := range leaks {
				if strings.Contains(shown, leak) {
					t.Fatalf("%s: %q survives a cut at %d: %q", d.name, leak, cut, shown)
				}
				// A cut inside the secret shows a part of it (base64's
				// padding is not the secret's).
				if p, l := locate(text, before, leak); p >= 0 && p < n && n < p+l {
					t.Fatalf("%s: a cut at %d stands for %d bytes, inside %q at %d: %q", d.name, cut, n, leak, p, shown)
				}
			}
			end, n := s.Suffix(text, len(text)-cut)
			for _, leak := range leaks {
				if strings.Contains(end, leak) {
					t.Fatalf("%s: %q survives keeping the last %d bytes: %q", d.name, leak, len(text)-cut, end)
				}
				if p, l := locate(text, before, leak); p >= 0 && p < len(text)-n && len(text)-n < p+l {
					t.Fatalf("%s: the last %d bytes kept start inside %q at %d: %q", d.name, n, leak, p, end)
				}
			}
			// A text that ends halfway through the secret (a stream so
			// far), holding none whole, shows none of it, cut where the
			// text holds what follows; one that starts there, none of the
			// rest. What follows is here 12 bytes, a surrogate pair's
			// escapes: less than the lookahead Prefix asks for, enough to
			// see an escape the cut falls inside.
			if strings.Contains(d.name, "base64") {
				// The character base64 writes with the secret's last bits
				// and what follows is not held back (a few bits).
				continue
			}
			for _, leak := range leaks {
				p, l := locate(text, before, leak)
				if p < 0 || l < 2 {
					continue
				}
				m := p + l/2
				if c := min(cut, m-12); c >= 0 && s.String(text[:m]) == text[:m] {
					if shown, n := s.Prefix(text[:m], c); n > p {
						t.Fatalf("%s: %q, ending inside %q at %d, cut at %d shows %q", d.name, text[:m], leak, p, c, shown)
					}
				}
				rest := text[m:]
				if keep := min(len(text)-cut, len(rest)-12); keep >= 0 && s.String(rest) == rest {
					if end, n := s.Suffix(rest, keep); n > 0 && len(rest)-n < p+l-m {
						t.Fatalf("%s: %q, starting inside %q, keeping its last %d bytes shows %q", d.name, rest, leak, keep, end)
					}
				}
			}
		}
	})
}

// TestSuffix: the same for a cut that keeps a text's end.
func TestSuffix(t *testing.T) {
	secret := "tok-planted-exec-Hn4r6Ty2-0123456789abcdef" // 42 bytes
	s := Of(secret)
	tests := []struct {
		name  string
		text  string
		keep  int
		want  string
		wantN int
	}{
		{"fits", "a " + secret + " b", 100, "a [redacted] b", 46},
		{"straddles the cut", "more " + secret + "0123456789", 30, "[redacted]0123456789", 52},
		{"held in part", secret[12:] + " 0123456789", 35, " 0123456789", 11},
		{"split, held in part", splitEvery(secret[12:], 1, "\u200b") + " 0123456789", 60, " 0123456789", 11},
		{"after a secret", secret + " 0123456789", 11, " 0123456789", 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := s.Suffix(tt.text, tt.keep)
			if got != tt.want || n != tt.wantN {
				t.Errorf("Suffix(%q, %d) = %q, %d; want %q, %d", tt.text, tt.keep, got, n, tt.want, tt.wantN)
			}
		})
	}
}

// TestBackslashBefore: a backslash before a secret that starts with n, r
// or u, which reads as a JSON escape, does not hide it; it goes with the
// secret, since a span never cuts an escape (in JSON, \[ would be none).
func TestBackslashBefore(t *testing.T) {
	for _, secret := range []string{"rk_live_0123456789", "n0123456789", "u200b0123456789"} {
		s := Of(secret)
		in := `x\` + secret + " y"
		if got, want := s.String(in), `x[redacted] y`; got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if got, n := s.Prefix(in, 5); strings.Contains(got, secret[:3]) {
			t.Errorf("Prefix(%q, 5) = %q, %d: shows the secret's start", in, got, n)
		}
	}
}

// TestEscapedAsOthersWrite: a secret inside a JSON string written by a
// writer that escapes other characters than Go's encoder does is found,
// and replaced with its escapes, leaving JSON that is still JSON.
func TestEscapedAsOthersWrite(t *testing.T) {
	for _, secret := range []string{"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "sk-SECRET-XYZ-0123", "clé-secrète-ключ-😀"} {
		s := Of(secret)
		for _, w := range []struct{ name, text string }{
			{"PHP (slashes)", strings.ReplaceAll(secret, "/", `\/`)},
			{".NET (plus)", strings.ReplaceAll(secret, "+", `\u002B`)},
			{"a dash", strings.ReplaceAll(secret, "-", `\u002d`)},
			{"Python (non-ASCII)", func() string {
				var b strings.Builder
				for _, r := range secret {
					if r < 0x80 {
						b.WriteRune(r)
					} else {
						b.WriteString(escapeAll(string(r), false))
					}
				}
				return b.String()
			}()},
			{"every character", escapeAll(secret, false)},
			{"every character, upper-case hex", escapeAll(secret, true)},
			{"the first character", escapeAll(secret[:1], false) + secret[1:]},
			{"every character, split by a JSON newline", escapeAll(secret[:4], false) + `\n` + escapeAll(secret[4:], false)},
		} {
			doc := `{"before":"a\"b","key":"` + w.text + `","after":"\\u0073"}`
			got := s.String(doc)
			if strings.Contains(got, w.text) || !strings.Contains(got, `"key":"[redacted]"`) {
				t.Errorf("%s, %q: String = %q", w.name, secret, got)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("%s, %q: String = %q: not JSON", w.name, secret, got)
			}
			if j := s.JSON(json.RawMessage(doc)); !json.Valid(j) || strings.Contains(string(j), w.text) {
				t.Errorf("%s, %q: JSON = %s", w.name, secret, j)
			}
		}
	}
	// An escaped backslash escapes nothing: \\u0073 is a backslash and
	// "u0073", not an "s".
	s := Of("sk-SECRET-XYZ-0123")
	if in := `\\u0073k-SECRET-XYZ-0123`; s.String(in) != in {
		t.Errorf("String(%q) = %q", in, s.String(in))
	}
}

// FuzzEscapedJSON writes a JSON document of two strings, the secret
// inside one of them, each character escaped as ctl's bytes choose (as
// written, \/, \uXXXX in either case, \" and \\): String leaves JSON that
// is JSON, and neither the secret nor its escapes whole survive; text
// that is not the secret (a value ending in a backslash before the
// string's closing quote) is not taken for it.
func FuzzEscapedJSON(f *testing.F) {
	f.Add("sk-live-0123456789", "before", "after", []byte{0, 1, 2, 3, 4})
	f.Add(`Passw0rd-2024"`, `Passw0rd-2024\`, "x", []byte{3})
	f.Add("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", `a\b`, []byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, secret, other, after string, ctl []byte) {
		if len(secret) < MinLen || len(secret) > 100 || !utf8.ValidString(secret) || !utf8.ValidString(other) || !utf8.ValidString(after) ||
			strings.ContainsAny(secret, "\r\n") || strings.ContainsFunc(secret, func(r rune) bool { return unicode.Is(unicode.Cf, r) || r < 0x20 }) {
			return
		}
		k := 0
		enc := func(s string) string {
			var b strings.Builder
			for _, r := range s {
				m := byte(0)
				if len(ctl) > 0 {
					m = ctl[k%len(ctl)] % 5
					k++
				}
				switch {
				case m == 1 || m == 2 || r < 0x20:
					f := `\u%04x`
					if m == 2 {
						f = `\u%04X`
					}
					if r > 0xffff {
						a, c := utf16.EncodeRune(r)
						fmt.Fprintf(&b, f+f, a, c)
					} else {
						fmt.Fprintf(&b, f, r)
					}
				case r == '"' || r == '\\':
					b.WriteByte('\\')
					b.WriteRune(r)
				case m == 3 && r == '/':
					b.WriteString(`\/`)
				default:
					b.WriteRune(r)
				}
			}
			return b.String()
		}
		s := Of(secret)
		if s.Len() == 0 {
			return
		}
		doc := `{"a":"` + enc(other) + `","k":"` + enc(secret) + `","z":"` + enc(after) + `"}`
		if !json.Valid([]byte(doc)) {
			t.Fatalf("not JSON: %s", doc)
		}
		got := s.String(doc)
		if !json.Valid([]byte(got)) {
			t.Fatalf("String(%s) = %s: not JSON", doc, got)
		}
		var v map[string]string
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatal(err)
		}
		for k, e := range v {
			if strings.Contains(strings.ToLower(e), strings.ToLower(secret)) {
				t.Fatalf("String(%s) = %s: %s still holds the secret", doc, got, k)
			}
		}
	})
}
