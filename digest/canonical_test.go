package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
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
		// RFC 8785 rounds to the nearest double, as ECMAScript's JSON.parse.
		{"333333333.33333329", "333333333.3333333"},
		{"9223372036854775807", "9223372036854776000"},
		{"9007199254740993", "9007199254740992"}, // 2^53+1, a tie, to even
		{"-9007199254740993", "-9007199254740992"},
		{"18446744073709551616", "18446744073709552000"},
		{"3.141592653589793238462643", "3.141592653589793"},
		{"0.1000000000000000000000001", "0.1"},
		{"1.7976931348623158e308", "1.7976931348623157e+308"}, // below the midpoint to 2^1024
		{"2.4703282292062328e-324", "5e-324"},                 // above half the smallest double
		{"2.4703282292062327e-324", "0"},                      // below it
		{"-2.4703282292062327e-324", "0"},
		{"1e-400", "0"},
		{"-1e-400", "0"},
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

func TestCanonicalNumber(t *testing.T) {
	tests := []struct {
		lit, canon string
		exact      bool
	}{
		{"0", "0", true},
		{"-0", "0", true},
		{"-0.000e-7", "0", true},
		{"1.0", "1", true},
		{"1e0", "1", true},
		{"100e-2", "1", true},
		{"0.01e2", "1", true},
		{"1E+2", "100", true},
		{"0.1", "0.1", true}, // the decimal written, though the double is not 1/10
		{"1e21", "1e+21", true},
		{"1e-7", "1e-7", true},
		{"-1.5e-7", "-1.5e-7", true},
		{"5e-324", "5e-324", true},
		{"123456789012345680000", "123456789012345680000", true},
		{"333333333.33333329", "333333333.3333333", false},
		{"9007199254740993", "9007199254740992", false},
		{"9223372036854775807", "9223372036854776000", false},
		{"12345678901234567890", "12345678901234567000", false},
		{"4.9406564584124654e-324", "5e-324", false},
		{"1e-400", "0", false},
		{"-1e-400", "0", false},
		{"1.7976931348623158e308", "1.7976931348623157e+308", false},
	}
	for _, tt := range tests {
		canon, exact, err := CanonicalNumber(tt.lit)
		if err != nil || canon != tt.canon || exact != tt.exact {
			t.Errorf("CanonicalNumber(%s) = %s, %v, %v; want %s, %v, nil", tt.lit, canon, exact, err, tt.canon, tt.exact)
		}
	}
}

func TestCanonicalNumberErrors(t *testing.T) {
	tests := []struct{ lit, want string }{
		{"1e400", "number 1e400: outside the range of an IEEE-754 double"},
		{"-1e400", "number -1e400: outside the range of an IEEE-754 double"},
		{"1e309", "number 1e309: outside the range"},
		{"1.7976931348623159e308", "outside the range"}, // rounds to 2^1024
		{"1" + strings.Repeat("0", 400), "number 100000000000000000000000...00000000 (401 characters): outside the range"},
		{"", `"" is not a JSON number`},
		{"+1", `"+1" is not a JSON number`},
		{"01", `"01" is not a JSON number`},
		{"1.", `"1." is not a JSON number`},
		{".5", `".5" is not a JSON number`},
		{"1e", `"1e" is not a JSON number`},
		{"1 ", `"1 " is not a JSON number`},
		{"-", `"-" is not a JSON number`},
		{"NaN", `"NaN" is not a JSON number`},
		{"Infinity", `"Infinity" is not a JSON number`},
		{"0x10", `"0x10" is not a JSON number`},
		{"1_000", `"1_000" is not a JSON number`},
		// Up to 40 characters a literal is quoted whole, past that clipped.
		{"+" + strings.Repeat("1", 39), `"+` + strings.Repeat("1", 39) + `" is not a JSON number`},
		{"+" + strings.Repeat("1", 40), `"+` + strings.Repeat("1", 23) + `...11111111 (41 characters)" is not a JSON number`},
	}
	for _, tt := range tests {
		canon, exact, err := CanonicalNumber(tt.lit)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CanonicalNumber(%q) = %q, %v, %v; want an error containing %q", tt.lit, canon, exact, err, tt.want)
		}
	}
}

// TestHugeExponents: an exponent of any size costs nothing, never overflows
// an integer, and leaves the value right even where strconv.ParseFloat,
// which saturates exponents at 10000, would read it wrong.
func TestHugeExponents(t *testing.T) {
	zeros := strings.Repeat("0", 20000)
	tests := []struct {
		lit, canon string
		exact      bool
		err        bool
	}{
		{lit: "1e999999999999", err: true},
		{lit: "-1e999999999999", err: true},
		{lit: "1e9223372036854775807", err: true},
		{lit: "1e9223372036854775808", err: true},
		{lit: "1e92233720368547758080", err: true},
		{lit: "1e" + strings.Repeat("9", 1000), err: true},
		{lit: "1e-999999999999", canon: "0"},
		{lit: "1e-9223372036854775808", canon: "0"},
		{lit: "1e-9223372036854775809", canon: "0"},
		{lit: "1e-" + strings.Repeat("9", 1000), canon: "0"},
		{lit: "0e999999999999", canon: "0", exact: true},
		{lit: "-0.0e-9223372036854775809", canon: "0", exact: true},
		{lit: "1" + zeros + "e-20000", canon: "1", exact: true},
		{lit: "0." + zeros + "1e20001", canon: "1", exact: true},
		{lit: "0." + zeros + "15e20001", canon: "1.5", exact: true},
		{lit: "1" + zeros + "e-19980", canon: "100000000000000000000", exact: true},
		{lit: "1" + zeros + "e-19979", canon: "1e+21", exact: true},
		{lit: "1" + zeros, err: true},
		{lit: "0." + zeros + "1", canon: "0"},
	}
	for _, tt := range tests {
		canon, exact, err := CanonicalNumber(tt.lit)
		if tt.err {
			if err == nil || !strings.Contains(err.Error(), "outside the range") {
				t.Errorf("CanonicalNumber(%s) = %s, %v, %v; want an overflow error", clip(tt.lit), canon, exact, err)
			}
			continue
		}
		if err != nil || canon != tt.canon || exact != tt.exact {
			t.Errorf("CanonicalNumber(%s) = %s, %v, %v; want %s, %v, nil", clip(tt.lit), canon, exact, err, tt.canon, tt.exact)
		}
	}
	// A cheap guard, not exact arithmetic on 10^exponent.
	if n := testing.AllocsPerRun(10, func() { CanonicalNumber("1.5e-999999999999") }); n > 8 {
		t.Errorf("CanonicalNumber of a huge exponent: %v allocations", n)
	}
}

// TestCanonicalExact: CanonicalExact refuses what Canonical rounds, and
// otherwise agrees with it.
func TestCanonicalExact(t *testing.T) {
	for _, in := range []string{`[1.0,1e0,0.1,-0,1e21,5e-324]`, `{"a":{"b":100e-2}}`} {
		want, err := Canonical([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := CanonicalExact([]byte(in))
		if err != nil || string(got) != string(want) {
			t.Errorf("CanonicalExact(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	tests := []struct{ in, want string }{
		{`{"a":[1,9007199254740993]}`, "canonical JSON: /a/1: number 9007199254740993 is not exactly an IEEE-754 double (it would become 9007199254740992)"},
		{`333333333.33333329`, "canonical JSON: /: number 333333333.33333329 is not exactly an IEEE-754 double (it would become 333333333.3333333)"},
		{`[1e-400]`, "canonical JSON: /0: number 1e-400 is not exactly an IEEE-754 double (it would become 0)"},
		{`{"n":1e400}`, "canonical JSON: /n: number 1e400: outside the range of an IEEE-754 double"},
	}
	for _, tt := range tests {
		_, err := CanonicalExact([]byte(tt.in))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("CanonicalExact(%s): error %v, want %q", tt.in, err, tt.want)
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

// TestMemberOrder: names sort by UTF-16 code units, a name before every
// longer name it starts, and U+0000 after the end of a name.
func TestMemberOrder(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"ab":1,"a":2}`, `{"a":2,"ab":1}`},
		{`{"a":2,"ab":1}`, `{"a":2,"ab":1}`},
		{`{"abc":1,"ab":2,"a":3,"":4}`, `{"":4,"a":3,"ab":2,"abc":1}`},
		{`{"a\u0000":1,"a":2}`, `{"a":2,"a\u0000":1}`},
		{`{"\u0000":1,"":2}`, `{"":2,"\u0000":1}`},
		{`{"\u0000\u0000":1,"\u0000":2,"\u0001":3}`, `{"\u0000":2,"\u0000\u0000":1,"\u0001":3}`},
		{`{"b":1,"a\uffff":2,"a":3}`, "{\"a\":3,\"a\uffff\":2,\"b\":1}"},
		// Beyond U+FFFF: U+1F600 is D83D DE00, so it sorts after U+D7FF and
		// before U+E000 and U+FFFF, though its code point is larger.
		{`{"\uffff":1,"\ud83d\ude00":2,"\ue000":3,"\ud7ff":4}`, "{\"\ud7ff\":4,\"\U0001F600\":2,\"\ue000\":3,\"\uffff\":1}"},
		// Same high surrogate: the low one decides.
		{`{"\ud83d\ude01":1,"\ud83d\ude00":2}`, "{\"\U0001F600\":2,\"\U0001F601\":1}"},
		// Different high surrogates: U+10400 (D801 DC00) after U+103FF (D800 DFFF).
		{`{"\ud801\udc00":1,"\ud800\udfff":2}`, "{\"\U000103FF\":2,\"\U00010400\":1}"},
		{`{"x\ud83d\ude00":1,"x\ue000":2,"x":3}`, "{\"x\":3,\"x\U0001F600\":1,\"x\ue000\":2}"},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// orderRunes are where UTF-8, code point and UTF-16 orders meet or part.
var orderRunes = []rune{0, 1, 'a', 'b', 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfb33, 0xffff,
	0x10000, 0x103ff, 0x10400, 0x1f600, 0x1f601, 0x1f7ff, 0x1f800, 0x10fc00, 0x10ffff}

// lessUTF16Ref compares the UTF-16 encodings themselves.
func lessUTF16Ref(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub) < 0
}

func TestLessUTF16(t *testing.T) {
	var strs []string
	strs = append(strs, "")
	for _, r := range orderRunes {
		strs = append(strs, string(r))
		for _, r2 := range []rune{0, 'a', 0xffff, 0x1f600} {
			strs = append(strs, string(r)+string(r2), string(r2)+string(r))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var sb strings.Builder
		for range rng.IntN(4) {
			sb.WriteRune(orderRunes[rng.IntN(len(orderRunes))])
		}
		strs = append(strs, sb.String())
	}
	for _, a := range strs {
		for _, b := range strs[:200] {
			if got, want := lessUTF16(a, b), lessUTF16Ref(a, b); got != want {
				t.Fatalf("lessUTF16(%+q, %+q) = %v, want %v", a, b, got, want)
			}
			if got, want := lessUTF16(b, a), lessUTF16Ref(b, a); got != want {
				t.Fatalf("lessUTF16(%+q, %+q) = %v, want %v", b, a, got, want)
			}
			if got, want := lessUTF16([]byte(a), []byte(b)), lessUTF16Ref(a, b); got != want {
				t.Fatalf("lessUTF16([]byte(%+q), []byte(%+q)) = %v, want %v", a, b, got, want)
			}
		}
	}
}

// TestDepth: maxDepth levels of arrays or objects are accepted, one more is
// not.
func TestDepth(t *testing.T) {
	tests := []struct {
		open, close string
		levels      int // per repetition
	}{
		{"[", "]", 1},
		{`{"a":`, "}", 1},
		{`[{"a":`, "}]", 2},
	}
	for _, tt := range tests {
		n := maxDepth / tt.levels
		in := strings.Repeat(tt.open, n) + "1" + strings.Repeat(tt.close, n)
		got, err := Canonical([]byte(in))
		if err != nil {
			t.Errorf("%s×%d: %v", tt.open, n, err)
		} else if string(got) != in {
			t.Errorf("%s×%d: changed", tt.open, n)
		}
		for _, deeper := range []string{"[" + in + "]", `{"b":` + in + "}"} {
			_, err = Canonical([]byte(deeper))
			if want := fmt.Sprintf("nested deeper than %d", maxDepth); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s×%d and one more level: error %v, want %q", tt.open, n, err, want)
			}
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
		{`[00]`, "leading zero"},
		{`[-09]`, "leading zero"},
		{`{"a":1.}`, "no digits after '.'"},
		{`[1e]`, "no digits in the exponent"},
		{`"\ud800"`, "lone surrogate"},
		{`"\udc00\ud800"`, `at byte 7: lone surrogate \udc00 in a string`}, // a low surrogate first is refused at once
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

// TestCanonicalTruncated: every proper prefix of a JSON text whose value is
// an object, an array or a string is refused as cut short, wherever the cut
// falls: in a name, between a name and its value, in an escape or a number.
// (A literal cut short, such as "tru", is an invalid character instead.)
func TestCanonicalTruncated(t *testing.T) {
	for _, text := range []string{
		`{"a":[1,-2.5e+3,"x\u00e9\n"],"b":{},"c":[]}`,
		` { "k" : [ 0 , 1E-2 ] , "s" : "\"" } `,
		`"plain"`,
		`[{"a":{}},[[],"x"]]`,
	} {
		if _, err := Canonical([]byte(text)); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for n := range len(strings.TrimRight(text, " ")) {
			_, err := Canonical([]byte(text[:n]))
			if err == nil || err.Error() != "canonical JSON: unexpected end of input" {
				t.Errorf("%q: error %v, want unexpected end of input", text[:n], err)
			}
		}
	}
}

// FuzzCanonical: canonicalising never panics; what it accepts,
// encoding/json accepts too; the canonical form is JSON, canonicalises to
// itself, and equals the form reference computes another way. CanonicalExact
// agrees with Canonical or refuses. Seeds are in testdata/fuzz/FuzzCanonical
// too.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,2e-7,"x"]}`, `"\u00e9\ud83d\ude00"`, `[1e21,-0,0.1]`, `{"":{"":null}}`,
		`[333333333.33333329,9223372036854775807,1e-400,1e400]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonical(data)
		if exact, errExact := CanonicalExact(data); errExact == nil && string(exact) != string(out) {
			t.Fatalf("CanonicalExact = %q, Canonical = %q, %v", exact, out, err)
		} else if err != nil && errExact == nil {
			t.Fatalf("CanonicalExact accepts what Canonical refuses: %v", err)
		}
		// IsCanonical against the canonical form built, not checked.
		var built []byte
		var errBuilt error = errors.New("not valid UTF-8")
		if utf8.Valid(data) {
			built, errBuilt = build(data, false)
		}
		if got, want := IsCanonical(data), errBuilt == nil && string(built) == string(data); got != want {
			t.Fatalf("IsCanonical(%q) = %v, but its canonical form built is %q, %v", data, got, built, errBuilt)
		}
		if (err == nil) != (errBuilt == nil) || string(out) != string(built) {
			t.Fatalf("Canonical(%q) = %q, %v; built: %q, %v", data, out, err, built, errBuilt)
		}
		if err != nil {
			return
		}
		if !IsCanonical(out) {
			t.Fatalf("IsCanonical(%q) = false for a canonical form", out)
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form is not JSON: %q", out)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		var ref bytes.Buffer
		if reference(&ref, v) && ref.String() != string(out) {
			t.Fatalf("canonical form of %q:\n got %q\nwant %q", data, out, ref.Bytes())
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

// reference writes the canonical form of a value that encoding/json decoded
// (numbers as json.Number) by other means than Canonical: members sorted by
// their UTF-16 encodings, strings escaped a character at a time, numbers
// read by strconv.ParseFloat and written as upstream's numgen.go writes
// them. It reports false when it cannot tell: strconv.ParseFloat misreads
// exponents of 10000 and more.
func reference(b *bytes.Buffer, v any) bool {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Collect(maps.Keys(v))
		slices.SortFunc(keys, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			referenceString(b, k)
			b.WriteByte(':')
			if !reference(b, v[k]) {
				return false
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if !reference(b, e) {
				return false
			}
		}
		b.WriteByte(']')
	case string:
		referenceString(b, v)
	case json.Number:
		if i := strings.IndexAny(string(v), "eE"); i >= 0 {
			if e, err := strconv.Atoi(strings.TrimLeft(string(v)[i+1:], "+-")); err != nil || e >= 10000 {
				return false
			}
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return false
		}
		if f == 0 {
			f = 0 // not -0
		}
		form := byte('f')
		if abs := math.Abs(f); abs != 0 && abs < 1e-6 || abs >= 1e21 {
			form = 'e'
		}
		s := strconv.FormatFloat(f, form, -1, 64)
		if form == 'e' {
			// Go writes e-07 and e+21; ECMAScript e-7 and e+21.
			mant, exp, _ := strings.Cut(s, "e")
			s = mant + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
		}
		b.WriteString(s)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("reference: %T", v))
	}
	return true
}

func referenceString(b *bytes.Buffer, s string) {
	short := map[rune]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case short[r] != "":
			b.WriteString(short[r])
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// FuzzCanonicalNumber: a number RFC 8785 can write canonicalises to a
// number that is its own canonical form, exactly; the double is the one
// strconv.ParseFloat reads where it reads right; and exact is what exact
// rational arithmetic says.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.0", "1e0", "0.1", "1e21", "1e-7", "5e-324", "333333333.33333329",
		"9007199254740993", "1e400", "1e-400", "1e999999999999", "100e-2", "1.7976931348623158e308", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		canon, exact, err := CanonicalNumber(lit)
		if err != nil {
			return
		}
		if c2, e2, err := CanonicalNumber(canon); c2 != canon || !e2 || err != nil {
			t.Fatalf("CanonicalNumber(%q) = %q; and of that %q, %v, %v", lit, canon, c2, e2, err)
		}
		var v any
		if err := json.Unmarshal([]byte(canon), &v); err != nil {
			t.Fatalf("canonical form %q of %q is not JSON: %v", canon, lit, err)
		}
		e := 0 // the exponent written
		if i := strings.IndexAny(lit, "eE"); i >= 0 {
			if e, err = strconv.Atoi(lit[i+1:]); err != nil {
				return
			}
		}
		if e >= 10000 || e <= -10000 {
			return // beyond what strconv.ParseFloat reads right
		}
		want, _ := strconv.ParseFloat(lit, 64)
		if got, _ := strconv.ParseFloat(canon, 64); got != want && !(got == 0 && want == 0) {
			t.Fatalf("CanonicalNumber(%q) = %q, which is %v; strconv reads %v", lit, canon, got, want)
		}
		if e < 1000 && e > -1000 {
			a, _ := new(big.Rat).SetString(lit)
			b, _ := new(big.Rat).SetString(canon)
			if (a.Cmp(b) == 0) != exact {
				t.Fatalf("CanonicalNumber(%q) = %q, exact %v", lit, canon, exact)
			}
		}
	})
}

// BenchmarkCanonical1MiB canonicalises 1 MiB of JSON objects.
func BenchmarkCanonical1MiB(b *testing.B) {
	data := benchJSON()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIsCanonical1MiB checks the canonical form of the same objects.
func BenchmarkIsCanonical1MiB(b *testing.B) {
	data, err := Canonical(benchJSON())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if !IsCanonical(data) {
			b.Fatal("not canonical")
		}
	}
}

func benchJSON() []byte {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"string","maxLength":120,"description":"A field of the record, as printed.","enum":["x","y"],"minimum":1.50}`)
	}
	sb.WriteString("]")
	return []byte(sb.String())
}

// TestIsCanonical: each way a text can miss its canonical form.
func TestIsCanonical(t *testing.T) {
	yes := []string{`{}`, `[]`, `""`, `0`, `-1`, `123456789012345`, `1.5`, `1e+21`, `1e-7`, `-0.5`,
		`true`, `false`, `null`, `{"a":1,"b":[true,null,"x"]}`, `"\"\\\b\f\n\r\t\u0000\u001f"`,
		`{"\n":1,"a":2}`, `{"":0,"a":{"":[]}}`, "{\"😀\":1,\"\ufb33\":2}", `"é😀/<>&"`,
		`9007199254740992`, `{"a\\b":1,"a\\c":2}`, `{"a\nb":1}`}
	for _, s := range yes {
		if !IsCanonical([]byte(s)) {
			t.Errorf("IsCanonical(%q) = false", s)
		}
		if c, err := build([]byte(s), true); err != nil || string(c) != s {
			t.Errorf("the canonical form of %q built is %q, %v: the test's canonical text is not", s, c, err)
		}
	}
	no := []string{``, ` `, `{} `, ` {}`, `{ }`, `[1, 2]`, `{"a" :1}`, `{"b":1,"a":2}`, `{"a":1,"a":1}`,
		"{\"\ufb33\":1,\"😀\":2}", `-0`, `1.0`, `1E+21`, `1e21`, `0.10`, `1000000000000000000000`,
		`9007199254740993`, `"\/"`, `"\u00e9"`, `"\u000a"`, `"\u000A"`, `"\u001F"`, `"\u0020"`,
		`"\ud83d\ude00"`, "\"\x01\"", "\"\xff\"", `"abc`, `[1,]`, `{"a":1,}`, `{"a"}`, `nul`, `[`, `{"a":`,
		`{"a\u000ab":1,"a\u000bb":2}`, `01`, `1.`, `"\x"`, `{"a\\c":1,"a\\b":2}`}
	for _, s := range no {
		if IsCanonical([]byte(s)) {
			t.Errorf("IsCanonical(%q) = true", s)
		}
		if c, err := build([]byte(s), true); utf8.ValidString(s) && err == nil && string(c) == s {
			t.Errorf("the canonical form of %q built is itself: the test's text is canonical", s)
		}
	}
}
