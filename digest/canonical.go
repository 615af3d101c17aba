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
// IEEE-754 double nearest to it, so 1, 1.0 and 1e0 are one value (as they
// are to JSON Schema), and so are 9007199254740993 and 9007199254740992. A
// number beyond the largest double is an error: RFC 8785 cannot write it.
// CanonicalNumber tells a caller when the double is not the number written.
//
// The text must be I-JSON (RFC 7493): valid UTF-8, no lone surrogates and
// no duplicate member names; anything else is an error.
func Canonical(data []byte) ([]byte, error) {
	return canonical(data, false)
}

// CanonicalExact is Canonical, but a number that its canonical form does not
// write exactly (see CanonicalNumber) is an error rather than rounded. It is
// for digests that must tell apart any two values written differently, such
// as a request's fingerprint, where 2^53+1 and 2^53 are different ids.
func CanonicalExact(data []byte) ([]byte, error) {
	return canonical(data, true)
}

func canonical(data []byte, exact bool) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("canonical JSON: input is not valid UTF-8")
	}
	// Much JSON is canonical already (what agentc stores, and small values
	// encoding/json writes): checked in one pass, it is not built again.
	if isCanonical(data) {
		return bytes.Clone(data), nil
	}
	return build(data, exact)
}

// build parses data, valid UTF-8, and writes its canonical form.
func build(data []byte, exact bool) ([]byte, error) {
	p := &parser{data: data, exact: exact}
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
	data  []byte
	pos   int
	exact bool // refuse numbers that canonicalising would round
	lax   bool // check only that the text is JSON (Valid), not canonical
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
		lit, err := p.number()
		if err != nil {
			return err
		}
		out, exact, err := canonicalNumber(lit)
		if err != nil {
			return fmt.Errorf("canonical JSON: %s: %w", path, err)
		}
		if p.exact && !exact {
			return fmt.Errorf("canonical JSON: %s: number %s is not exactly an IEEE-754 double (it would become %s)", path, clip(lit), out)
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

// lessUTF16 orders strings of valid UTF-8 by their UTF-16 code units, as
// RFC 8785 sorts member names, without converting them. UTF-8's byte order
// is the order of code points; the UTF-16 order differs from it only where
// a character beyond U+FFFF (a surrogate pair, D800–DBFF first; lead byte
// F0–F4) meets one from U+E000 to U+FFFF (lead byte EE or EF). At the
// first byte where the two differ, the characters it belongs to start at
// the same place, and their lead bytes tell which case it is.
func lessUTF16[T string | []byte](a, b T) bool {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) < len(b)
	}
	s := i
	for s > 0 && !isRuneStart(a[s]) {
		s--
	}
	if s == i { // the lead bytes differ
		la, lb := a[i], b[i]
		if la >= 0xF0 && (lb == 0xEE || lb == 0xEF) {
			return true
		}
		if lb >= 0xF0 && (la == 0xEE || la == 0xEF) {
			return false
		}
	}
	return a[i] < b[i]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

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
	if err := p.scanNumber(); err != nil {
		return "", err
	}
	return string(p.data[start:p.pos]), nil
}

// scanNumber moves past a number literal as JSON's grammar allows it.
func (p *parser) scanNumber() error {
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
			return p.errorf("invalid number: leading zero")
		}
	} else if digits() == 0 {
		return p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.errorf("invalid number: no digits in the exponent")
		}
	}
	return nil
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

// CanonicalNumber returns a JSON number literal as RFC 8785 writes it: the
// IEEE-754 double nearest to its value, written as ECMAScript's
// Number.prototype.toString writes it. exact reports whether canon denotes
// the same decimal value as lit: 1.0 and 1e0 are exact ("1"),
// 333333333.33333329 ("333333333.3333333") and 2^53+1 are not, and a
// nonzero number too small for a double becomes "0", inexactly. The error
// is for what RFC 8785 cannot write at all: a literal that is not a JSON
// number, or one beyond the largest double.
func CanonicalNumber(lit string) (canon string, exact bool, err error) {
	if lit == "" || lit[0] != '-' && (lit[0] < '0' || lit[0] > '9') {
		return "", false, fmt.Errorf("%q is not a JSON number", clip(lit))
	}
	p := &parser{data: []byte(lit)}
	if _, err := p.number(); err != nil || p.pos != len(lit) {
		return "", false, fmt.Errorf("%q is not a JSON number", clip(lit))
	}
	return canonicalNumber(lit)
}

// canonicalNumber is CanonicalNumber for a literal known to be a JSON
// number.
func canonicalNumber(lit string) (canon string, exact bool, err error) {
	d := parseDecimal(lit)
	f, err := d.float()
	if err != nil {
		return "", false, fmt.Errorf("number %s: %w", clip(lit), err)
	}
	canon = formatES(f)
	return canon, parseDecimal(canon) == d, nil
}

// clip shortens a long literal for a message.
func clip(lit string) string {
	if len(lit) <= 40 {
		return lit
	}
	return fmt.Sprintf("%s...%s (%d characters)", lit[:24], lit[len(lit)-8:], len(lit))
}

// decimal is the value of a number literal, ±0.digits × 10^exp, with no
// leading or trailing zeros in digits; zero is the zero decimal, whatever
// its sign.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// expLimit saturates exponents: a literal's exponent part may have any
// number of digits, and every value whose exponent passes ±expLimit is far
// outside a double's range, overflowing or underflowing alike.
const expLimit = 1 << 40

// parseDecimal reads a literal of JSON's number grammar. It works on the
// digits as written, never on 10^exp, so a huge exponent costs nothing.
func parseDecimal(lit string) decimal {
	var d decimal
	if lit != "" && lit[0] == '-' {
		d.neg = true
		lit = lit[1:]
	}
	mant, expPart := lit, ""
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant, expPart = lit[:i], lit[i+1:]
	}
	var e int64
	expNeg := false
	if expPart != "" && (expPart[0] == '+' || expPart[0] == '-') {
		expNeg = expPart[0] == '-'
		expPart = expPart[1:]
	}
	for i := 0; i < len(expPart); i++ {
		if e < expLimit {
			e = e*10 + int64(expPart[i]-'0')
		}
	}
	if expNeg {
		e = -e
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(ip+fp, "0")
	d.exp = int64(len(ip)) - int64(len(ip)+len(fp)-len(digits)) + e
	d.digits = strings.TrimRight(digits, "0")
	if d.digits == "" {
		return decimal{}
	}
	return d
}

// float returns the double nearest to d, rounding half to even as
// strconv.ParseFloat does, or an error when d is beyond the largest double.
// strconv.ParseFloat alone is not enough: it saturates a literal's exponent
// at 10000, so it reads 1 followed by 20000 zeros and e-20000 as 0.
func (d decimal) float() (float64, error) {
	switch {
	case d.digits == "":
		return 0, nil
	case d.exp > 309: // at least 10^309
		return 0, errOverflow
	case d.exp < -323: // below 10^-324, less than half the smallest double
		return 0, nil
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	f, err := strconv.ParseFloat(sign+"0."+d.digits+"e"+strconv.FormatInt(d.exp, 10), 64)
	if err != nil {
		return 0, errOverflow
	}
	return f, nil
}

var errOverflow = errors.New("outside the range of an IEEE-754 double (magnitude at most 1.7976931348623157e+308): RFC 8785 writes every number as a double, and cannot write this one")

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
