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
	"io"
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
// The text must be I-JSON (RFC 7493): valid UTF-8 and no duplicate member
// names; anything else is an error.
func Canonical(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("canonical JSON: input is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b bytes.Buffer
	b.Grow(len(data))
	if err := canonValue(dec, &b, nil); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("canonical JSON: data after the value at byte %d", dec.InputOffset())
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

// pathElem is where a value sits, built into a string only for an error.
type pathElem struct {
	parent *pathElem
	key    string
	index  int // when key is ""
}

func (p *pathElem) String() string {
	if p == nil {
		return "/"
	}
	var parts []string
	for e := p; e != nil; e = e.parent {
		if e.key != "" || e.index < 0 {
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

func canonValue(dec *json.Decoder, b *bytes.Buffer, path *pathElem) error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err, dec)
	}
	return canonToken(dec, b, tok, path)
}

func syntaxError(err error, dec *json.Decoder) error {
	if err == io.EOF {
		return errors.New("canonical JSON: unexpected end of input")
	}
	return fmt.Errorf("canonical JSON: at byte %d: %w", dec.InputOffset(), err)
}

func canonToken(dec *json.Decoder, b *bytes.Buffer, tok json.Token, path *pathElem) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonObject(dec, b, path)
		case '[':
			return canonArray(dec, b, path)
		}
		return fmt.Errorf("canonical JSON: unexpected %q at byte %d", t, dec.InputOffset())
	case string:
		writeString(b, t)
	case json.Number:
		s, err := CanonicalNumber(string(t))
		if err != nil {
			return fmt.Errorf("canonical JSON: %s: %w", path, err)
		}
		b.WriteString(s)
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("canonical JSON: unexpected token %v", tok)
	}
	return nil
}

type member struct {
	key        string
	units      []uint16
	start, end int // of the value in the object's scratch buffer
}

func canonObject(dec *json.Decoder, b *bytes.Buffer, path *pathElem) error {
	var members []member
	var values bytes.Buffer
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err, dec)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("canonical JSON: object key is not a string at byte %d", dec.InputOffset())
		}
		if seen[key] {
			return fmt.Errorf("canonical JSON: %s: duplicate member name %q", path, key)
		}
		seen[key] = true
		start := values.Len()
		if err := canonValue(dec, &values, &pathElem{parent: path, key: key, index: -1}); err != nil {
			return err
		}
		members = append(members, member{key: key, units: utf16.Encode([]rune(key)), start: start, end: values.Len()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return syntaxError(err, dec)
	}
	sort.Slice(members, func(i, j int) bool { return lessUnits(members[i].units, members[j].units) })
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, m.key)
		b.WriteByte(':')
		b.Write(values.Bytes()[m.start:m.end])
	}
	b.WriteByte('}')
	return nil
}

func lessUnits(a, b []uint16) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func canonArray(dec *json.Decoder, b *bytes.Buffer, path *pathElem) error {
	b.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := canonValue(dec, b, &pathElem{parent: path, index: i}); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return syntaxError(err, dec)
	}
	b.WriteByte(']')
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
