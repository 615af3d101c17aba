package digest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// validCases are texts at the edges of JSON's grammar; each is checked
// against encoding/json's answer, not a hand-written one.
var validCases = []string{
	``, ` `, `null`, ` null `, "\t\r\n1\n", `nul`, `nulls`, `true`, `tru`, `false`, `falsey`, `True`,
	`0`, `-0`, `-`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `1.5e3`, `+1`, `1 2`, `0x1`,
	`""`, `"`, `"a`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\a"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00"`,
	`"\ud800"`, `"\udc00\ud800"`, "\"\x01\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"", `"\u"`, `"\`,
	`{}`, `{ }`, `{`, `}`, `{"a":1}`, `{ "a" : 1 , "b" : [ ] }`, `{"a":1,}`, `{,"a":1}`, `{"a"}`, `{"a":}`, `{a:1}`,
	`{"a":1 "b":2}`, `{"a":1}{}`, `{"a":1}x`, `{"a":{"a":{"a":[]}}}`, `{"a":1,"a":2}`, `{1:2}`,
	`[]`, `[ ]`, `[`, `]`, `[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `[[[]]]`, `[[]`, `[]]`, `[null,true,false,"",0,{}]`,
	"\xef\xbb\xbf{}", "\f{}", "{}\x00", "[1]\n\n",
}

func TestValid(t *testing.T) {
	deep := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	cases := append([]string(nil), validCases...)
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		cases = append(cases, deep("[", "", "]", n), deep(`{"a":`, "1", "}", n), deep(`[{"a":`, "[]", "}]", n/2))
	}
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, encoding/json says %v", c, got, want)
		}
	}
	// The depth bound is reached, on both sides of it.
	if !Valid([]byte(deep("[", "", "]", maxDepth))) || Valid([]byte(deep("[", "", "]", maxDepth+1))) {
		t.Errorf("the depth bound is not at %d", maxDepth)
	}
}

// FuzzValid: Valid answers as encoding/json does on every input. Seeds
// are in testdata/fuzz/FuzzValid too.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

// journalText is a line like a journal's: an entry whose request holds
// a conversation of messages, escapes and numbers among them.
func journalText() []byte {
	var b bytes.Buffer
	b.WriteString(`{"effect":"1.3","kind":"model","fingerprint":"blake3:00ff","request":{"messages":{"after":2,"new":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"content":"Ticket 4217 from acme: \"Login\" fails after a password reset\n\u00e9","role":"tool","tool_call_id":"call_1","n":[1.5,-2e10,0,true,null]}`)
	}
	b.WriteString(`]},"model":"m"},"response":{"message":{"role":"assistant"}},"started":"2026-12-03T22:39:00Z","duration_ms":3}`)
	return b.Bytes()
}

func TestValidAllocatesNothing(t *testing.T) {
	line := journalText()
	if !json.Valid(line) {
		t.Fatal("the test's line is not JSON")
	}
	if n := testing.AllocsPerRun(100, func() {
		if !Valid(line) {
			t.Fatal("Valid refuses the line")
		}
	}); n != 0 {
		t.Errorf("Valid allocates %v times on a valid line", n)
	}
}

func BenchmarkValid(b *testing.B) {
	line := journalText()
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"digest", Valid}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				v.valid(line)
			}
		})
	}
}
