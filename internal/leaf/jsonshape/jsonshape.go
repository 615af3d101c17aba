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

// ValueBytes is what each value of a JSON text weighs (Weight), beside
// its bytes: decoded and checked against a schema, a value holds a
// hundred bytes and more where its text took two or three (an 8 MiB
// array of zeros, 4 million values, held about 670 MB).
const ValueBytes = 128

// Weight is about what decoding the JSON text b and checking it against a
// schema holds: its bytes, or ValueBytes a value where that is more. A
// host reading many texts at once bounds the sum of their weights.
func Weight(b []byte) int64 {
	values, _ := Measure(b)
	return max(int64(len(b))+1, int64(values)*ValueBytes)
}

// Counter is Measure of a text given in pieces (Write), so that a reader
// can count a body's values as it passes, holding none of it. Values and
// Depth are Measure's of what was written so far.
type Counter struct {
	Values, Depth int

	d                         int
	opened, inString, escaped bool
}

// Write counts the values b holds, continuing the text written before.
func (c *Counter) Write(b []byte) {
	for _, ch := range b {
		if c.inString {
			switch {
			case c.escaped:
				c.escaped = false
			case ch == '\\':
				c.escaped = true
			case ch == '"':
				c.inString = false
			}
			continue
		}
		if ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' {
			continue
		}
		if c.Values == 0 {
			c.Values = 1
		}
		if c.opened && ch != ']' && ch != '}' {
			c.Values++
		}
		c.opened = false
		switch ch {
		case '"':
			c.inString = true
		case '{', '[':
			c.d++
			c.Depth = max(c.Depth, c.d)
			c.opened = true
		case '}', ']':
			c.d--
		case ',':
			c.Values++
		}
	}
}

// Reset starts the count again, for a new text.
func (c *Counter) Reset() { *c = Counter{} }
