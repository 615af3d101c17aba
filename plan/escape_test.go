package plan

import (
	"testing"
	"text/template"
)

// TestEscapersMatchTextTemplate: the template evaluator's html and js
// escapers write what text/template's do, which the runtime may not link.
func TestEscapersMatchTextTemplate(t *testing.T) {
	for _, s := range []string{
		"", "plain", `a "quoted" 'word'`, "<b>&amp;</b>", "x\x00y", "a=b\\c", "tab\tnew\nline\r",
		"\x01\x1f\x7f", "é ü 世界", "\u2028\u2029", "\uFFFD", "\U0001F600", "bad \xff utf8", "</script>",
	} {
		if got, want := htmlEscape(s), template.HTMLEscapeString(s); got != want {
			t.Errorf("html %q: %q, want %q", s, got, want)
		}
		if got, want := jsEscape(s), template.JSEscapeString(s); got != want {
			t.Errorf("js %q: %q, want %q", s, got, want)
		}
	}
}

func FuzzEscapers(f *testing.F) {
	for _, s := range []string{"<a href='x'>", "\x00\u2028\xff", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := htmlEscape(s), template.HTMLEscapeString(s); got != want {
			t.Errorf("html %q: %q, want %q", s, got, want)
		}
		if got, want := jsEscape(s), template.JSEscapeString(s); got != want {
			t.Errorf("js %q: %q, want %q", s, got, want)
		}
	})
}
