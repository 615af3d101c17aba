package journal

import (
	"bytes"
	"fmt"
	"slices"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/userfile"
)

// The functions here walk valid JSON, so a value's end is found by
// counting brackets outside strings.

// valueEnd returns the index just after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default:
		for i < len(b) && !endsLiteral(b[i]) {
			i++
		}
		return i
	}
}

func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// stringEnd returns the index just after the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

var refPrefix = []byte(`{"$value":`)

// refShaped reports whether a canonical value is an object whose only
// member is "$value": a reference, in a position that may hold one.
func refShaped(v []byte) bool {
	return bytes.HasPrefix(v, refPrefix) && len(v) > len(refPrefix) && valueEnd(v, len(refPrefix)) == len(v)-1
}

// slots calls f for each place of a canonical request object that may
// hold a reference: each top-level member's value, or, for an array, each
// of its elements. Between calls, f's out receives the bytes that
// surround those places unchanged, so that writing v for each slot
// rebuilds the object.
func slots(c []byte, out []byte, f func(out []byte, at slot, v []byte) ([]byte, error)) ([]byte, error) {
	out = append(out, '{')
	i := 1
	for c[i] != '}' {
		if c[i] == ',' {
			out = append(out, ',')
			i++
		}
		k := stringEnd(c, i)
		name := c[i:k]
		out = append(out, name...)
		out = append(out, ':')
		i = k + 1
		end := valueEnd(c, i)
		var err error
		if c[i] != '[' {
			if out, err = f(out, slot{name, -1}, c[i:end]); err != nil {
				return nil, err
			}
			i = end
			continue
		}
		out = append(out, '[')
		for p, n := i+1, 0; c[p] != ']'; n++ {
			if c[p] == ',' {
				out = append(out, ',')
				p++
			}
			q := valueEnd(c, p)
			if out, err = f(out, slot{name, n}, c[p:q]); err != nil {
				return nil, err
			}
			p = q
		}
		out = append(out, ']')
		i = end
	}
	return append(out, '}'), nil
}

// slot names a place of a request that may hold a reference, for errors.
type slot struct {
	name  []byte // quoted, as in the JSON text
	index int    // -1 for the member's value itself
}

func (s slot) String() string {
	if s.index < 0 {
		return fmt.Sprintf("request member %s", s.name)
	}
	return fmt.Sprintf("request member %s element %d", s.name, s.index)
}

// part is a value a shredded request refers to.
type part struct {
	digest string
	json   []byte // canonical
}

// shred replaces the long and the reference-shaped values in the slots of
// a canonical request object by references, and returns the values.
func shred(c []byte) ([]byte, []part) {
	var parts []part
	out, _ := slots(c, make([]byte, 0, 256), func(out []byte, _ slot, v []byte) ([]byte, error) {
		if len(v) <= refLimit && !refShaped(v) {
			return append(out, v...), nil
		}
		d := sum(valueHash, v)
		parts = append(parts, part{d, v})
		out = append(out, refPrefix...)
		out = append(out, '"')
		out = append(out, d...)
		return append(out, '"', '}'), nil
	})
	return out, parts
}

// A Budget bounds the bytes of requests, their value references
// replaced, that a reader expands of many entries and keeps (a page that
// shows every model call's messages): each ExpandRequest given it spends
// what it makes. A reader that expands one request at a time and lets it
// go needs none: MaxRequest bounds each.
type Budget struct {
	Max int64
	// What names what is bounded, for errors: "the requests a page
	// shows".
	What string
	used int64
}

// pick returns the object of the members of a canonical object that are
// named, in canonical form too.
func pick(c []byte, names []string) []byte {
	out := []byte{'{'}
	for i := 1; c[i] != '}'; {
		if c[i] == ',' {
			i++
		}
		k := stringEnd(c, i)
		end := valueEnd(c, k+1)
		if name, err := unquote(c[i:k]); err == nil && slices.Contains(names, name) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, c[i:end]...)
		}
		i = end
	}
	return append(out, '}')
}

// expandedSize returns the size of a canonical shredded request, its
// references replaced by the values they name, refusing a reference to a
// value not among values, a request larger than MaxRequest, and one larger
// than what b, if not nil, has left. With values nil, the request holds
// no references: an object with the single member "$value" is data.
func expandedSize(c []byte, values map[string][]byte, b *Budget) (int64, error) {
	size := int64(len(c))
	if values == nil {
		return size, checkSize(slot{}, size, b)
	}
	_, err := slots(c, make([]byte, 0, 128), func(out []byte, at slot, v []byte) ([]byte, error) {
		if !refShaped(v) {
			return out[:0], nil
		}
		val, err := resolve(at, v, values)
		if err != nil {
			return nil, err
		}
		size += int64(len(val) - len(v))
		return out[:0], checkSize(at, size, b)
	})
	return size, err
}

func checkSize(at slot, size int64, b *Budget) error {
	if size <= MaxRequest && (b == nil || b.used+size <= b.Max) {
		return nil
	}
	where := ""
	if at.name != nil {
		where = at.String() + ": "
	}
	if size > MaxRequest {
		return fmt.Errorf("%sthe request, its value references replaced, is larger than the %s a request may be", where, userfile.Size(MaxRequest))
	}
	return fmt.Errorf("%s%s, their value references replaced, come to more than %s", where, b.What, userfile.Size(b.Max))
}

// unshred replaces the references of a canonical shredded request by the
// values they name (see expandedSize), counting the size before anything
// is made, and spends it from b.
func unshred(c []byte, values map[string][]byte, b *Budget) ([]byte, error) {
	size, err := expandedSize(c, values, b)
	if err != nil {
		return nil, err
	}
	if b != nil {
		b.used += size
	}
	if values == nil {
		return c, nil
	}
	return slots(c, make([]byte, 0, size), func(out []byte, _ slot, v []byte) ([]byte, error) {
		if !refShaped(v) {
			return append(out, v...), nil
		}
		val, _ := resolve(slot{}, v, values) // found by expandedSize
		return append(out, val...), nil
	})
}

func resolve(at slot, ref []byte, values map[string][]byte) ([]byte, error) {
	s := ref[len(refPrefix) : len(ref)-1]
	if len(s) < 2 || s[0] != '"' {
		return nil, fmt.Errorf("%s holds a malformed value reference %s", at, ref)
	}
	// The values' keys are digests their lines were checked to have, and
	// a canonical string holds a digest unescaped: one found is one.
	if val, ok := values[string(s[1:len(s)-1])]; ok {
		return val, nil
	}
	d, err := digest.Parse(string(s[1 : len(s)-1]))
	if err != nil {
		return nil, fmt.Errorf("%s holds a malformed value reference: %v", at, err)
	}
	val, ok := values[string(d)]
	if !ok {
		return nil, fmt.Errorf("%s refers to value %s, which no earlier line holds", at, d)
	}
	return val, nil
}
