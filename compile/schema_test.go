package compile

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue/token"
)

// TestAppendDoc: two documents get the same text exactly when they are the
// same JSON, number for number as written, whatever the order of members.
func TestAppendDoc(t *testing.T) {
	same := [][2]string{
		{`{"a":1,"b":[true,null,"x"]}`, `{"b":[true,null,"x"],"a":1}`},
		{`{"a":{"b":"c"}}`, `{ "a" : { "b" : "c" } }`},
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1e2}`, `{"a":100}`},
		{`{"a":[]}`, `{"a":{}}`},
		{`{"a":null}`, `{"a":false}`},
		{`{"ab":"c"}`, `{"a":"bc"}`},
		{`{"a\"":"b"}`, `{"a":"\"b"}`},
		{`["a","b"]`, `["ab"]`},
		{`[["a"],"b"]`, `[["a","b"]]`},
		{`{"a":{"b":1},"c":2}`, `{"a":{"b":1,"c":2}}`},
	}
	text := func(s string) []byte {
		var cs compiledSchemas
		b, ok := cs.appendDoc(nil, mustDoc(t, s))
		if !ok {
			t.Fatalf("%s: not a JSON document", s)
		}
		return b
	}
	for _, p := range same {
		if !bytes.Equal(text(p[0]), text(p[1])) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	for _, p := range differ {
		if bytes.Equal(text(p[0]), text(p[1])) {
			t.Errorf("%s and %s are the same", p[0], p[1])
		}
	}
	var cs compiledSchemas
	if _, ok := cs.appendDoc(nil, map[string]any{"a": 1}); ok {
		t.Error("a Go int is taken for a JSON value")
	}
}

// TestCompiledSchemas: a schema that compiled is not compiled again, and
// one that does not compile says why every time.
func TestCompiledSchemas(t *testing.T) {
	var cs compiledSchemas
	good := `{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`
	for range 2 {
		if err := cs.compile(mustDoc(t, good)); err != nil {
			t.Fatal(err)
		}
	}
	if len(cs.seen) != 1 {
		t.Errorf("%d schemas remembered, want 1", len(cs.seen))
	}
	bad := `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`
	for range 2 {
		if err := cs.compile(mustDoc(t, bad)); err == nil {
			t.Fatal("an invalid pattern compiled")
		}
	}
	if len(cs.seen) != 1 {
		t.Errorf("%d schemas remembered, want only the one that compiled", len(cs.seen))
	}
	if err := cs.compile(map[string]any{"minLength": 1}); err != nil || len(cs.seen) != 1 {
		t.Errorf("a document with a Go int: %v, %d remembered; want it compiled and not remembered", err, len(cs.seen))
	}
}

// TestSchemaPos: a pointer with no position of its own takes that of its
// nearest ancestor that has one.
func TestSchemaPos(t *testing.T) {
	at := func(name string) token.Pos { return token.NewFile(name, -1, 1).Pos(0, token.NoRelPos) }
	s := &Schema{Path: "output.schema", pos: map[string]token.Pos{
		"":                at("root"),
		"/properties":     at("properties"),
		"/properties/a":   token.NoPos,
		"/properties/a/b": at("b"),
	}}
	for _, tc := range []struct{ ptr, want string }{
		{"", "root"},
		{"/properties", "properties"},
		{"/properties/a/b", "b"},
		{"/properties/a", "properties"},
		{"/properties/a/minLength", "properties"},
		{"/items/0", "root"},
	} {
		if got := s.Pos(tc.ptr); !got.IsValid() || got.Filename() != tc.want {
			t.Fatalf("Pos(%q) = %v, want the position in %s", tc.ptr, got, tc.want)
		}
	}
	none := &Schema{Path: "output.schema", pos: map[string]token.Pos{"": token.NoPos}}
	if got := none.Pos("/type"); got.IsValid() {
		t.Errorf("Pos in a schema with no positions = %v, want none", got)
	}
}

// TestSchemaWhere renders JSON pointers as manifest paths: elements of
// lists in brackets, members that are not identifiers quoted, and a
// pointer past the end of a list as well as one into it.
func TestSchemaWhere(t *testing.T) {
	s := &Schema{Path: "output.schema", Doc: mustDoc(t, `{
		"allOf": [{"prefixItems": [{"type": "string"}, {}]}],
		"properties": {"a-b": {"items": [true]}, "_x1": {"enum": [[1, 2]]}},
		"$defs": {"x/y": {}}
	}`)}
	for _, tc := range []struct{ ptr, want string }{
		{"", "output.schema"},
		{"/allOf/0/prefixItems/1", "output.schema.allOf[0].prefixItems[1]"},
		{"/properties/a-b/items/0", `output.schema.properties."a-b".items[0]`},
		{"/properties/_x1/enum/0/1", "output.schema.properties._x1.enum[0][1]"},
		{"/$defs/x~1y", `output.schema.$defs."x/y"`},
		{"/allOf/1/type", "output.schema.allOf[1].type"},
		{"/allOf/0/prefixItems/2/type", "output.schema.allOf[0].prefixItems[2].type"},
		{"/allOf/-1", "output.schema.allOf[-1]"},
		{"/properties/1a", `output.schema.properties."1a"`},
	} {
		if got := s.where(tc.ptr); got != tc.want {
			t.Errorf("where(%q) = %s, want %s", tc.ptr, got, tc.want)
		}
	}
}

// TestIsIdent: a member written bare in a manifest path is a CUE
// identifier: ASCII letters, '_' and '$', and digits after the first
// character; anything else is quoted. Each bound of each range is taken,
// and the character past it.
func TestIsIdent(t *testing.T) {
	for _, s := range []string{"a", "z", "A", "Z", "_", "$", "$defs", "_0", "a0", "a9", "aZ", "Za"} {
		if !isIdent(s) {
			t.Errorf("isIdent(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"", "0", "9", "0a", "`", "{", "@", "[", "a/", "a:", "a-b", "é", "a b"} {
		if isIdent(s) {
			t.Errorf("isIdent(%q) = true, want false", s)
		}
	}
}

// TestIsDouble: a number is exactly a double when its decimal value is the
// double's, however many digits its canonical form drops (2^63, -2^63, the
// smallest subnormal written out in full), and not when a digit more or a
// range too wide for a double changes it.
func TestIsDouble(t *testing.T) {
	// The smallest subnormal, 2^-1074, written out exactly: 751 digits.
	tiny := new(big.Rat).SetFloat64(math.SmallestNonzeroFloat64).FloatString(1074)
	digits := strings.TrimLeft(strings.TrimPrefix(tiny, "0."), "0")
	exp := len(strings.TrimPrefix(tiny, "0.")) - len(digits)
	tinyLit := "0." + digits + "e-" + strconv.Itoa(exp)
	for _, tc := range []struct {
		lit  string
		want bool
	}{
		{"0", true},
		{"-0", true},
		{"1.5", true},
		{"0.1", false}, // 0.1 has no double; 0.1000000000000000055511151231257827 is the nearest
		{"9007199254740992", true},
		{"9007199254740993", false},     // 2^53 + 1
		{"9223372036854775808", true},   // 2^63
		{"-9223372036854775808", true},  // -2^63
		{"9223372036854775807", false},  // 2^63 - 1
		{"-9223372036854775809", false}, // -2^63 - 1
		{"9223372036854775808.0", true},
		{"92233720368547758.08e2", true},
		{"1.7976931348623157e308", false}, // the shortest form of the largest double, not its value
		{"179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368", true},
		{"1e400", false},
		{"-1e400", false},
		{"1e-400", false}, // underflows to 0
		{"5e-324", false}, // rounds to the smallest subnormal, which is not 5e-324
		{tinyLit, true},
		{strings.Replace(tinyLit, "625e-", "626e-", 1), false},
	} {
		if got := isDouble(json.Number(tc.lit)); got != tc.want {
			t.Errorf("isDouble(%s) = %v, want %v", clipLit(tc.lit), got, tc.want)
		}
	}
}

func clipLit(s string) string {
	if len(s) > 40 {
		return s[:20] + "..." + s[len(s)-12:]
	}
	return s
}
