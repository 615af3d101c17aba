package termtext

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"path":"notes.txt"}`, `{"path":"notes.txt"}`},
		{"caf\u00e9 \u65e5\u672c \U0001F600", "caf\u00e9 \u65e5\u672c \U0001F600"},
		{"a\rb", `a\u000db`},
		{"a\nb\tc", `a\u000ab\u0009c`},
		{"\x1b[2J\x1b]0;title\x07", `\u001b[2J\u001b]0;title\u0007`},
		{"del\x7f", `del\u007f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"txt.\u202eexe", `txt.\u202eexe`},
		{"\u2066iso\u2069 \u200bzw\u200d\ufeff", `\u2066iso\u2069 \u200bzw\u200d\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000E0041", `tag\udb40\udc41`},
		{"private\ue000", `private\ue000`},
		{"nonchar\ufffe\U0001fffe", `nonchar\ufffe\ud83f\udffe`},
		{"bad\xffutf8", `bad\ufffdutf8`},
		{`back\slash \u202e`, `back\slash \u202e`},
		// Characters shown as nothing: variation selectors (here
		// spelling bytes), the combining grapheme joiner, Hangul
		// fillers, a Khmer inherent vowel, a Mongolian selector.
		{"ok\U000E0100\U000E0101\u034f\u115f\u3164\uffa0\u17b4\u180b!", `ok\udb40\udd00\udb40\udd01\u034f\u115f\u3164\uffa0\u17b4\u180b!`},
		// An emoji's presentation selector is shown after it, one; a
		// second, or one at the start or after a space, is not.
		{"\u2764\ufe0f \u263a\ufe0e 1\ufe0f\u20e3", "\u2764\ufe0f \u263a\ufe0e 1\ufe0f\u20e3"},
		{"\ufe0fa\ufe0f\ufe0f \ufe0e\u202e\ufe0f", `\ufe0fa` + "\ufe0f" + `\ufe0f \ufe0e\u202e\ufe0f`},
		// Characters that look like a space: the braille blank, no-break
		// and ideographic spaces, the widths of U+2000 to U+200A.
		{"a\u2800b\u00a0c\u3000d\u2003e\u202ff", `a\u2800b\u00a0c\u3000d\u2003e\u202ff`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"{ \"b\" : 1,\r\n \"a\":\"x\" }", `{"a":"x","b":1}`, true},
		{`{"p":"\u202eexe.txt"}`, `{"p":"\u202eexe.txt"}`, true},
		{`{"p":"a\rb"}`, `{"p":"a\rb"}`, true},
		// Canonical JSON would round the number: shown as written.
		{"{\"n\":9007199254740993,\r\"p\":\"/etc/shadow\"}", `{"n":9007199254740993,"p":"/etc/shadow"}`, true},
		{"not json\r\x1b[1A", `"not json\r\u001b[1A"`, false},
	} {
		got, ok := JSON([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("JSON(%q) = %q, %v, want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzEscape checks that nothing a terminal acts on survives Escape, that
// text with none is left alone, and that escaped JSON is the same JSON.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\rb", "\x1b[2J", "\u202e", "\xff", "\U000E0041", `{"a":"\u202e"}`, "{\"a\":1}\r", "\u2764\ufe0f\ufe0f", "a\U000E0100\u3164", "\u2800\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, got)
		}
		base := false
		for i, r := range got {
			if hidden(r, utf8.RuneLen(r), base) {
				t.Fatalf("Escape(%q) = %q: %U left at %d", s, got, r, i)
			}
			base = r > ' ' && !isPresentation(r)
		}
		clean := utf8.ValidString(s)
		base = false
		cmd := commands{blank: true}
		for _, r := range s {
			clean = cmd.shown(r, clean && !hidden(r, utf8.RuneLen(r), base))
			base = r > ' ' && !isPresentation(r)
		}
		if commandLine.MatchString(got) {
			t.Fatalf("Escape(%q) = %q: a workflow command is left", s, got)
		}
		if clean != (got == s) {
			t.Fatalf("Escape(%q) = %q", s, got)
		}
		text, ok := JSON([]byte(s))
		if strings.ContainsAny(text, "\r\n\x1b") {
			t.Fatalf("JSON(%q) = %q: a control character is left", s, text)
		}
		var want, back any
		if err := json.Unmarshal([]byte(text), &back); err != nil {
			t.Fatalf("JSON(%q) = %q: not JSON: %v", s, text, err)
		}
		if ok {
			if err := json.Unmarshal([]byte(s), &want); err != nil {
				t.Fatalf("JSON(%q) says it is JSON: %v", s, err)
			}
			if !reflect.DeepEqual(want, back) {
				t.Fatalf("JSON(%q) = %q: another value", s, text)
			}
		}
	})
}

func TestLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"stdout:\n\tok\n", "stdout:\n\tok\n"},
		{"a\rb\n", `a\u000db` + "\n"},
		{"\x1b[1A\x1b[2Kdone\u202e\n", `\u001b[1A\u001b[2Kdone\u202e` + "\n"},
		{"crlf\r\n", `crlf\u000d` + "\n"},
	} {
		if got := Lines(c.in); got != c.want {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.want)
		}
		var b strings.Builder
		n, err := Writer(&b).Write([]byte(c.in))
		if err != nil || n != len(c.in) || b.String() != c.want {
			t.Errorf("Writer wrote %q (%d, %v) for %q, want %q", b.String(), n, err, c.in, c.want)
		}
	}
}

// commandLine matches what a GitHub Actions runner reads as a workflow
// command: a line that starts with "::" after its blanks, or "##[" in a
// line.
var commandLine = regexp.MustCompile(`(?m)^[ \t]*::|##\[`)

// TestCommands: no line Lines or Escape writes is one a CI runner would
// take for a workflow command, whatever text a manifest or a file's name
// put in it; a colon or a bracket elsewhere is left as it is.
func TestCommands(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"model gpt-4o\n::add-mask::FAIL", "model gpt-4o\n\\u003a:add-mask::FAIL"},
		{"::error::x", `\u003a:error::x`},
		{"a\n \t ::warning::x\n:b", "a\n \t \\u003a:warning::x\n\\u003ab"},
		{"ok ##[add-mask]FAIL ###[error]x", `ok ##\u005badd-mask]FAIL ###\u005berror]x`},
		{"a::b # [c] #[d] time 10:30", "a::b # [c] #[d] time 10:30"},
		// A blank a runner trims but a terminal may not show is
		// escaped, and the line then starts with the escape.
		{"x\n\u00a0::error::y\n\x0b::error::z", "x\n\\u00a0::error::y\n\\u000b::error::z"},
		{"x\r::error::y", `x\u000d::error::y`},
	} {
		if got := Lines(c.in); got != c.want || commandLine.MatchString(got) {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Escape(c.in); commandLine.MatchString(got) {
			t.Errorf("Escape(%q) = %q: a workflow command is left", c.in, got)
		}
	}
	// A stream written in pieces: a line carries over from one write to
	// the next.
	var b strings.Builder
	w := Writer(&b)
	for _, p := range []string{"agentc: x\n", "  ", ":", ":error::y", " #", "#", "[error]z\n"} {
		w.Write([]byte(p))
	}
	if want := "agentc: x\n  \\u003a:error::y ##\\u005berror]z\n"; b.String() != want {
		t.Errorf("Writer wrote %q, want %q", b.String(), want)
	}
}

// TestHTML: a page printed on a terminal moves nothing, and a browser
// reads each reference as the character it stands for.
func TestHTML(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<pre>ok\n\tcaf\u00e9 \u2764\ufe0f</pre>", "<pre>ok\n\tcaf\u00e9 \u2764\ufe0f</pre>"},
		{"\x1b]0;title\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07", "&#x1b;]0;title&#x7;&#x1b;[2J&#x1b;]52;c;cHduZWQ=&#x7;"},
		{"a\rb\u0085\u009b2J", "a&#xd;b&#x85;&#x9b;2J"},
		{"txt.\u202eexe\u200b\U000E0041", "txt.&#x202e;exe&#x200b;&#xe0041;"},
		{"bad\xffutf8", "bad&#xfffd;utf8"},
	} {
		if got := HTML(c.in); got != c.want {
			t.Errorf("HTML(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestShown: what a person approves fits on one screen: a long run of
// spaces or of one blank character is counted, not written, and a long
// text keeps its start and end, saying how much is left out.
func TestShown(t *testing.T) {
	long := strings.Repeat("0123456789", 300)
	for _, c := range []struct{ in, want string }{
		{`{"cmd":"ls -la"}`, `{"cmd":"ls -la"}`},
		{`{"cmd":"a        b"}`, `{"cmd":"a        b"}`},
		{`{"cmd":"echo PWNED > x;` + strings.Repeat(" ", 20000) + `ls -la"}`, `{"cmd":"echo PWNED > x;[20000 spaces]ls -la"}`},
		{`{"p":"notes` + strings.Repeat("\u2800", 300) + `.txt"}`, `{"p":"notes[300 × \u2800].txt"}`},
		{`{"p":"a\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800"}`, `{"p":"a\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800\\u2800"}`},
		{`{"a":"` + long + `","z":"rm -rf /"}`, `{"a":"` + long[:594] + ` [… 1823 bytes not shown, 3023 in all …] ` + long[len(long)-583:] + `","z":"rm -rf /"}`},
	} {
		got, _ := Shown([]byte(c.in))
		if got != c.want {
			t.Errorf("Shown(%.60q) = %q, want %q", c.in, got, c.want)
		}
		if len(got) > MaxShown+60 {
			t.Errorf("Shown(%.60q) is %d bytes", c.in, len(got))
		}
	}
}

// TestShownCount: what Shown says it leaves out is counted in the text's
// own bytes: a counted run stands for the bytes it replaces, however long
// its note, so head, tail and the bytes not shown make up the whole.
func TestShownCount(t *testing.T) {
	runs := regexp.MustCompile(`\[(\d+) spaces\]`)
	expand := func(s string) string {
		return runs.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.Atoi(runs.FindStringSubmatch(m)[1])
			return strings.Repeat(" ", n)
		})
	}
	for _, in := range []string{
		`"` + strings.Repeat("         a", 110) + `"`,
		`"` + strings.Repeat(" ", 5000) + strings.Repeat("x", 2000) + `"`,
		`"` + strings.Repeat("y", 2000) + strings.Repeat(" ", 5000) + `"`,
	} {
		got, _ := Shown([]byte(in))
		m := regexp.MustCompile(`^(.*) \[… (-?\d+) bytes not shown, (\d+) in all …\] (.*)$`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("Shown(%.40q) = %q, not cut", in, got)
		}
		left, _ := strconv.Atoi(m[2])
		all, _ := strconv.Atoi(m[3])
		if all != len(in) || left <= 0 || len(expand(m[1]))+left+len(expand(m[4])) != all {
			t.Errorf("Shown(%.40q) = %q: head, tail and %d bytes not shown do not make the %d in all", in, got, left, len(in))
		}
	}
}

// TestShownWithin: a bound other than a screen's keeps the start and the
// end of a text longer than it, each within half the bound, and a text
// within it whole.
func TestShownWithin(t *testing.T) {
	long := strings.Repeat("0123456789", 500)
	in := `{"a":"` + long + `","path":"/etc/passwd"}`
	got, _ := ShownWithin([]byte(in), 4000)
	if !strings.HasPrefix(got, `{"a":"0123`) || !strings.HasSuffix(got, `","path":"/etc/passwd"}`) ||
		!strings.Contains(got, " in all …]") || len(got) > 4000+60 || len(got) < 3900 {
		t.Errorf("ShownWithin(%d bytes, 4000) = %d bytes: %.80q…%q", len(in), len(got), got, got[len(got)-80:])
	}
	if got, _ := ShownWithin([]byte(`{"a":"`+long[:3000]+`"}`), 4000); got != `{"a":"`+long[:3000]+`"}` {
		t.Errorf("ShownWithin cut a text within its bound: %d bytes", len(got))
	}
}
