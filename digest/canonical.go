// Package digest computes agentc's version digests: blake3 in derive-key
// mode over the RFC 8785 (JSON Canonicalization Scheme) form of a value,
// printed "blake3:<64 hex>", and reads and writes the lock file that
// records them.
package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns the RFC 8785 canonical form of a JSON text: no
// insignificant white space, object members sorted by the UTF-16 code
// units of their names, strings escaped minimally, numbers written as
// ECMAScript writes doubles.
//
// Numbers: a JSON number is canonicalised as RFC 8785 says, through the
// IEEE-754 double it denotes, so 1, 1.0 and 1e0 are one value (as they are
// to JSON Schema). A number whose canonical form would denote another
// decimal value than the one written — an integer beyond 2^53 such as
// 2^53+1 or 2^64, a fraction with more digits than a double keeps, anything
// outside the double's range — is an error, never a silent rounding: a
// digest must not equate two values the author wrote differently.
//
// The text must be I-JSON (RFC 7493): valid UTF-8, no lone surrogates and
// no duplicate member names; anything else is an error.
func Canonical(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("canonical JSON: input is not valid UTF-8")
	}
	p := &parser{data: data}
	var b bytes.Buffer
	b.Grow(len(data))
	p.skipSpace()
	if err := p.value(&b, nil, 0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("data after the value")
	}
	return b.Bytes(), nil
}

// CanonicalValue marshals v with encoding/json and canonicalises the
// result.
func CanonicalValue(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return Canonical(data)
}

// maxDepth bounds nesting, so hostile input cannot grow the stack without
// limit.
const maxDepth = 10000

// parser reads JSON text and writes its canonical form as it goes.
type parser struct {
	data []byte
	pos  int
}

// pathElem is where a value sits, built into a string only for an error.
type pathElem struct {
	parent *pathElem
	key    string
	index  int // -1 for an object member
}

func (p *pathElem) String() string {
	if p == nil {
		return "/"
	}
	var parts []string
	for e := p; e != nil; e = e.parent {
		if e.index < 0 {
			parts = append(parts, e.key)
		} else {
			parts = append(parts, strconv.Itoa(e.index))
		}
	}
	var sb strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		sb.WriteByte('/')
		sb.WriteString(parts[i])
	}
	return sb.String()
}

func (p *parser) errorf(format string, args ...any) error {
	if p.pos >= len(p.data) {
		return errors.New("canonical JSON: unexpected end of input")
	}
	return fmt.Errorf("canonical JSON: at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(b *bytes.Buffer, path *pathElem, depth int) error {
	if p.pos >= len(p.data) {
		return p.errorf("want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		if depth >= maxDepth {
			return p.errorf("nested deeper than %d", maxDepth)
		}
		return p.object(b, path, depth+1)
	case c == '[':
		if depth >= maxDepth {
			return p.errorf("nested deeper than %d", maxDepth)
		}
		return p.array(b, path, depth+1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		writeString(b, s)
		return nil
	case c == '-' || '0' <= c && c <= '9':
		start := p.pos
		lit, err := p.number()
		if err != nil {
			return err
		}
		out, err := CanonicalNumber(lit)
		if err != nil {
			p.pos = start
			return fmt.Errorf("canonical JSON: %s: %w", path, err)
		}
		b.WriteString(out)
		return nil
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
			p.pos += len(lit)
			b.WriteString(lit)
			return nil
		}
	}
	return p.errorf("invalid character %q looking for a value", p.data[p.pos])
}

type member struct {
	key        string
	start, end int // of the value in the object's scratch buffer
}

func (p *parser) object(b *bytes.Buffer, path *pathElem, depth int) error {
	p.pos++ // {
	var members []member
	var values bytes.Buffer
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		b.WriteString("{}")
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.errorf("want an object member name")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.errorf("want ':' after an object member name")
		}
		p.pos++
		p.skipSpace()
		start := values.Len()
		if err := p.value(&values, &pathElem{parent: path, key: key, index: -1}, depth); err != nil {
			return err
		}
		members = append(members, member{key: key, start: start, end: values.Len()})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.errorf("")
		}
		if p.data[p.pos] == '}' {
			p.pos++
			break
		}
		if p.data[p.pos] != ',' {
			return p.errorf("want ',' or '}' after an object member")
		}
		p.pos++
	}
	sort.Slice(members, func(i, j int) bool { return lessUTF16(members[i].key, members[j].key) })
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return fmt.Errorf("canonical JSON: %s: duplicate member name %q", path, m.key)
			}
			b.WriteByte(',')
		}
		writeString(b, m.key)
		b.WriteByte(':')
		b.Write(values.Bytes()[m.start:m.end])
	}
	b.WriteByte('}')
	return nil
}

// lessUTF16 orders strings by their UTF-16 code units, as RFC 8785 sorts
// member names, without converting them: the orders differ only where a
// character beyond U+FFFF (a surrogate pair, D800–DBFF first) meets one
// from U+E000 to U+FFFF.
func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return firstUnit(ra) < firstUnit(rb) || firstUnit(ra) == firstUnit(rb) && ra < rb
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) < len(b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

func (p *parser) array(b *bytes.Buffer, path *pathElem, depth int) error {
	p.pos++ // [
	b.WriteByte('[')
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		b.WriteByte(']')
		return nil
	}
	for i := 0; ; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		p.skipSpace()
		if err := p.value(b, &pathElem{parent: path, index: i}, depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.errorf("")
		}
		if p.data[p.pos] == ']' {
			p.pos++
			break
		}
		if p.data[p.pos] != ',' {
			return p.errorf("want ',' or ']' after an array element")
		}
		p.pos++
	}
	b.WriteByte(']')
	return nil
}

// str reads a string literal and returns its value. Lone surrogates are
// refused: I-JSON strings hold characters.
func (p *parser) str() (string, error) {
	p.pos++ // "
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character %#02x in a string", c)
		}
		p.pos++
	}
	var sb strings.Builder
	sb.Write(p.data[start:p.pos])
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return sb.String(), nil
		case c < 0x20:
			return "", p.errorf("control character %#02x in a string", c)
		case c != '\\':
			sb.WriteByte(c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			p.pos = len(p.data)
			return "", p.errorf("")
		}
		esc := p.data[p.pos+1]
		p.pos += 2
		switch esc {
		case '"', '\\', '/':
			sb.WriteByte(esc)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || !bytes.HasPrefix(p.data[p.pos:], []byte(`\u`)) {
					return "", p.errorf("lone surrogate \\u%04x in a string", r)
				}
				p.pos += 2
				r2, err := p.hex4()
				if err != nil {
					return "", err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", p.errorf("lone surrogate in a string")
				}
			}
			sb.WriteRune(r)
		default:
			p.pos -= 2
			return "", p.errorf("invalid escape \\%c in a string", esc)
		}
	}
	return "", p.errorf("")
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		p.pos = len(p.data)
		return 0, p.errorf("")
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}

// number reads a number literal as JSON's grammar allows it.
func (p *parser) number() (string, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
		if p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			return "", p.errorf("invalid number: leading zero")
		}
	} else if digits() == 0 {
		return "", p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return "", p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return "", p.errorf("invalid number: no digits in the exponent")
		}
	}
	return string(p.data[start:p.pos]), nil
}

// writeString writes a string as RFC 8785 requires: only '"', '\' and
// control characters are escaped, with the short forms where JSON has them.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// CanonicalNumber writes a JSON number literal as ECMAScript's
// Number.prototype.toString writes the double it denotes, after checking
// that the double holds the literal's value exactly.
func CanonicalNumber(lit string) (string, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is outside the range of an IEEE-754 double", lit)
	}
	out := formatES(f)
	if !sameValue(lit, out) {
		return "", fmt.Errorf("number %s does not survive an IEEE-754 double, as which canonical JSON writes numbers (it would become %s)", lit, out)
	}
	return out, nil
}

// sameValue reports whether two decimal literals denote the same number.
// Exact comparison of literals with huge exponents would cost memory in
// proportion to the exponent, so those count as different: no double is
// written that way.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	if !strings.ContainsAny(a, "eE") && !strings.ContainsAny(b, "eE") {
		return plainDecimal(a) == plainDecimal(b)
	}
	if exponent(a) > 1000 || exponent(b) > 1000 {
		return false
	}
	ra, ok1 := new(big.Rat).SetString(a)
	rb, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && ra.Cmp(rb) == 0
}

// plainDecimal normalises a decimal literal without exponent: no leading
// zeros in the integer part, no trailing zeros in the fraction, no sign on
// zero.
func plainDecimal(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	if ip == "" && fp == "" {
		return "0"
	}
	out := ip + "." + fp
	if neg {
		out = "-" + out
	}
	return out
}

// exponent returns the magnitude of a literal's exponent part.
func exponent(lit string) int {
	i := strings.IndexAny(lit, "eE")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
	if err != nil {
		return math.MaxInt
	}
	if n < 0 {
		n = -n
	}
	return n
}

// formatES formats a double as ECMAScript's Number.prototype.toString
// (ECMA-262, Number::toString), which RFC 8785 adopts.
func formatES(f float64) string {
	if f == 0 {
		return "0" // and -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest digits that round-trip, as d.ddddde±x.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expS, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expS)
	k := len(digits)
	n := exp + 1 // the value is 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		if n-1 >= 0 {
			s += "e+" + strconv.Itoa(n-1)
		} else {
			s += "e-" + strconv.Itoa(1-n)
		}
	}
	return sign + s
}
