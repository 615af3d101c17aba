// Package jsonshape measures a JSON text's shape, how many values it
// holds and how deep it nests, in one pass that allocates nothing: so
// that a server can refuse a text whose decoding would cost many times
// its bytes before anything decodes it.
package jsonshape

// Measure returns how many values the JSON text b holds (its top value,
// each array element and each object member's value, containers as well
// as scalars; an object's keys are not values) and how deep its arrays
// and objects nest (0 for a scalar). It does not check that b is JSON:
// for a text that is not, the counts are never fewer than those of the
// value a decoder would read from its start.
func Measure(b []byte) (values, depth int) {
	d := 0
	opened := false // the last byte outside whitespace opened an array or object
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if values == 0 {
			values = 1
		}
		// A container holds one value more than it has commas, unless
		// it is empty.
		if opened && c != ']' && c != '}' {
			values++
		}
		opened = false
		switch c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			d++
			depth = max(depth, d)
			opened = true
		case '}', ']':
			d--
		case ',':
			values++
		}
	}
	return values, depth
}
