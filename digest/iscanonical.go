package digest

import (
	"bytes"
	"unicode/utf8"
)

// IsCanonical reports whether data is a JSON text already in its RFC 8785
// canonical form: whether Canonical and CanonicalExact would return its
// bytes unchanged. (A number written canonically is the double it
// denotes, so the two agree on every such text.) It reads data once,
// allocating only for a member name with an escape in it and a number
// other than an integer of up to 15 digits, so a reader of JSON stored
// canonical checks it rather than building it again.
func IsCanonical(data []byte) bool {
	return utf8.Valid(data) && isCanonical(data)
}

// isCanonical is IsCanonical for data known to be valid UTF-8.
func isCanonical(data []byte) bool {
	p := &parser{data: data}
	return p.check(0) && p.pos == len(data)
}

// check moves past a value and reports whether it is JSON: written
// canonically, or, with p.lax, as JSON at all (Valid). depth is how many
// arrays and objects hold it.
func (p *parser) check(depth int) bool {
	if p.pos >= len(p.data) {
		return false
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return depth < maxDepth && p.checkObject(depth+1)
	case c == '[':
		return depth < maxDepth && p.checkArray(depth+1)
	case c == '"':
		if p.lax {
			return p.validString()
		}
		_, ok := p.canonicalString()
		return ok
	case c == '-' || '0' <= c && c <= '9':
		if p.lax {
			return p.scanNumber() == nil
		}
		return p.canonicalNumber()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
			p.pos += len(lit)
			return true
		}
	}
	return false
}

// checkObject checks an object. Canonically: no white space, and each
// member's name after the one before it in UTF-16 order, which also
// refuses a name given twice.
func (p *parser) checkObject(depth int) bool {
	p.pos++ // {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return true
	}
	var prev []byte
	for first := true; ; first = false {
		start := p.pos
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return false
		}
		if p.lax {
			if !p.validString() {
				return false
			}
		} else {
			escaped, ok := p.canonicalString()
			if !ok {
				return false
			}
			name := p.data[start+1 : p.pos-1]
			if escaped {
				// Rare: a name with a control character, '"' or '\'.
				q := &parser{data: p.data[start:p.pos]}
				s, err := q.str()
				if err != nil {
					return false
				}
				name = []byte(s)
			}
			if !first && !lessUTF16(prev, name) {
				return false
			}
			prev = name
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		p.space()
		if !p.check(depth) {
			return false
		}
		if done, ok := p.next('}'); done || !ok {
			return ok
		}
	}
}

func (p *parser) checkArray(depth int) bool {
	p.pos++ // [
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return true
	}
	for {
		if !p.check(depth) {
			return false
		}
		if done, ok := p.next(']'); done || !ok {
			return ok
		}
	}
}

// next moves past what follows a member or an element: the container's
// end (done), or a comma (and, with p.lax, the white space around them);
// anything else is refused.
func (p *parser) next(end byte) (done, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch p.data[p.pos] {
	case end:
		p.pos++
		return true, true
	case ',':
		p.pos++
		p.space()
		return false, true
	}
	return false, false
}

// space moves past white space where the text may have it: nowhere in
// canonical JSON.
func (p *parser) space() {
	if p.lax {
		p.skipSpace()
	}
}

// canonicalString checks a string is escaped as writeString escapes it:
// '"' and '\' and the control characters alone, with JSON's short forms
// where it has them and \u00xx (lower-case hex) for the rest. (data is
// valid UTF-8, so it holds no lone surrogate.) It reports whether the
// string has an escape.
func (p *parser) canonicalString() (escaped, ok bool) {
	const hex = "0123456789abcdef"
	for p.pos++; p.pos < len(p.data); p.pos++ {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return escaped, true
		case c < 0x20:
			return escaped, false
		case c != '\\':
			continue
		}
		escaped = true
		if p.pos+1 >= len(p.data) {
			return escaped, false
		}
		switch p.data[p.pos+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			p.pos++
		case 'u':
			u := p.data[p.pos+2:]
			if len(u) < 4 || u[0] != '0' || u[1] != '0' || u[2] != '0' && u[2] != '1' || bytes.IndexByte([]byte(hex), u[3]) < 0 {
				return escaped, false
			}
			switch string(u[2:4]) {
			case "08", "09", "0a", "0c", "0d": // \b \t \n \f \r
				return escaped, false
			}
			p.pos += 5
		default:
			return escaped, false
		}
	}
	return escaped, false
}

// maxExactDigits: an integer of this many digits or fewer is a double
// exactly, and written as its digits.
const maxExactDigits = 15

// canonicalNumber checks a number is written as ECMAScript writes its
// double: an integer of a few digits at once, anything else through
// canonicalNumber.
func (p *parser) canonicalNumber() bool {
	start := p.pos
	if p.scanNumber() != nil {
		return false
	}
	lit := p.data[start:p.pos]
	digits := lit
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) <= maxExactDigits && bytes.IndexAny(digits, ".eE") < 0 {
		return string(lit) != "-0"
	}
	canon, _, err := canonicalNumber(string(lit))
	return err == nil && canon == string(lit)
}
