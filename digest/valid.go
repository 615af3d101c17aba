package digest

// Valid reports whether data is one JSON text, with white space around it
// allowed: exactly when encoding/json's Valid does, on every input (it
// does not check strings for UTF-8, and refuses nesting deeper than
// 10,000). It reads data once and allocates nothing on a valid text, for
// readers that check long lines before splitting them by hand:
// encoding/json's scanner takes a call a byte, this a loop a string.
func Valid(data []byte) bool {
	p := &parser{data: data}
	p.skipSpace()
	if !p.validValue(0) {
		return false
	}
	p.skipSpace()
	return p.pos == len(p.data)
}

// validValue moves past a value and reports whether it is JSON. depth is
// how many arrays and objects hold it.
func (p *parser) validValue(depth int) bool {
	if p.pos >= len(p.data) {
		return false
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return depth < maxDepth && p.validObject(depth+1)
	case c == '[':
		return depth < maxDepth && p.validArray(depth+1)
	case c == '"':
		return p.validString()
	case c == '-' || '0' <= c && c <= '9':
		return p.scanNumber() == nil
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit {
			p.pos += len(lit)
			return true
		}
	}
	return false
}

func (p *parser) validObject(depth int) bool {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return true
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' || !p.validString() {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		p.skipSpace()
		if !p.validValue(depth) {
			return false
		}
		if done, ok := p.validNext('}'); done || !ok {
			return ok
		}
	}
}

func (p *parser) validArray(depth int) bool {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return true
	}
	for {
		if !p.validValue(depth) {
			return false
		}
		if done, ok := p.validNext(']'); done || !ok {
			return ok
		}
	}
}

// validNext moves past what follows a member or an element, white space
// included: the container's end (done), or a comma.
func (p *parser) validNext(end byte) (done, ok bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch p.data[p.pos] {
	case end:
		p.pos++
		return true, true
	case ',':
		p.pos++
		p.skipSpace()
		return false, true
	}
	return false, false
}

// validString moves past a string: no control character in it, and each
// escape one of JSON's (a \u escape any four hex digits, a lone surrogate
// too, as encoding/json takes it).
func (p *parser) validString() bool {
	data := p.data
	for i := p.pos + 1; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			p.pos = i + 1
			return true
		case c < 0x20:
			return false
		case c != '\\':
			continue
		}
		if i+1 >= len(data) {
			return false
		}
		switch data[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if len(data)-i < 6 {
				return false
			}
			for _, h := range data[i+2 : i+6] {
				if !isHex(h) {
					return false
				}
			}
			i += 5
		default:
			return false
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
