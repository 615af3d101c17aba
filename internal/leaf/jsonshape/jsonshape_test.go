package jsonshape

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestMeasure(t *testing.T) {
	for _, c := range []struct {
		in            string
		values, depth int
	}{
		{``, 0, 0},
		{` `, 0, 0},
		{`1`, 1, 0},
		{`"a,b[{"`, 1, 0},
		{`"a\"],"`, 1, 0},
		{`[]`, 1, 1},
		{`{}`, 1, 1},
		{` [ ] `, 1, 1},
		{`[1]`, 2, 1},
		{`[1, 2, 3]`, 4, 1},
		{`{"a": 1, "b": [], "c": {}}`, 4, 2},
		{`[{},{},{}]`, 4, 2},
		{`[[[[]]]]`, 4, 4},
		{`{"a,":"[\\","b":null}`, 3, 1},
		{`{"title":"x","tags":[]}`, 3, 2},
	} {
		v, d := Measure([]byte(c.in))
		if v != c.values || d != c.depth {
			t.Errorf("Measure(%s) = %d values, %d deep; want %d, %d", c.in, v, d, c.values, c.depth)
		}
	}
}

// TestMeasureAllocates: measuring a dense text allocates nothing.
func TestMeasureAllocates(t *testing.T) {
	b := []byte("[" + strings.Repeat("{},", 1<<16) + "{}]")
	if n := testing.AllocsPerRun(10, func() { Measure(b) }); n != 0 {
		t.Errorf("Measure allocated %v times", n)
	}
}

// FuzzMeasure: for any JSON text, Measure counts the values and depth a
// decoder reads, token by token; for any text, a decoder reads from its
// start no more values, nor deeper, than Measure counts.
func FuzzMeasure(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}],"c":{}}`, `[[],[[]],{}]`, `"\\\""`, `1 2`, `[1,]`, `{"a":1}}]`, `"abc`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		values, depth := Measure(b)
		v, d, err := decoded(b)
		if json.Valid(b) && (err != nil || v != values || d != depth) {
			t.Fatalf("Measure(%q) = %d values, %d deep; a decoder reads %d, %d (%v)", b, values, depth, v, d, err)
		}
		if v > values || d > depth {
			t.Fatalf("Measure(%q) = %d values, %d deep; a decoder reads %d, %d of its first value", b, values, depth, v, d)
		}
	})
}

// decoded counts the values, and their depth, of the first JSON value a
// decoder reads from b, as far as it reads.
func decoded(b []byte) (values, depth int, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return values, depth, nil
		}
		if err != nil {
			return values, depth, err
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = !stack[n-1].wantKey
				if !stack[n-1].wantKey {
					continue // a key
				}
			}
			values++
			if tok == json.Delim('{') || tok == json.Delim('[') {
				stack = append(stack, frame{object: tok == json.Delim('{'), wantKey: true})
				depth = max(depth, len(stack))
			}
		}
		if len(stack) == 0 {
			return values, depth, nil // the decoder reads one value
		}
	}
}

// TestCounter: a text counted in pieces, cut anywhere (inside a string,
// between an escape and what it escapes), counts as Measure counts it
// whole.
func TestCounter(t *testing.T) {
	for _, s := range []string{
		`{}`, `[{},{},[1,2,"a,b"]]`, `{"a":"x\"y,[{","b":[1,{"c":null}]}`, ` [ 1 , [ ] , { } ] `, `"a\\",1`,
	} {
		wantV, wantD := Measure([]byte(s))
		for cut := 0; cut <= len(s); cut++ {
			var c Counter
			c.Write([]byte(s[:cut]))
			c.Write([]byte(s[cut:]))
			if c.Values != wantV || c.Depth != wantD {
				t.Errorf("%q cut at %d: %d values, depth %d; Measure says %d, %d", s, cut, c.Values, c.Depth, wantV, wantD)
			}
		}
	}
}
