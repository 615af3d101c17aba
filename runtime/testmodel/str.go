package testmodel

import (
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// str builds a string: from a format, else from a pattern, else plain
// letters, within minLength and maxLength (counted in characters, as the
// validator counts them).
func (g *gen) str(atoms []*jsonschema.Schema, v int) (any, error) {
	r := stringRulesOf(atoms)
	if r.minL > maxLengthCap {
		return nil, unsat("minLength", r.minAt, "asks for %d characters, more than the %d this model builds", r.minL, maxLengthCap)
	}
	if r.maxL >= 0 && r.minL > r.maxL {
		return nil, unsat("minLength", r.minAt, "minLength %d exceeds maxLength %d", r.minL, r.maxL)
	}
	if s, ok := g.file(atoms); ok && r.fits(s) {
		return s, nil
	}
	if s, ok := g.described(&r, v); ok {
		return s, nil
	}
	switch {
	case len(r.formats) > 0:
		return nil, unsat("format", r.fmtAt, "found no %q string that meets the other constraints", r.formats[0].Name)
	case len(r.patterns) > 0:
		return nil, unsat("pattern", r.patAt, "found no string matching %q that meets the other constraints", r.patterns[0].String())
	}
	if s, ok := g.labelled(&r, v); ok {
		return s, nil
	}
	return g.letters(&r, firstOr(atoms), v)
}

// labelled returns, in the simplest value, a string that names the member
// it is for, as a placeholder a person would write: "example invoice
// number" for invoice_number (the v-th variant numbered after it); false
// outside a member, or where the label does not meet the rules.
func (g *gen) labelled(r *stringRules, v int) (string, bool) {
	if !g.simple || g.member == "" {
		return "", false
	}
	words := memberWords(g.member)
	if words == "" {
		return "", false
	}
	s := "example " + words
	if v > 0 {
		s += fmt.Sprintf(" %d", v+1)
	}
	return s, r.fits(s)
}

// memberWords splits a member name into lower-case words: invoice_number,
// invoice-number and invoiceNumber give "invoice number". Names of
// anything but letters and digits give "".
func memberWords(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, c := range name {
		switch {
		case c == '_' || c == '-' || c == ' ' || c == '.':
			flush()
			prevLower = false
		case c >= 'A' && c <= 'Z':
			if prevLower {
				flush()
			}
			cur = append(cur, c-'A'+'a')
			prevLower = false
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			cur = append(cur, c)
			prevLower = true
		default:
			return ""
		}
		if len(words) > 8 {
			return ""
		}
	}
	flush()
	return strings.Join(words, " ")
}

// stringRules are the string keywords of a value's atoms, combined.
type stringRules struct {
	minL, maxL          int // maxL -1: none
	minAt, patAt, fmtAt *jsonschema.Schema
	patterns            []jsonschema.Regexp
	formats             []*jsonschema.Format
}

// stringRulesOf combines the string keywords of atoms: the tightest
// lengths, every pattern and every format.
func stringRulesOf(atoms []*jsonschema.Schema) stringRules {
	r := stringRules{maxL: -1}
	for _, a := range atoms {
		if a.MinLength != nil && *a.MinLength > r.minL {
			r.minL, r.minAt = *a.MinLength, a
		}
		if a.MaxLength != nil && (r.maxL < 0 || *a.MaxLength < r.maxL) {
			r.maxL = *a.MaxLength
		}
		if a.Pattern != nil {
			r.patterns = append(r.patterns, a.Pattern)
			r.patAt = a
		}
		if a.Format != nil {
			r.formats = append(r.formats, a.Format)
			r.fmtAt = a
		}
	}
	return r
}

// fits tells whether s meets every rule.
func (r *stringRules) fits(s string) bool {
	n := utf8.RuneCountInString(s)
	if n < r.minL || (r.maxL >= 0 && n > r.maxL) {
		return false
	}
	for _, p := range r.patterns {
		if !p.MatchString(s) {
			return false
		}
	}
	for _, f := range r.formats {
		if f.Validate(s) != nil {
			return false
		}
	}
	return true
}

// described returns a string that meets every rule, from a format's
// samples, else from a pattern, else from all the patterns joined; false
// if none fits, as always without a format or pattern.
func (g *gen) described(r *stringRules, v int) (string, bool) {
	for _, f := range r.formats {
		for i := range 4 {
			if s, ok := g.formatted(f.Name, v+i*7); ok && r.fits(s) {
				return s, true
			}
		}
	}
	for _, p := range r.patterns {
		for i := range 4 {
			if s, ok := g.fromPattern(p.String(), r.minL, r.maxL, v+i*11); ok && r.fits(s) {
				return s, true
			}
		}
	}
	if len(r.patterns) > 1 {
		// Patterns anchored at different ends may both match a joint string.
		for _, order := range [][]jsonschema.Regexp{r.patterns, reversed(r.patterns)} {
			joint := ""
			for _, p := range order {
				s, ok := g.fromPattern(p.String(), 0, -1, v)
				if !ok {
					break
				}
				joint += s
			}
			if r.fits(joint) {
				return joint, true
			}
		}
	}
	if len(r.patterns) > 0 {
		// The sampler reads patterns as Go's regexp/syntax does; an
		// ECMA-262 pattern beyond it (lookaround, backreferences) may
		// still accept a plain string.
		for i := range 8 {
			if s := plainString(v+i, max(r.minL, 1)+i%4); r.fits(s) {
				return s, true
			}
		}
	}
	return "", false
}

// letters builds a string of lower-case letters within the lengths: the
// v-th plain string in the simplest value, random letters otherwise.
func (g *gen) letters(r *stringRules, at *jsonschema.Schema, v int) (any, error) {
	n := r.minL
	if !g.simple {
		room := 12
		if r.maxL >= 0 {
			room = min(room, r.maxL-r.minL)
		}
		n += g.rng.IntN(room + 1)
	}
	if g.simple {
		s := plainString(v, n)
		if r.maxL >= 0 && utf8.RuneCountInString(s) > r.maxL {
			return nil, unsat("maxLength", at, "no more strings of at most %d characters", r.maxL)
		}
		return s, nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + g.rng.IntN(26))
	}
	if v > 0 && n > 0 {
		b[0] = byte('a' + v%26)
	}
	return string(b), nil
}

func reversed[T any](list []T) []T {
	out := slices.Clone(list)
	slices.Reverse(out)
	return out
}

// plainString is the v-th string of lower-case letters at least n long:
// "", "a", "b", ... when n is 0.
func plainString(v, n int) string {
	if v == 0 {
		return strings.Repeat("a", n)
	}
	var b []byte
	for x := v; x > 0; x = (x - 1) / 26 {
		b = append(b, byte('a'+(x-1)%26))
	}
	for len(b) < n {
		b = append(b, 'a')
	}
	return string(b)
}

// formatted returns the v-th sample of a format jsonschema asserts.
func (g *gen) formatted(name string, v int) (string, bool) {
	if !g.simple {
		v += g.rng.IntN(1000)
	}
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, v)
	switch name {
	case "date":
		return day.Format("2006-01-02"), true
	case "date-time":
		return day.Add(officeHour + time.Duration(v)*time.Minute).Format("2006-01-02T15:04:05Z"), true
	case "time":
		return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(officeHour + time.Duration(v)*time.Second).Format("15:04:05Z"), true
	case "email", "idn-email":
		if v == 0 {
			return "user@example.com", true
		}
		return fmt.Sprintf("user%d@example.com", v), true
	case "hostname", "idn-hostname":
		if v == 0 {
			return "example.com", true
		}
		return fmt.Sprintf("host%d.example.com", v), true
	case "ipv4":
		return fmt.Sprintf("192.0.%d.%d", 2+v/254%250, 1+v%254), true
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", v+1), true
	case "uri", "iri":
		if v == 0 {
			return "https://example.com/", true
		}
		return fmt.Sprintf("https://example.com/%d", v), true
	case "uri-reference", "iri-reference":
		if v == 0 {
			return "https://example.com/", true
		}
		return fmt.Sprintf("/path/%d", v), true
	case "uri-template":
		return fmt.Sprintf("https://example.com/%d/{id}", v), true
	case "uuid":
		// A version 4 UUID whose random bits are the v-th of a fixed
		// sequence: it reads like one, and every variant differs.
		hi, lo := splitmix(uint64(v)), splitmix(uint64(v)+1<<32)
		return fmt.Sprintf("%08x-%04x-4%03x-%x%03x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff, 8|lo>>62, lo>>48&0xfff, lo&0xffffffffffff), true
	case "duration":
		return fmt.Sprintf("P%dD", v+1), true
	case "period":
		return day.Format("2006-01-02T15:04:05Z") + fmt.Sprintf("/P%dD", v+1), true
	case "semver":
		return fmt.Sprintf("1.0.%d", v), true
	case "json-pointer":
		return "/" + plainString(v+1, 1), true
	case "relative-json-pointer":
		return fmt.Sprint(v), true
	case "regex":
		if v == 0 {
			return "^[a-z]+$", true
		}
		return plainString(v, 1), true
	}
	return "", false
}

// officeHour is the time of day of a date-time or time: a plausible one,
// not midnight.
const officeHour = 9*time.Hour + 30*time.Minute

// splitmix is SplitMix64's output function: a fixed bijection that
// scatters consecutive numbers.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// parsedRegexp is a pattern parsed once per attempt.
type parsedRegexp struct {
	re *syntax.Regexp
	ok bool
}

// fromPattern returns a string the pattern matches, aiming at a length
// between minL and maxL (-1: none). The simplest value takes the first
// alternative and the fewest repetitions.
func (g *gen) fromPattern(pattern string, minL, maxL, v int) (string, bool) {
	p, seen := g.regexps[pattern]
	if !seen {
		re, err := syntax.Parse(pattern, syntax.Perl)
		p = &parsedRegexp{re: re, ok: err == nil}
		g.regexps[pattern] = p
	}
	if !p.ok {
		return "", false
	}
	var seed uint64
	random := !g.simple || v > 0
	if random {
		seed = g.rng.Uint64() ^ uint64(v)*0x9e3779b97f4a7c15
	}
	gen := func(grow int) (string, bool) {
		w := &walker{grow: grow, limit: maxLengthCap}
		if random {
			w.rng = rand.New(rand.NewPCG(seed, uint64(v)))
		}
		if !w.walk(p.re) {
			return "", false
		}
		return string(w.out), true
	}
	s, ok := gen(0)
	if !ok {
		return "", false
	}
	n := utf8.RuneCountInString(s)
	if n < minL {
		// Spend the missing length on repetitions, then try padding (which
		// an unanchored end allows).
		for _, grow := range []int{minL - n, 2 * (minL - n), minL} {
			if t, ok := gen(grow); ok && utf8.RuneCountInString(t) >= minL && (maxL < 0 || utf8.RuneCountInString(t) <= maxL) {
				return t, true
			}
		}
		return s + strings.Repeat("a", minL-n), true
	}
	if maxL >= 0 && n > maxL && random {
		// Try the simplest choices.
		w := &walker{limit: maxLengthCap}
		if w.walk(p.re) {
			return string(w.out), true
		}
	}
	return s, true
}

// walker writes a string that a regexp/syntax tree matches.
type walker struct {
	rng   *rand.Rand // nil: always the first choice and fewest repetitions
	grow  int        // repetitions still to add to unbounded repeats
	out   []rune
	limit int
	picks int // classes picked from so far: the simplest value steps through a class, ABC rather than AAA
}

func (w *walker) walk(re *syntax.Regexp) bool {
	if len(w.out) > w.limit {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		w.out = append(w.out, re.Rune...)
		return true
	case syntax.OpCharClass:
		r, ok := pickRune(re.Rune, w.rng, w.picks)
		if !ok {
			return false
		}
		w.picks++
		w.out = append(w.out, r)
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		r := 'a'
		if w.rng != nil {
			r = rune('a' + w.rng.IntN(26))
		}
		w.out = append(w.out, r)
		return true
	case syntax.OpCapture:
		return w.walk(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !w.walk(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		n := len(re.Sub)
		start := 0
		if w.rng != nil {
			start = w.rng.IntN(n)
		}
		mark := len(w.out)
		for i := range n {
			if w.walk(re.Sub[(start+i)%n]) {
				return true
			}
			w.out = w.out[:mark]
		}
		return false
	case syntax.OpStar:
		return w.repeat(re.Sub[0], 0, -1)
	case syntax.OpPlus:
		return w.repeat(re.Sub[0], 1, -1)
	case syntax.OpQuest:
		return w.repeat(re.Sub[0], 0, 1)
	case syntax.OpRepeat:
		return w.repeat(re.Sub[0], re.Min, re.Max)
	}
	return false
}

func (w *walker) repeat(sub *syntax.Regexp, lo, hi int) bool {
	n := lo
	room := 1 << 20
	if hi >= 0 {
		room = hi - lo
	}
	if w.rng != nil {
		n += w.rng.IntN(min(room, 3) + 1)
		room -= n - lo
	}
	if w.grow > 0 && room > 0 {
		add := min(w.grow, room)
		n += add
		w.grow -= add
	}
	for range n {
		if !w.walk(sub) {
			return false
		}
	}
	return true
}

// Rune ranges to draw from, best first: a class takes its first rune from
// the first range it shares.
var runePreference = [][2]rune{
	{'a', 'z'}, {'0', '9'}, {'A', 'Z'}, {'!', '~'}, {' ', ' '},
	{0xA1, 0xD7FF}, {0xE000, 0xFFFD}, {0x10000, 0x10FFFF}, {0, 0x1F}, {0x7F, 0xA0},
}

// pickRune picks a rune from a character class given as sorted lo-hi
// pairs: at random with rng, else the n-th of the best range it shares
// (counted round), so that consecutive picks read like a code: ABC, 012.
func pickRune(class []rune, rng *rand.Rand, n int) (rune, bool) {
	for _, pref := range runePreference {
		var parts [][2]rune
		total := 0
		for i := 0; i+1 < len(class); i += 2 {
			lo, hi := max(class[i], pref[0]), min(class[i+1], pref[1])
			if lo <= hi {
				parts = append(parts, [2]rune{lo, hi})
				total += int(hi-lo) + 1
			}
		}
		if total == 0 {
			continue
		}
		if rng == nil {
			p := parts[0]
			return p[0] + rune(n%(int(p[1]-p[0])+1)), true
		}
		k := rng.IntN(total)
		for _, p := range parts {
			size := int(p[1]-p[0]) + 1
			if k < size {
				return p[0] + rune(k), true
			}
			k -= size
		}
	}
	return 0, false
}
