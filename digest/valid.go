package digest

// Valid reports whether data is one JSON text, with white space around it
// allowed: exactly when encoding/json's Valid does, on every input (it
// does not check strings for UTF-8, and refuses nesting deeper than
// 10,000). It reads data once and allocates nothing on a valid text, for
// readers that check long lines before splitting them by hand:
// encoding/json's scanner takes a call a byte, this a loop a string.
func Valid(data []byte) bool {
	p := &parser{data: data, lax: true}
	p.skipSpace()
	if !p.check(0) {
		return false
	}
	p.skipSpace()
	return p.pos == len(p.data)
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
