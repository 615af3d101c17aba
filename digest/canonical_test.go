package digest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCanonicalNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"0.0", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"0.1", "0.1"},
		{"-1.5", "-1.5"},
		{"0.000001", "0.000001"},
		{"1e-7", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"123e18", "123000000000000000000"},
		{"9007199254740992", "9007199254740992"},
		{"-9007199254740992", "-9007199254740992"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"333333333.3333333", "333333333.3333333"},
		{"18014398509481984", "18014398509481984"}, // 2^54: exact, and written back the same
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestCanonicalRejectsInexactNumbers: no number is rounded silently.
func TestCanonicalRejectsInexactNumbers(t *testing.T) {
	for _, in := range []string{
		"9007199254740993",           // 2^53 + 1
		"-9007199254740993",          //
		"18446744073709551616",       // 2^64: a double, but written back as 18446744073709552000
		"333333333.33333331",         // reads as 333333333.3333333
		"3.141592653589793238462643", // more digits than a double keeps
		"1e400",                      // overflow
		"1e-400",                     // underflow
		"1e-1000000000",              // must fail fast, not compute 10^1e9
		"0.1000000000000000000000001",
	} {
		_, err := Canonical([]byte(in))
		if err == nil {
			t.Errorf("%s: accepted, want an error", in)
		} else if !strings.Contains(err.Error(), "double") {
			t.Errorf("%s: error %q does not say why", in, err)
		}
	}
}

func TestCanonicalStructure(t *testing.T) {
	tests := []struct{ in, want string }{
		{` { "b" : 1 , "a" : [ true , false , null ] } `, `{"a":[true,false,null],"b":1}`},
		// Members sort by UTF-16 code units: U+1F600 (D83D DE00) before
		// U+FB33, which UTF-8 or code point order would reverse.
		{`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
			"{\"\\r\":2,\"1\":4,\"\u0080\":6,\"\u00f6\":7,\"\u20ac\":1,\"\U0001F600\":5,\"\ufb33\":3}"},
		{`"\u0041\/\u00e9\u2028\u001f\b\f\n\r\t\"\\"`, "\"A/\u00e9\u2028\\u001f\\b\\f\\n\\r\\t\\\"\\\\\""},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{"a":{"d":1,"c":{}}}`, `{"a":{"c":{},"d":1}}`},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1,"a":2}`, `duplicate member name "a"`},
		{"\"\xff\"", "not valid UTF-8"},
		{`{"a":1} 2`, "data after the value"},
		{`{"a":`, "unexpected end of input"},
		{`{"a":[1,2`, "unexpected end of input"},
		{``, "unexpected end of input"},
		{`{"a":01}`, "leading zero"},
		{`{"a":1.}`, "no digits after '.'"},
		{`[1e]`, "no digits in the exponent"},
		{`"\ud800"`, "lone surrogate"},
		{`"\udc00\ud800"`, "lone surrogate"},
		{`"\ud800\u0041"`, "lone surrogate"},
		{`"\x"`, "invalid escape"},
		{"\"a\tb\"", "control character"},
		{`[tru]`, "looking for a value"},
		{`{"a" 1}`, "want ':'"},
		{`{"a":1 "b":2}`, "want ',' or '}'"},
		{`{1:2}`, "member name"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "nested deeper"},
		{`{"a":{"b":1e999}}`, "/a/b: number 1e999"},
	}
	for _, tt := range tests {
		_, err := Canonical([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got error %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

// FuzzCanonical: canonicalising never panics, yields valid JSON, and is
// idempotent. Seeds are in testdata/fuzz/FuzzCanonical too.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,2e-7,"x"]}`, `"\u00e9\ud83d\ude00"`, `[1e21,-0,0.1]`, `{"":{"":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonical(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form is not JSON: %q", out)
		}
		// Differential check against encoding/json: the canonical form
		// holds the same value.
		var before, after any
		if err := json.Unmarshal(data, &before); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("canonical form changed the value:\n%q\n%q", data, out)
		}
		again, err := Canonical(out)
		if err != nil {
			t.Fatalf("canonical form %q does not canonicalise: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
	})
}

// BenchmarkCanonical1MiB canonicalises 1 MiB of JSON objects.
func BenchmarkCanonical1MiB(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"string","maxLength":120,"description":"A field of the record, as printed.","enum":["x","y"],"minimum":1.50}`)
	}
	sb.WriteString("]")
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(data); err != nil {
			b.Fatal(err)
		}
	}
}
