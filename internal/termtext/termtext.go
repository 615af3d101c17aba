// Package termtext makes text from parties agentc does not trust (a model's
// arguments, a tool's output) safe to print on a terminal: nothing in it
// may move the cursor, clear or recolour the screen, reorder what follows
// or hide itself, so that the person reading sees what is there.
package termtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"agentc.dev/agentc/digest"
)

// Escape returns s with every character a terminal would interpret or
// not show written as a JSON escape (\u001b, \u202e): C0 and C1 controls
// (line breaks and tabs too), DEL, format characters (bidi overrides and
// isolates, zero-width spaces and joiners, tags), the other characters a
// renderer may show as nothing (variation selectors but one presentation
// selector after a character, Hangul fillers), line and paragraph
// separators, noncharacters and private-use ones; a byte that is not
// UTF-8 becomes \ufffd. What a CI runner would take for a workflow
// command is escaped too (see [Lines]). Backslashes are left as they
// are: a JSON text stays a JSON text denoting the same value.
func Escape(s string) string { return escape(s, false, writeEscape, &commands{blank: true}) }

// Lines is Escape for text of several lines, such as an error message that
// quotes a tool's output: line feeds and tabs are left as they are, and
// everything else a terminal would interpret is escaped, a carriage return
// too, so no line can be written over another.
//
// A CI runner reads a program's output for workflow commands, which
// GitHub Actions takes from any line whose first characters but spaces
// and tabs are "::" (::add-mask::WORD hides WORD from the rest of the
// log, ::error:: shows a finding the program never made), and from
// "##[" anywhere in a line (its older form, ##[error]). So neither is
// left whole: a colon that a line starts with, after its blanks, is
// written \u003a, and the bracket of "##[" \u005b. s is taken to begin
// a line.
func Lines(s string) string { return escape(s, true, writeEscape, &commands{blank: true}) }

// Writer returns a writer that writes what it is given to w as Lines
// escapes it: for a stream of messages, each written whole (a character
// split across two writes is shown as \ufffd). Where a line is, for the
// workflow commands Lines escapes, carries over from one write to the
// next. It is safe for concurrent use.
func Writer(w io.Writer) io.Writer { return &writer{w: w, cmd: commands{blank: true}} }

type writer struct {
	w   io.Writer
	mu  sync.Mutex
	cmd commands
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, escape(string(p), true, writeEscape, &w.cmd)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// commands follows where a text is in its line, for the workflow commands
// Lines escapes.
type commands struct {
	blank  bool // nothing but spaces and tabs since the line began
	hashes int  // how many '#' were written just before, up to 2
}

// shown says whether r, which the terminal rules would show (ok), is
// shown as it is: not if it would start a workflow command, a colon
// first on its line or the bracket of "##[". It moves c past r as it is
// written.
func (c *commands) shown(r rune, ok bool) bool {
	if ok && (r == ':' && c.blank || r == '[' && c.hashes == 2) {
		ok = false
	}
	switch {
	case !ok: // an escape, which starts with a backslash
		c.blank, c.hashes = false, 0
	case r == '\n':
		c.blank, c.hashes = true, 0
	case r == ' ' || r == '\t':
		c.hashes = 0
	case r == '#':
		c.blank, c.hashes = false, min(c.hashes+1, 2)
	default:
		c.blank, c.hashes = false, 0
	}
	return ok
}

// HTML is Lines for an HTML document: every character a terminal would
// interpret or not show but a line feed and a tab is written as a
// character reference (&#x1b;, &#x202e;), which a browser reads as the
// character itself, so that the page shows what it did and printed on a
// terminal (cat page.html) it moves nothing; a byte that is not UTF-8
// becomes &#xfffd;, which a browser shows for it too. s must be HTML: a
// reference is text only outside a script or style element, where none
// of these characters may stand.
func HTML(s string) string { return escape(s, true, writeReference, nil) }

func writeReference(b *strings.Builder, r rune) {
	b.WriteString("&#x")
	b.WriteString(strconv.FormatInt(int64(r), 16))
	b.WriteByte(';')
}

// escape returns s with each character hidden reports written by write,
// but line feeds and tabs where lines is set, and each byte that is not
// UTF-8 as U+FFFD, written as the character does not show it; with cmd,
// the characters that would start a workflow command too.
func escape(s string, lines bool, write func(*strings.Builder, rune), cmd *commands) string {
	base := false          // the rune before was shown, and may take a presentation selector
	var b *strings.Builder // nil while s is written as it is
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		ok := !hidden(r, n, base) || lines && (r == '\n' || r == '\t')
		if cmd != nil {
			ok = cmd.shown(r, ok)
		}
		base = ok && r > ' ' && !isPresentation(r)
		if !ok && b == nil {
			b = new(strings.Builder)
			b.Grow(len(s) + 16)
			b.WriteString(s[:i])
		}
		i += n
		switch {
		case b == nil:
		case ok:
			b.WriteRune(r)
		default:
			write(b, r) // a byte that is not UTF-8 decodes as U+FFFD
		}
	}
	if b == nil {
		return s
	}
	return b.String()
}

// hidden reports whether the rune r, n bytes long in its text, is one a
// terminal would act on or not show; base says whether the rune before it
// was shown and may take a presentation selector.
//
// Spaces other than ASCII's (no-break, ideographic, the widths of
// U+2000 to U+200A) and the braille blank look like a space and may
// stand for one: they are hidden too, so that a run of them is seen.
//
// Besides controls and format characters, the characters Unicode says a
// renderer may show as nothing (Default_Ignorable_Code_Point: variation
// selectors, Hangul fillers, the combining grapheme joiner) are hidden:
// a run of them shows as nothing and can spell any bytes. The text and
// emoji presentation selectors (U+FE0E, U+FE0F) are shown right after a
// character they can belong to (an emoji's ❤️), one each.
func hidden(r rune, n int, base bool) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true // not UTF-8
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r < 0x7f:
		return false
	case isPresentation(r):
		return !base
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co, unicode.Cs, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) ||
		r == 0x2800 || // the braille blank, shown as a space

		r&0xfffe == 0xfffe || r >= 0xfdd0 && r <= 0xfdef // noncharacters
}

// isPresentation says whether r is the text or the emoji presentation
// selector.
func isPresentation(r rune) bool { return r == 0xfe0e || r == 0xfe0f }

func writeEscape(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	one := func(u rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[u>>shift&0xf])
		}
	}
	if r > 0xffff {
		r -= 0x10000
		one(0xd800 + r>>10)
		one(0xdc00 + r&0x3ff)
		return
	}
	one(r)
}

// JSON returns a JSON text as a person should read it, on one line and
// escaped: in canonical form (RFC 8785), or, where that would round a
// number, compacted with its numbers as written. Text that is not JSON is
// shown as a JSON string, and ok is false.
func JSON(data []byte) (text string, ok bool) {
	if c, err := digest.CanonicalExact(data); err == nil {
		return Escape(string(c)), true
	}
	var b bytes.Buffer
	if utf8.Valid(data) && json.Compact(&b, data) == nil {
		return Escape(b.String()), true
	}
	q, _ := json.Marshal(strings.ToValidUTF8(string(data), "\ufffd"))
	return Escape(string(q)), false
}

// MaxShown bounds the text Shown returns, in bytes: about a screen, with
// the other lines of a prompt.
const MaxShown = 1200

// Shown returns a JSON text as JSON does, shortened so that a person sees
// all of what it says on one screen: a run of more than minRun of one
// space or one escaped character is written once with its count
// ([20000 spaces], [300 × \u2800]), and text still longer than MaxShown
// keeps its start and its end, with a note of how many bytes are left out
// and how many the whole has. What is cut is marked in brackets, which no
// escaped JSON text shows unquoted, so a long argument cannot push the
// part that matters off the screen.
func Shown(data []byte) (text string, ok bool) { return ShownWithin(data, MaxShown) }

// ShownWithin is Shown for a place that holds bound bytes rather than a
// screen (the form an MCP client shows): text longer than bound keeps its
// start and its end, each within half of it.
func ShownWithin(data []byte, bound int) (text string, ok bool) {
	text, ok = JSON(data)
	units := collapse(text)
	n := 0
	for _, u := range units {
		n += len(u.shown)
	}
	if n <= bound {
		var b strings.Builder
		for _, u := range units {
			b.WriteString(u.shown)
		}
		return b.String(), ok
	}
	// The head and the tail, each within half the bound as shown; what
	// is left out is counted in the text's own bytes, a counted run as
	// the bytes it stands for.
	var h, t strings.Builder
	size, kept := 0, 0
	for i := 0; size+len(units[i].shown) <= bound/2; i++ {
		h.WriteString(units[i].shown)
		size += len(units[i].shown)
		kept += units[i].span
	}
	var tail []string
	size = 0
	for i := len(units) - 1; size+len(units[i].shown) <= bound/2; i-- {
		tail = append(tail, units[i].shown)
		size += len(units[i].shown)
		kept += units[i].span
	}
	slices.Reverse(tail)
	for _, u := range tail {
		t.WriteString(u)
	}
	return fmt.Sprintf("%s [… %d bytes not shown, %d in all …] %s", h.String(), len(text)-kept, len(text), t.String()), ok
}

// unit is a piece of escaped text as Shown writes it, and how many bytes
// of the text it stands for.
type unit struct {
	shown string
	span  int
}

// minRun is the shortest run of one space or escape that Shown counts
// rather than writes.
const minRun = 8

// collapse splits escaped text into its units (a character, or an
// escape \uXXXX or \X), a run of more than minRun of one space or one
// escape written as one unit that counts it.
func collapse(s string) []unit {
	var units []unit
	for i := 0; i < len(s); {
		n := 1
		switch {
		case s[i] == '\\' && i+5 < len(s) && s[i+1] == 'u':
			n = 6
		case s[i] == '\\' && i+1 < len(s):
			n = 2
		default:
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		u := s[i : i+n]
		run := 1
		if u == " " || len(u) == 6 {
			for i+(run+1)*n <= len(s) && s[i+run*n:i+(run+1)*n] == u {
				run++
			}
		}
		switch {
		case run <= minRun:
			units = append(units, unit{u, n})
			run = 1
		case u == " ":
			units = append(units, unit{fmt.Sprintf("[%d spaces]", run), run * n})
		default:
			units = append(units, unit{fmt.Sprintf("[%d × %s]", run, u), run * n})
		}
		i += run * n
	}
	return units
}
