package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"text/template/parse"
)

// The tests in this file run a template through ParseTemplate and through
// text/template and require the two to agree: both parse or neither does;
// both execute or neither does; and when both execute, they write the same
// bytes. TestTemplateAgainstTextTemplate also requires the same error
// messages, but where messageDisagreement allows them to differ;
// FuzzTemplate does not compare messages.

// diffName is the name every compared template is parsed under.
const diffName = "t"

// diffJSON is the reference's "json" function.
func diffJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// diffObject is a JSON object with a field of every kind the templates of
// diffTemplates look at.
const diffObject = `{
	"s": "hello",
	"empty": "",
	"html": "<a href=\"x?y=1&z=2\">Tom & Jerry's</a>",
	"unicode": "héllo wörld ✓",
	"zero": 0,
	"zeroStr": "0",
	"i": 42,
	"idx": 1,
	"neg": -7,
	"f": 3.5,
	"ff": 2.0,
	"big": 1000000,
	"huge": 12345678901234567890,
	"tiny": 1e-7,
	"exp": 1e3,
	"t": true,
	"fl": false,
	"n": null,
	"a": "A",
	"obj": {"a": 1, "b": "two", "c": {"d": [1, 2, 3]}, "n": null, "t": true},
	"nested": {"l1": {"l2": {"l3": "deep"}}},
	"xs": [1, 2, 3],
	"fs": [0.5, 1.25, 1e21],
	"strs": ["x", "y", "z"],
	"people": [{"name": "Ann", "age": 31}, {"name": "Bob", "age": 25, "tags": ["admin", "dev"]}],
	"mixed": [1, "two", true, null, {"k": "v"}, [1]],
	"ea": [],
	"eo": {},
	"m": {"b": 2, "a": 1, "c": 3},
	"m2": {"b": 1, "B": 2, "10": 3, "9": 4, "": 5},
	"chain": {"name": "a", "next": {"name": "b", "next": {"name": "c", "next": null}}},
	"with space": "spaced",
	"2": "two",
	"_x": "under",
	"é": "accent",
	"Len": "field named Len"
}`

// diffData are the values every template of diffTemplates is rendered over.
var diffData = []struct{ name, json string }{
	{"object", diffObject},
	{"array", `[1, "two", {"a": "x", "b": [true, null]}, [3, 4.5], null, ""]`},
	{"string", `"str <&> \"q\""`},
	{"number", `7`},
	{"float", `2.5`},
	{"zero", `0`},
	{"null", `null`},
	{"true", `true`},
	{"empty object", `{}`},
	{"empty array", `[]`},
}

// diffTemplates is the corpus of TestTemplateAgainstTextTemplate.
var diffTemplates = []string{
	// The functions whose values only a tool's own rendering gives: an
	// error elsewhere, as in the reference's stand-ins.
	`{{env "API_TOKEN"}}`,
	`a{{file "doc"}}b`,
	`{{output_file "chart" | printf "%q"}}`,
	`{{env .s}}`,
	// Text and comments.
	``,
	`plain text`,
	"line one\nline two\n",
	`}} stray closer`,
	`{ {.s} }`,
	`{{"{{"}}literal{{"}}"}}`,
	`{{/* a comment */}}`,
	"{{/* multi\nline */}}x",
	`a {{- /* trimmed */ -}} b`,
	`{{/* unclosed`,
	`{{/* c */ .s}}`,
	`{{ /* space before */ }}`,
	`{{-/* no space */}}`,
	`x{{/**/}}y`,

	// Trim markers.
	"a  {{- .s -}}  b",
	"a\n\t{{- .s}}\n b",
	"{{.s -}}\n\n  x",
	`{{-3}}`,
	`{{- 3}}`,
	`{{3 -}}`,
	`{{3-}}`,
	`{{- -}}`,
	"x {{- \"\" -}} \n y",
	`{{- .s}}{{- .s -}}{{.s -}}`,
	"{{- .s -}}\r\n",

	// Fields, dot and $.
	`{{.}}`,
	`{{ . }}`,
	`{{.s}}`,
	`{{.a}}`,
	`{{.obj.a}}`,
	`{{.obj.c.d}}`,
	`{{.nested.l1.l2.l3}}`,
	`{{.nested.l1}}`,
	`{{$}}`,
	`{{$.s}}`,
	`{{$.obj.b}}`,
	`{{.missing}}`,
	`{{.missing.deeper}}`,
	`{{.missing.deeper.still}}`,
	`{{.obj.missing}}`,
	`{{.obj.missing.x}}`,
	`{{.nested.l1.l2.nope}}`,
	`{{.n}}`,
	`{{.n.x}}`,
	`{{.obj.n}}`,
	`{{.obj.n.x}}`,
	`{{.s.x}}`,
	`{{.i.x}}`,
	`{{.f.x}}`,
	`{{.t.x}}`,
	`{{.xs.x}}`,
	`{{.ea.x}}`,
	`{{.eo.x}}`,
	`{{.eo.x.y}}`,
	`{{.s.Len}}`,
	`{{.Len}}`,
	`{{._x}}`,
	`{{.é}}`,
	`{{.2}}`,
	`{{.obj.a 1}}`,
	`{{.s "arg"}}`,
	`{{.missing "arg"}}`,
	"{{\n.s\n}}",
	`{{.["a"]}}`,
	`{{.a-b}}`,
	`{{.obj.}}`,
	`{{..s}}`,
	`{{$.}}`,
	`{{.people.name}}`,
	`{{.chain.next.next.name}}`,
	`{{.chain.next.next.next.name}}`,
	`{{.mixed.k}}`,

	// Variables.
	`{{$x := .s}}{{$x}}`,
	`{{$x := 1}}{{$x = 2}}{{$x}}`,
	`{{$x = 1}}`,
	`{{$x}}`,
	`{{$x := .obj}}{{$x.a}}-{{$x.c.d}}`,
	`{{$x := .missing}}{{$x.y}}`,
	`{{$x := .n}}{{$x.y}}`,
	`{{with $x := .obj}}{{$x.b}}{{.b}}{{end}}`,
	`{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}`,
	`{{$x := 1}}{{if true}}{{$x := 2}}{{$x}}{{end}}{{$x}}`,
	`{{$x := 1}}{{range .xs}}{{$x = .}}{{end}}{{$x}}`,
	`{{$x := 1}}{{$x := "two"}}{{$x}}`,
	`{{$x, $y := .xs}}`,
	`{{$x := 3}}{{$x 1}}`,
	`{{$_ := "u"}}{{$_}}`,
	`{{$x1 := .s | len}}{{$x1}}`,
	`{{$x := .s}}{{$x.foo}}`,
	`{{$x := .}}{{with .obj}}{{$x.s}}{{end}}`,
	`{{$x := print "a" | printf "%s!"}}{{$x}}`,
	`{{$x := 1}}{{define "v"}}{{$x}}{{end}}`,
	`{{$x := .xs}}{{range $x}}{{.}}{{end}}`,
	`{{$ := 1}}`,
	`{{$x = .s}}{{$x := 1}}`,
	`{{$x := 1}}{{$x = .missing}}{{$x}}`,
	`{{$x := .m}}{{range $k, $v := $x}}{{$k}}{{end}}{{$x.b}}`,

	// if.
	`{{if .t}}yes{{end}}`,
	`{{if .fl}}yes{{else}}no{{end}}`,
	`{{if .missing}}y{{else}}n{{end}}`,
	`{{if .n}}y{{else}}n{{end}}`,
	`{{if .empty}}y{{else}}n{{end}}`,
	`{{if .zero}}y{{else}}n{{end}}`,
	`{{if .zeroStr}}y{{else}}n{{end}}`,
	`{{if .ea}}y{{else}}n{{end}}`,
	`{{if .eo}}y{{else}}n{{end}}`,
	`{{if .obj}}y{{else}}n{{end}}`,
	`{{if .f}}y{{else}}n{{end}}`,
	`{{if .}}y{{else}}n{{end}}`,
	`{{if 0}}y{{else}}n{{end}}`,
	`{{if 0.0}}y{{else}}n{{end}}`,
	`{{if 0i}}y{{else}}n{{end}}`,
	`{{if ""}}y{{else}}n{{end}}`,
	`{{if nil}}y{{else}}n{{end}}`,
	`{{if .missing.x}}y{{else}}n{{end}}`,
	`{{if .a}}a{{else if .t}}t{{else}}e{{end}}`,
	`{{if .fl}}f{{else if .zero}}z{{else if .i}}i{{end}}`,
	`{{if}}x{{end}}`,
	`{{if .t}}unclosed`,
	`{{else}}`,
	`{{end}}`,
	`{{if .t}}a{{else}}b{{else}}c{{end}}`,
	`{{if .t}}{{end}}`,
	`{{if .t .fl}}x{{end}}`,
	`{{if $x := .s}}{{$x}}{{end}}{{$x}}`,
	`{{if $x := .s}}{{$x}}{{else}}[{{$x}}]{{end}}`,

	// with, else with.
	`{{with .obj}}{{.a}}/{{.b}}{{end}}`,
	`{{with .missing}}x{{else}}none{{end}}`,
	`{{with .ea}}x{{else}}empty{{end}}`,
	`{{with .zero}}[{{.}}]{{else}}zero{{end}}`,
	`{{with .missing}}a{{else with .obj}}{{.b}}{{end}}`,
	`{{with .missing}}a{{else with .n}}b{{else}}c{{end}}`,
	`{{with .fl}}a{{else with .empty}}b{{else with .s}}{{.}}{{else}}d{{end}}`,
	`{{with $x := .s}}{{$x}}{{.}}{{end}}`,
	`{{with .s}}{{.}}{{with $.i}}+{{.}}{{end}}{{end}}`,
	`{{with .obj.c}}{{range .d}}{{.}}{{end}}{{end}}`,
	`{{with}}x{{end}}`,
	`{{with .t}}a{{else if .t}}b{{end}}`,
	`{{with .fl}}a{{else if .t}}b{{end}}{{end}}`,
	`{{with .n}}{{.}}{{else}}{{.s}}{{end}}`,
	`{{with .obj}}{{$.s}}{{.missing}}{{end}}`,
	`{{if .fl}}a{{else with .s}}{{.}}{{end}}`,

	// range over arrays and maps.
	`{{range .xs}}{{.}},{{end}}`,
	`{{range .strs}}[{{.}}]{{end}}`,
	`{{range .people}}{{.name}}:{{.age}};{{end}}`,
	`{{range .people}}{{.tags}}|{{end}}`,
	`{{range .m}}{{.}}{{end}}`,
	`{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}`,
	`{{range $k, $v := .m2}}[{{$k}}]{{$v}}{{end}}`,
	`{{range $v := .xs}}{{$v}}{{end}}`,
	`{{range $i, $v := .strs}}{{$i}}={{$v}} {{end}}`,
	`{{range $i, $v := .xs}}{{if $i}}, {{end}}{{$v}}{{end}}`,
	`{{range .ea}}x{{else}}empty{{end}}`,
	`{{range .eo}}x{{else}}empty{{end}}`,
	`{{range .missing}}x{{else}}none{{end}}`,
	`{{range .n}}x{{else}}none{{end}}`,
	`{{range .s}}x{{end}}`,
	`{{range .i}}x{{end}}`,
	`{{range .t}}x{{end}}`,
	`{{range .}}{{.}};{{else}}nothing{{end}}`,
	`{{range $i, $v := .}}{{$i}}:{{$v}},{{end}}`,
	`{{range .mixed}}{{.}}|{{end}}`,
	`{{range .mixed}}{{printf "%T" .}} {{end}}`,
	`{{range .obj}}{{.}};{{end}}`,
	`{{range .xs}}{{$.s}}{{end}}`,
	`{{range .people}}{{range .tags}}{{.}}{{end}}{{end}}`,
	`{{range $p := .people}}{{range $.strs}}{{$p.name}}{{.}} {{end}}{{end}}`,
	`{{range .people}}{{with .tags}}{{len .}}{{else}}none{{end}}{{end}}`,
	`{{range .xs}}{{range $.strs}}{{.}}{{end}}{{.}}{{end}}`,
	`{{range}}{{end}}`,
	`{{range .xs}}unclosed`,
	`{{range $i, $v, $w := .xs}}{{end}}`,
	`{{range .xs}}{{else}}{{end}}`,
	`{{range .fs}}{{.}} {{end}}`,
	`{{$i := 0}}{{range $i, $v := .xs}}{{end}}{{$i}}`,
	`{{$k := ""}}{{$v := 0}}{{range $k, $v = .m}}{{end}}{{$k}}{{$v}}`,
	`{{$v := 0}}{{range $v = .xs}}{{end}}{{$v}}`,
	`{{range .xs}}{{else with .t}}w{{end}}`,

	// range over integers.
	`{{range 3}}{{.}}{{end}}`,
	// An integer of another type ranges over values of its type: a byte
	// from a string, here.
	`{{range index .s 0}}{{.}},{{end}}`,
	`{{range $b := index .s 1}}{{printf "%T" $b}}{{break}}{{end}}`,
	`{{$b := index .s 0}}{{range $b}}x{{end}}`,
	`{{range $i, $b := index .s 0}}x{{end}}`,
	`{{range $i := 5}}{{$i}}{{end}}`,
	`{{range 0}}x{{else}}none{{end}}`,
	`{{range -2}}x{{else}}none{{end}}`,
	`{{range 2.5}}x{{end}}`,
	`{{range $i, $e := 3}}{{end}}`,
	`{{range 'a'}}{{end}}done`,
	`{{range len .xs}}{{.}}{{end}}`,
	`{{range $i := 3}}{{range $j := $i}}{{$i}}{{$j}} {{end}}{{end}}`,
	`{{range 0x3}}{{.}}{{end}}`,
	`{{range 1e1}}{{.}}{{end}}`,
	`{{range 1000}}{{end}}done`,
	`{{range 18446744073709551615}}{{end}}`,

	// break and continue.
	`{{range 5}}{{if eq . 3}}{{break}}{{end}}{{.}}{{end}}`,
	`{{range .xs}}{{if eq . 2.0}}{{break}}{{end}}{{.}}{{end}}`,
	`{{range .strs}}{{if eq . "y"}}{{continue}}{{end}}{{.}}{{end}}`,
	`{{break}}`,
	`{{continue}}`,
	`{{range .xs}}{{break 1}}{{end}}`,
	`{{range .xs}}{{with $.s}}{{break}}{{end}}x{{end}}`,
	`{{range .xs}}{{else}}{{break}}{{end}}`,
	`{{range .xs}}{{range $.strs}}{{break}}{{end}}{{.}}{{end}}`,
	`{{range .xs}}{{continue}}x{{end}}end`,
	`{{range .m}}{{if eq . 2.0}}{{continue}}{{end}}{{.}}{{end}}`,
	`{{range $i := 4}}{{if eq $i 1}}{{continue}}{{end}}{{if eq $i 3}}{{break}}{{end}}{{$i}}{{end}}`,

	// define, template, block.
	`{{define "x"}}X{{.}}{{end}}{{template "x" .s}}`,
	`{{template "x"}}`,
	`{{define "x"}}{{.a}}{{end}}{{template "x"}}`,
	`{{define "x"}}[{{.}}]{{end}}{{range .xs}}{{template "x" .}}{{end}}`,
	`{{template "x" .}}{{define "x"}}{{.s}}{{end}}`,
	`{{define "x"}}{{template "y" .}}{{end}}{{define "y"}}Y{{.}}{{end}}{{template "x" 1}}`,
	`{{template .s}}`,
	`{{template "x" .s .i}}`,
	`{{define x}}{{end}}`,
	`{{define "x"}}unclosed`,
	`{{if .t}}{{define "x"}}{{end}}{{end}}`,
	`{{block "b" .obj}}{{.a}}{{end}}`,
	`{{block "b" .}}{{.s}}{{end}}`,
	`{{block "b"}}x{{end}}`,
	`{{define "a"}}1{{end}}{{define "a"}}2{{end}}{{template "a"}}`,
	`{{define "a"}}{{end}}{{define "a"}}2{{end}}{{template "a"}}`,
	`{{define "a"}}1{{end}}{{define "a"}} {{end}}{{template "a"}}`,
	`{{define "t"}}inner{{end}}`,
	"{{define \"t\"}}inner{{end}}  \n",
	`{{define "t"}}inner{{end}}outer`,
	`{{define "x"}}{{$.s}}{{end}}{{template "x" .obj}}`,
	`{{define "r"}}{{if .}}{{.name}}{{template "r" .next}}{{end}}{{end}}{{template "r" .chain}}`,
	`{{define "x"}}{{end}}`,
	`{{define "x"}}{{.}}{{end}}{{template "x" (print .s "!")}}`,
	`{{define "x"}}{{break}}{{end}}`,
	`{{range .xs}}{{define "x"}}{{end}}{{end}}`,
	`{{block "b" .}}{{.s}}{{end}}{{define "b"}}override{{end}}`,
	`{{define "x"}}{{.}}{{end}}{{template "x" .missing}}`,
	`{{define "x"}}{{.}}{{end}}{{template "x" nil}}`,
	`{{define "x"}}{{.missing}}{{end}}{{template "x" .obj}}`,
	`{{range .xs}}{{template "y" .}}{{end}}{{define "y"}}{{if eq . 2.0}}{{break}}{{end}}{{end}}`,

	// Pipelines.
	`{{.s | printf "%q"}}`,
	`{{.i | printf "%v"}}`,
	`{{.s | len}}`,
	`{{.s | printf "%s-%s" "x"}}`,
	`{{"a" | printf "%s%s" "b" | printf "[%s]"}}`,
	`{{. | json}}`,
	`{{.xs | index 0}}`,
	`{{0 | index .xs}}`,
	`{{.s | .obj}}`,
	`{{.obj | .a}}`,
	`{{.s | not}}`,
	`{{"x" | eq "x"}}`,
	`{{| .s}}`,
	`{{.s |}}`,
	`{{.s | "lit"}}`,
	`{{.s | nil}}`,
	`{{.s | $}}`,
	`{{.s | .}}`,
	`{{.s | nosuch}}`,
	`{{len .xs | printf "%03d"}}`,
	`{{.obj | json | len}}`,
	`{{.missing | print}}`,
	`{{.missing | json}}`,
	`{{.n | print}}`,
	`{{.missing | printf "%v"}}`,
	`{{.s | $.obj.a}}`,
	`{{.s | printf "%s" | print (len .s)}}`,

	// Parenthesised pipelines and chains.
	`{{(.obj).a}}`,
	`{{(.obj).c.d}}`,
	`{{(index .people 0).name}}`,
	`{{(index .people 1).tags}}`,
	`{{(index .people 0).tags}}`,
	`{{(.missing).x}}`,
	`{{(.n).x}}`,
	`{{(print "a").x}}`,
	`{{("s").x}}`,
	`{{(1).x}}`,
	`{{(nil).x}}`,
	`{{(.).s}}`,
	`{{(.xs)}}`,
	`{{((.s))}}`,
	`{{(len .xs)}}`,
	`{{len (index .people 1)}}`,
	`{{printf "%d" (len .xs)}}`,
	`{{(.s}}`,
	`{{.s)}}`,
	`{{()}}`,
	`{{$x := .obj}}{{($x).c.d}}`,
	`{{(index .obj "c").d}}`,
	`{{(.obj.c).d.x}}`,
	`{{$.obj.c.d}}`,
	`{{(.obj).a 1}}`,
	`{{(.obj) 1}}`,
	`{{(.obj).missing.x}}`,

	// and, or, not.
	`{{and 1 2}}`,
	`{{and 0 2}}`,
	`{{and .t .s}}`,
	`{{and .fl .missing.x}}`,
	`{{and .empty (index .xs 99)}}`,
	`{{and .s (index .xs 99)}}`,
	`{{or .empty .s}}`,
	`{{or .fl .n .empty}}`,
	`{{or 0 "" nil}}`,
	`{{or}}`,
	`{{and}}`,
	`{{and 1}}`,
	`{{or .s (index .xs 99)}}`,
	`{{or .ea .eo .xs}}`,
	`{{if or .fl .t}}y{{end}}`,
	`{{and .xs .m}}`,
	`{{or .zero .i}}`,
	`{{and .obj .obj.a}}`,
	`{{or .missing "default"}}`,
	`{{or .missing .missing2}}`,
	`{{or .n "d"}}`,
	`{{and (print "") 1}}`,
	`{{and .t .fl .s}}`,
	`{{or .missing.x.y "d"}}`,
	`{{"" | or 0}}`,
	`{{1 | and .t}}`,
	`{{or .fl nil}}`,
	`{{printf "%T" (or .fl .zero)}}`,
	`{{not .t}}`,
	`{{not .s}}`,
	`{{not .empty}}`,
	`{{not .missing}}`,
	`{{not .n}}`,
	`{{not}}`,
	`{{not 1 2}}`,
	`{{not .zero}}`,
	`{{not .ea}}`,
	`{{not .obj}}`,
	`{{not nil}}`,

	// len.
	`{{len .s}}`,
	`{{len .html}}`,
	`{{len .unicode}}`,
	`{{len .xs}}`,
	`{{len .m}}`,
	`{{len .ea}}`,
	`{{len .eo}}`,
	`{{len .n}}`,
	`{{len .missing}}`,
	`{{len .i}}`,
	`{{len .t}}`,
	`{{len}}`,
	`{{len .s .s}}`,
	`{{len 3}}`,
	`{{len "abc"}}`,
	`{{len .}}`,
	`{{len nil}}`,

	// index.
	`{{index .xs 0}}`,
	`{{index .xs 2}}`,
	`{{index .xs 3}}`,
	`{{index .xs -1}}`,
	`{{index .xs .idx}}`,
	`{{index .m "a"}}`,
	`{{index .m "zz"}}`,
	`{{index .m 1}}`,
	`{{index .obj "c" "d" 1}}`,
	`{{index .people 0 "name"}}`,
	`{{index .}}`,
	`{{index .s 0}}`,
	`{{index .s 10}}`,
	`{{index .n 0}}`,
	`{{index .missing 0}}`,
	`{{index .xs 1.0}}`,
	`{{index .xs 'a'}}`,
	`{{index .strs 0x1}}`,
	`{{index .xs 1 2}}`,
	`{{index .mixed 4 "k"}}`,
	`{{index .mixed 5 0}}`,
	`{{index .obj "n"}}`,
	`{{index .obj "n" "x"}}`,
	`{{index . 0}}`,
	`{{index . "s"}}`,
	`{{index}}`,
	`{{index .m .s}}`,
	`{{index .m nil}}`,
	`{{index .xs nil}}`,
	`{{index .xs 9223372036854775807}}`,
	`{{index .xs true}}`,
	`{{index . "with space"}}`,
	`{{index . "2"}}`,
	`{{index .m2 ""}}`,
	`{{index .eo "x"}}`,
	`{{index .ea 0}}`,
	`{{index .i 0}}`,
	`{{index .m .zeroStr}}`,
	`{{index .mixed 3 0}}`,

	// slice.
	`{{slice .s 1}}`,
	`{{slice .s 1 3}}`,
	`{{slice .s 1 2 3}}`,
	`{{slice .xs 1}}`,
	`{{slice .xs 0 2}}`,
	`{{slice .xs 0 1 2}}`,
	`{{slice .xs 2 1}}`,
	`{{slice .xs 0 3 2}}`,
	`{{slice .xs 0 4}}`,
	`{{slice .xs 0 5}}`,
	`{{slice .xs}}`,
	`{{slice .s}}`,
	`{{slice .n}}`,
	`{{slice .n 1}}`,
	`{{slice .m 1}}`,
	`{{slice .s -1}}`,
	`{{slice .unicode 1 2}}`,
	`{{slice .s 5}}`,
	`{{slice .s 6}}`,
	`{{slice .xs 1 2 3 4}}`,
	`{{len (slice .xs 1)}}`,
	`{{slice .i 0 1}}`,
	`{{slice .xs 1 1 1}}`,
	`{{slice .xs .idx}}`,
	`{{slice}}`,
	`{{slice .xs 1.0}}`,
	`{{slice .missing}}`,
	`{{slice . 1}}`,
	`{{slice .ea 0}}`,

	// print, printf, println.
	`{{print}}`,
	`{{print .s .i}}`,
	`{{print .i .i}}`,
	`{{print 1 2}}`,
	`{{print "a" 1 2 "b"}}`,
	`{{print .n}}`,
	`{{print .missing}}`,
	`{{print .xs}}`,
	`{{print .m}}`,
	`{{print .obj}}`,
	`{{print nil}}`,
	`{{print .t .fl}}`,
	`{{print .people}}`,
	`{{print .f .ff .big .huge .tiny .exp .neg}}`,
	`{{print .mixed}}`,
	`{{print .m2}}`,
	`{{print 1.5 2}}`,
	`{{print 'a' 1i}}`,
	`{{printf "%d" .i}}`,
	`{{printf "%s" .s}}`,
	`{{printf "%q" .html}}`,
	`{{printf "%x" .s}}`,
	`{{printf "%5.2f" .f}}`,
	`{{printf "%v %v" .s}}`,
	`{{printf "%v" .s .i}}`,
	`{{printf "%T" .i}}`,
	`{{printf "%T" .xs}}`,
	`{{printf "%T" .obj}}`,
	`{{printf "%T" .n}}`,
	`{{printf "%T" .missing}}`,
	`{{printf "%+v" .obj}}`,
	`{{printf "%#v" .obj}}`,
	`{{printf "%#v" .n}}`,
	`{{printf "%08.3f" .f}}`,
	`{{printf "%-5s|" .s}}`,
	`{{printf "%c" 65}}`,
	`{{printf "%U" 'x'}}`,
	`{{printf "%%"}}`,
	`{{printf}}`,
	`{{printf .s}}`,
	`{{printf "%!"}}`,
	`{{printf "%[2]v %[1]v" 1 2}}`,
	`{{printf "%*d" 5 3}}`,
	`{{printf "%t" .t}}`,
	`{{printf "%v" .missing}}`,
	`{{printf "%s" nil}}`,
	`{{printf "%e" .big}}`,
	`{{printf "%g" .huge}}`,
	`{{printf "%d" 3}}`,
	`{{printf "%d" 3.0}}`,
	`{{printf "%v" 1e3}}`,
	`{{printf "%x" .xs}}`,
	`{{printf "%s" .xs}}`,
	`{{printf 1 2}}`,
	`{{printf .i}}`,
	`{{printf nil}}`,
	`{{printf .missing}}`,
	`{{printf "%v|%v" .n .missing}}`,
	`{{printf "%v" (index .m "zz")}}`,
	`{{println}}`,
	`{{println .s .i}}`,
	`{{println "a" "b"}}`,
	`{{println .n .missing}}`,

	// eq, ne, lt, le, gt, ge.
	`{{eq .s "hello"}}`,
	`{{eq .s "x" "hello"}}`,
	`{{eq .i 42}}`,
	`{{eq .i "42"}}`,
	`{{eq .i 42.0}}`,
	`{{eq .t true}}`,
	`{{eq .fl false}}`,
	`{{eq .s .s}}`,
	`{{eq .xs .xs}}`,
	`{{eq .obj .obj}}`,
	`{{eq .n .n}}`,
	`{{eq .missing .n}}`,
	`{{eq .missing .s}}`,
	`{{eq .n .s}}`,
	`{{eq .n nil}}`,
	`{{eq 1 1.0}}`,
	`{{eq 1 2 1}}`,
	`{{eq "a"}}`,
	`{{eq}}`,
	`{{eq .f 3.5}}`,
	`{{eq .zero 0}}`,
	`{{eq .s 1}}`,
	`{{eq .huge .huge}}`,
	`{{eq 'a' 97}}`,
	`{{eq .s "x" 1}}`,
	`{{eq .s "hello" 1}}`,
	`{{eq .ea .eo}}`,
	`{{eq .xs .n}}`,
	`{{eq .t 1}}`,
	`{{eq 1i 1i}}`,
	`{{ne .s "x"}}`,
	`{{ne 1 1}}`,
	`{{ne .i 42}}`,
	`{{ne 1 2 3}}`,
	`{{ne .n .missing}}`,
	`{{ne .xs .xs}}`,
	`{{lt 1 2}}`,
	`{{lt 2 1}}`,
	`{{lt 1.5 2.5}}`,
	`{{lt "a" "b"}}`,
	`{{lt .i 50}}`,
	`{{lt .f 4.0}}`,
	`{{lt 1 2.0}}`,
	`{{lt .t .fl}}`,
	`{{lt .n 1}}`,
	`{{lt .missing 1}}`,
	`{{le 2 2}}`,
	`{{le .i "42"}}`,
	`{{gt 3 2}}`,
	`{{gt .s .empty}}`,
	`{{ge "b" "a"}}`,
	`{{ge 2 2}}`,
	`{{lt -1 0}}`,
	`{{lt .i "5"}}`,
	`{{lt .xs .xs}}`,
	`{{le .missing 1}}`,
	`{{lt 1}}`,
	`{{ge 1 2 3}}`,
	`{{lt 1i 2i}}`,
	`{{gt .f .ff}}`,
	// Equal operands, where < and <= part.
	`{{lt 2 2}}`,
	`{{lt 2.5 2.5}}`,
	`{{lt .f .f}}`,
	`{{lt .f 3.5}}`,
	`{{lt "a" "a"}}`,
	`{{lt .s .s}}`,
	`{{lt .s "hello"}}`,
	`{{le 2.5 2.5}}`,
	`{{le "a" "a"}}`,
	`{{le .f .f}}`,
	`{{le 3 2}}`,
	`{{le 3.5 2.5}}`,
	`{{le "b" "a"}}`,
	`{{gt 2 2}}`,
	`{{gt 2.5 2.5}}`,
	`{{gt "a" "a"}}`,
	`{{gt .s .s}}`,
	`{{gt 2.5 3.5}}`,
	`{{gt "a" "b"}}`,
	`{{ge 2.5 2.5}}`,
	`{{ge "a" "a"}}`,
	`{{ge .f .f}}`,
	`{{ge 2.5 3.5}}`,
	`{{ge "a" "b"}}`,
	`{{eq 2.5 2.5}}`,
	`{{eq 2.5 3.5}}`,
	`{{eq "a" "b"}}`,
	`{{ne 2.5 2.5}}`,
	`{{ne "a" "a"}}`,
	`{{ne .f .f}}`,
	`{{lt -1 .i}}`,
	`{{lt .i .i}}`,
	`{{le .i .i}}`,
	`{{gt .i .i}}`,
	`{{lt .t .t}}`,
	`{{le .t .t}}`,
	`{{le .n .n}}`,
	`{{gt .t .t}}`,
	`{{gt 1 2.0}}`,
	`{{gt .xs .xs}}`,
	`{{ge .xs .xs}}`,
	`{{le .xs .xs}}`,
	`{{gt 1i 1i}}`,
	`{{le 1i 1i}}`,

	// html, js, urlquery, call.
	`{{html .html}}`,
	`{{js .html}}`,
	`{{urlquery .html}}`,
	`{{html .i}}`,
	`{{html .n}}`,
	`{{html .missing}}`,
	`{{html "a" "b"}}`,
	`{{html 1 .s}}`,
	`{{js "it's \"q\" \n <x> = \u2028 \\ \x01"}}`,
	`{{urlquery "a b&c=d/é"}}`,
	`{{html .xs}}`,
	`{{js .xs}}`,
	`{{js .obj}}`,
	`{{html}}`,
	`{{urlquery .n .missing}}`,
	`{{.html | html | urlquery}}`,
	`{{js "\x00\u00a0\U0001F600"}}`,
	`{{html "\x00a"}}`,
	`{{call .s}}`,
	`{{call .n}}`,
	`{{call}}`,
	`{{call .missing}}`,
	`{{call nil}}`,
	`{{call .obj 1}}`,
	`{{call print}}`,

	// json.
	`{{json .obj}}`,
	`{{json .xs}}`,
	`{{json .html}}`,
	`{{json .i}}`,
	`{{json .f}}`,
	`{{json .huge}}`,
	`{{json .n}}`,
	`{{json .missing}}`,
	`{{json .}}`,
	`{{json}}`,
	`{{json .s .s}}`,
	`{{json 1}}`,
	`{{json 1.5}}`,
	`{{json "x"}}`,
	`{{json nil}}`,
	`{{json .tiny}}`,
	`{{json .unicode}}`,
	`{{.obj | json}}`,
	`{{json (slice .s 1 2)}}`,
	`{{json .mixed}}`,
	`{{json 'a'}}`,
	`{{json 1i}}`,
	`{{json .people}}`,
	`{{json .m2}}`,
	`{{json .fs}}`,
	`{{json (index .m "zz")}}`,
	`{{json true}}`,

	// Number constants.
	`{{1}}`,
	`{{-1}}`,
	`{{+1}}`,
	`{{1.5}}`,
	`{{-1.5}}`,
	`{{0x1F}}`,
	`{{0X1f}}`,
	`{{0x1E}}`,
	`{{0o17}}`,
	`{{017}}`,
	`{{0b101}}`,
	`{{1_000}}`,
	`{{1e3}}`,
	`{{1E3}}`,
	`{{1.5e-3}}`,
	`{{0x1p4}}`,
	`{{'a'}}`,
	`{{'\n'}}`,
	`{{'\x41'}}`,
	`{{'ü'}}`,
	`{{9223372036854775807}}`,
	`{{9223372036854775808}}`,
	`{{-9223372036854775808}}`,
	`{{18446744073709551615}}`,
	`{{99999999999999999999}}`,
	`{{1e400}}`,
	`{{0x}}`,
	`{{1.2.3}}`,
	`{{1i}}`,
	`{{1+2i}}`,
	`{{.5}}`,
	`{{1_}}`,
	`{{0.}}`,
	`{{1e}}`,
	`{{'ab'}}`,
	`{{''}}`,
	`{{1.0}}`,
	`{{100000000.0}}`,
	`{{1e21}}`,
	`{{printf "%T" 1}}`,
	`{{printf "%T" 1.0}}`,
	`{{printf "%T" 'a'}}`,
	`{{printf "%T" 0x10}}`,
	`{{printf "%T" 1e3}}`,
	`{{printf "%T" 0x1p4}}`,
	`{{printf "%T" 1i}}`,
	`{{printf "%T" 99999999999999999999}}`,
	// Hex and char constants are ints, even with an e, E, p or . in them.
	`{{printf "%T" 0x1E}}`,
	`{{printf "%T" 0x1e}}`,
	`{{printf "%T" 0X1E}}`,
	`{{printf "%T" 0XE}}`,
	`{{printf "%T" 0x1P4}}`,
	`{{printf "%T" 0X1p4}}`,
	`{{printf "%T" 0x1.8p1}}`,
	`{{printf "%T" 'e'}}`,
	`{{printf "%T" 'E'}}`,
	`{{printf "%T" '.'}}`,
	`{{printf "%T" 'p'}}`,
	`{{printf "%T" 'P'}}`,
	`{{printf "%T" 1E3}}`,
	`{{printf "%T" 1.}}`,
	`{{printf "%T" 0e0}}`,
	`{{printf "%T" 1_0e1}}`,
	`{{printf "%T" -0x1E}}`,
	`{{printf "%T" 0x1_E}}`,
	`{{printf "%T" 0b1}}`,
	`{{printf "%T" 0o7}}`,
	`{{eq 0x1E 30}}`,
	`{{eq 'e' 101}}`,
	`{{eq '.' 46}}`,
	`{{lt 'E' 70}}`,
	`{{slice "abcdef" 0x1 'a'}}`,
	`{{index .strs 0xE}}`,
	`{{range 0x3}}{{printf "%T" .}}{{end}}`,
	`{{0x1e}}`,
	`{{'E'}}`,
	`{{json 0x1E}}`,
	`{{json 'e'}}`,
	`{{1 2}}`,
	`{{-0}}`,
	`{{-0.0}}`,

	// String constants.
	`{{"abc"}}`,
	"{{`raw\\n`}}",
	"{{`multi\nline raw`}}",
	`{{"a\tb\n"}}`,
	`{{"\u00e9"}}`,
	`{{"\x41"}}`,
	`{{"unterminated}}`,
	`{{"\q"}}`,
	`{{"a" "b"}}`,
	"{{\"a\nb\"}}",
	`{{""}}`,

	// nil and bool constants.
	`{{nil}}`,
	`{{print nil nil}}`,
	`{{true}}`,
	`{{false}}`,
	`{{true | not}}`,
	`{{not true}}`,
	`{{if true}}t{{end}}`,
	`{{printf "%v" true}}`,
	`{{and true false}}`,
	`{{True}}`,
	`{{nil 1}}`,
	`{{true 1}}`,
	`{{$x := nil}}{{$x}}`,

	// Unknown functions and malformed actions.
	`{{foo}}`,
	`{{foo .s}}`,
	`{{.s | foo}}`,
	`{{ .s`,
	`{{`,
	`}}{{`,
	`{{range}}`,
	`{{.s}`,
	`{{.s}}}`,
	`{{ .s }} {{`,
	`{{}}`,
	`{{ }}`,
	`{{.s .s}}`,
	`{{:=}}`,
	`{{$x := }}`,
	`{{.s = 1}}`,
	`{{@}}`,
	`{{"a" | printf "%s" | }}`,
	`{{end x}}`,

	// Printing of values.
	`{{.m}}`,
	`{{.xs}}`,
	`{{.obj}}`,
	`{{.people}}`,
	`{{.mixed}}`,
	`{{.ea}}`,
	`{{.eo}}`,
	`{{.big}}`,
	`{{.huge}}`,
	`{{.tiny}}`,
	`{{.f}}`,
	`{{.ff}}`,
	`{{.exp}}`,
	`{{.neg}}`,
	`{{.nested}}`,
	`{{.html}}`,
	`{{.unicode}}`,
	`{{.fs}}`,
	`{{.m2}}`,
	`{{.s}}{{.s}}`,
	"{{.s}}\n{{.i}}\n",
	`{{.zero}}{{.zeroStr}}`,
	`{{.t}} {{.fl}}`,

	// Pipelines feeding a missing or null value to a function.
	`{{.missing | len}}`,
	`{{.missing | not}}`,
	`{{.missing | or .fl}}`,
	`{{.missing | and .t}}`,
	`{{.missing | index .m}}`,
	`{{.missing | eq .n}}`,
	`{{.missing | slice .s}}`,
	`{{.missing | html}}`,
	`{{.missing | call}}`,
	`{{.missing | printf}}`,
	`{{.n | len}}`,
	`{{.n | not}}`,
	`{{.n | eq .missing}}`,
	`{{.s | and .t}}`,
	`{{.fl | or .empty}}`,
	`{{.s | and}}`,
	`{{.s | call}}`,
	`{{.xs | slice}}`,
	`{{.s | printf}}`,
	`{{.i | printf}}`,

	// Variables: $, shadowing, declarations in pipelines.
	`{{$ = 1}}{{$}}`,
	`{{with $ := .obj}}{{$.a}}{{end}}{{$.s}}`,
	`{{($x := 1)}}{{$x}}`,
	`{{print ($x := 2) $x}}`,
	`{{if ($x := .s)}}{{$x}}{{end}}`,
	`{{range ($x := .xs)}}{{$x}}{{end}}`,
	`{{$x := .obj}}{{$x.missing.y}}`,
	`{{$x := .obj}}{{($x).missing.y}}`,
	`{{with .missing}}{{else}}{{.s}}{{end}}`,
	`{{with $x := .fl}}a{{else}}[{{$x}}]{{end}}`,
	`{{with $x := .missing}}{{else with $y := .s}}{{$x}}{{$y}}{{end}}`,
	`{{with $x := .missing}}{{else with $x := .s}}{{$x}}{{end}}`,
	`{{if $x := .fl}}{{else if $y := .s}}{{$x}}{{$y}}{{end}}`,
	`{{range $v := .ea}}{{else}}{{$v}}{{end}}`,
	`{{$i := 9}}{{range $i = 3}}{{end}}{{$i}}`,
	`{{$i := 0}}{{$v := 0}}{{range $i, $v = 3}}{{end}}`,
	`{{range $i := -1}}{{else}}{{$i}}{{end}}`,
	`{{$v := 0}}{{range $v = .ea}}{{end}}{{$v}}`,
	`{{$k := 0}}{{$v := 0}}{{range $k, $v = .strs}}{{end}}{{$k}}{{$v}}`,

	// Chains and odd field names.
	`{{(len .xs).x}}`,
	`{{($).s}}`,
	`{{(.obj).a.b 1}}`,
	`{{(.s | printf "%s").x}}`,
	`{{(.obj).2}}`,
	`{{.len}}`,
	`{{.range}}`,
	`{{.nil}}`,
	`{{.true}}`,
	`{{.obj.c.d.x}}`,
	`{{index .obj.c.d 0}}`,
	`{{.obj.c.d | len}}`,

	// More escaping, constants and trimming.
	`{{js "\xff\x7f"}}`,
	`{{html "\xff<"}}`,
	`{{urlquery "\xff "}}`,
	`{{"\x00"}}`,
	"a\n{{- /* c */ -}}\nb",
	`{{- define "x" -}} x {{- end -}}{{template "x"}}`,
	`{{block "t" .}}x{{end}}`,
	`{{with .fl}}a{{else with .n}}b{{else with .missing}}c{{end}}`,
	`{{define "x"}}{{range .}}{{with .}}{{break}}{{end}}{{end}}{{end}}{{template "x" .xs}}`,
	`{{print 0x1p-2}}`,
	`{{json 0x10}}`,
	`{{0x1Ep1}}`,
	`{{0x1i}}`,
	`{{'\''}}`,
	`{{'\u00e9'}}`,
	`{{'\400'}}`,
	`{{-'a'}}`,
	`{{not 0i}}`,
	`{{eq (len .xs) 3}}`,
	`{{lt (len .xs) 3.0}}`,
	`{{eq 18446744073709551615 1}}`,
	`{{printf "%v" -0.0}}`,
	`{{slice .xs 3}}`,
	`{{slice .xs 0 3 3}}`,
	`{{slice .xs 1 4}}`,
	`{{slice .mixed 0 8}}`,
	`{{.people | len}}`,
	`{{print.x}}`,
	`{{len.x}}`,
	`{{true.x}}`,
	`{{index .m .i}}`,
	`{{define "x"}}{{.}}{{end}}{{template "x" $y := 1}}{{$y}}`,
	`{{range .xs}}{{with .missing}}{{else}}{{break}}{{end}}x{{end}}`,
	`{{$x := 0}}{{range .xs}}{{$x = .}}{{if eq $x $x}}{{break}}{{end}}{{end}}{{$x}}`,

	// Fields named like methods of json.Number.
	`{{.i.String}}`,
	`{{.i.Int64}}`,
	`{{.obj.String}}`,
}

// diffDeepTemplates recurse until text/template's depth limit, which is
// slow enough that TestTemplateAgainstTextTemplate renders them over
// diffData's first value only.
var diffDeepTemplates = []string{
	`{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}`,
	`{{template "t" .}}`,
}

// diffGoSeven is what diffGoData's pointer points to.
var diffGoSeven = 7

// diffGoData holds Go values no JSON decoder makes: unsigned integers,
// pointers and comparable structs. The runtime renders templates over
// JSON alone, but Execute takes any value, and compares and prints these
// as text/template does.
var diffGoData = map[string]any{
	"u0": uint(0), "u3": uint(3), "u8": uint8(200), "i0": 0, "i3": 3, "neg": -1,
	"p": &diffGoSeven, "pnil": (*int)(nil),
	"st": struct{ A int }{1}, "st2": struct{ A int }{1}, "st3": struct{ A int }{2},
	"xs": []any{"a", "b", "c", "d"},
}

// diffGoTemplates are rendered over diffGoData by TestTemplateOverGoValues.
// They read no field of a struct, which text/template reads and
// ParseTemplate does not.
var diffGoTemplates = []string{
	`{{if .u0}}t{{else}}f{{end}}`,
	`{{if .u3}}t{{else}}f{{end}}`,
	`{{not .u0}} {{not .u3}} {{and .u3 .u0}} {{or .u0 .u3}}`,
	`{{.u3}} {{.u8}} {{print .u3 .u8}} {{printf "%d" .u8}}`,
	`{{.p}} {{.pnil}} {{html .p}} {{urlquery .p .pnil}}`,
	`{{range .u3}}{{.}},{{end}}`,
	`{{range .u0}}x{{else}}none{{end}}`,
	`{{index .xs .u3}}`,
	`{{index .xs .u8}}`,
	`{{slice .xs .u0 .u3}}`,
	`{{len .p}}`,
	`{{if .p}}t{{end}}{{if .pnil}}t{{else}}f{{end}}`,
	`{{eq .u3 .u3}} {{eq .u0 .u3}} {{eq .u3 .u8}} {{ne .u3 .u0}}`,
	`{{eq .i0 .u0}} {{eq .u0 .i0}} {{eq .i3 .u3}} {{eq .u3 .i3}} {{eq .neg .u3}} {{eq .u3 .neg}} {{eq .i0 .u3}} {{eq .u3 .i0}}`,
	`{{eq .u3 3}} {{eq 3 .u3}} {{eq .u0 0}} {{eq 0 .u0}} {{eq .u3 1 2 3}}`,
	`{{lt .u0 .u3}} {{lt .u3 .u3}} {{lt .u8 .u3}} {{le .u3 .u3}} {{gt .u8 .u3}} {{ge .u0 .u3}}`,
	`{{lt .i0 .u0}} {{lt .i3 .u3}} {{lt .neg .u0}} {{lt .i0 .u3}} {{lt 4 .u3}}`,
	`{{lt .u0 .i0}} {{lt .u3 .i3}} {{lt .u0 .neg}} {{lt .u0 .i3}} {{lt .u3 4}} {{lt .u3 2}}`,
	`{{le .i3 .u3}} {{ge .u3 .i3}} {{gt .u3 .neg}} {{gt .neg .u3}}`,
	`{{eq .st .st2}} {{eq .st .st3}} {{ne .st .st3}}`,
	`{{eq .st .u3}}`,
	`{{eq .st .xs}}`,
	`{{eq .xs .st}}`,
	`{{eq .p .p}}`,
	`{{eq .pnil nil}}`,
	`{{lt .st .st2}}`,
	`{{lt .p .p}}`,
}

// diffNumberMethods are the methods of json.Number. text/template calls a
// method named by a field (.n.String); ParseTemplate's evaluator does not,
// so templates naming one are compared only over data decoded without
// UseNumber, which holds no json.Number.
var diffNumberMethods = map[string]bool{"String": true, "Float64": true, "Int64": true}

// diffOutcome is what one execution did.
type diffOutcome struct {
	out      string
	err      error
	panicked bool // err holds the panic
	overflow bool // the output passed diffOutputLimit
}

func (o diffOutcome) String() string {
	switch {
	case o.panicked:
		return fmt.Sprintf("panic: %v", o.err)
	case o.err != nil:
		return fmt.Sprintf("error: %v", o.err)
	}
	return fmt.Sprintf("output %q", o.out)
}

// diffOutputLimit is how many bytes an execution may write.
const diffOutputLimit = 1 << 20

var errDiffOutputLimit = errors.New("output limit reached")

// diffWriter is an io.Writer that fails past diffOutputLimit.
type diffWriter struct {
	buf      bytes.Buffer
	overflow bool
}

func (w *diffWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > diffOutputLimit {
		w.overflow = true
		return 0, errDiffOutputLimit
	}
	return w.buf.Write(p)
}

// diffExecute runs execute, turning a panic into an outcome.
func diffExecute(execute func(io.Writer) error) (o diffOutcome) {
	w := &diffWriter{}
	defer func() {
		if r := recover(); r != nil {
			o = diffOutcome{err: fmt.Errorf("%v", r), panicked: true}
		}
	}()
	err := execute(w)
	return diffOutcome{out: w.buf.String(), err: err, overflow: w.overflow}
}

// diffParsed is a template parsed by both sides.
type diffParsed struct {
	text                  string
	ref, refMissingKeyErr *template.Template
	plan                  *Template
	refErr, planErr       error
	planPanicked          bool
	refPanicked           bool
	namesNumberMethod     bool
	hasChain              bool // a field of a parenthesised value, (.x).y
	refTrees              map[string]*parse.Tree
}

// diffFile, diffOutputFile and diffEnv are the reference's file,
// output_file and env: what ParseTemplate's do where a template is
// executed with neither paths nor variables (Execute).
func diffFile(name string) (string, error) {
	return "", fmt.Errorf("file %q: a run's files are given by path only to an exec tool's arguments", name)
}

func diffOutputFile(name string) (string, error) {
	return "", fmt.Errorf("output_file %q: a path to write a file is given only to an exec tool's program, in its arguments", name)
}

func diffEnv(name string) (string, error) {
	return "", fmt.Errorf("env %q: a variable's value is given only to an http tool's header values", name)
}

// diffParse parses text with text/template and with ParseTemplate.
func diffParse(text string) *diffParsed {
	p := &diffParsed{text: text}
	func() {
		defer func() {
			if r := recover(); r != nil {
				p.refPanicked, p.refErr = true, fmt.Errorf("%v", r)
			}
		}()
		refFuncs := template.FuncMap{"json": diffJSON, "file": diffFile, "output_file": diffOutputFile, "env": diffEnv}
		p.ref, p.refErr = template.New(diffName).Funcs(refFuncs).Parse(text)
		if p.refErr == nil {
			p.refMissingKeyErr, p.refErr = template.New(diffName).Funcs(refFuncs).Option("missingkey=error").Parse(text)
		}
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				p.planPanicked, p.planErr = true, fmt.Errorf("%v", r)
			}
		}()
		p.plan, p.planErr = ParseTemplate(diffName, text)
	}()
	if p.ref != nil {
		p.refTrees = map[string]*parse.Tree{}
		for _, t := range p.ref.Templates() {
			if t.Tree != nil {
				p.refTrees[t.Name()] = t.Tree
			}
		}
		for _, tree := range p.refTrees {
			diffWalk(tree.Root, func(n parse.Node) {
				var idents []string
				switch n := n.(type) {
				case *parse.FieldNode:
					idents = n.Ident
				case *parse.ChainNode:
					idents = n.Field
					p.hasChain = true
				case *parse.VariableNode:
					idents = n.Ident[1:]
				}
				for _, id := range idents {
					if diffNumberMethods[id] {
						p.namesNumberMethod = true
					}
				}
			})
		}
	}
	return p
}

// parseDisagreement describes how the two parses disagree, or is "".
func (p *diffParsed) parseDisagreement() string {
	switch {
	case p.planPanicked:
		return fmt.Sprintf("ParseTemplate panicked: %v (text/template: %v)", p.planErr, p.refErr)
	case p.refErr == nil && p.planErr != nil:
		return fmt.Sprintf("text/template parses it; ParseTemplate fails: %v", p.planErr)
	case p.refErr != nil && p.planErr == nil:
		return fmt.Sprintf("text/template fails to parse it (%v); ParseTemplate parses it", p.refErr)
	case p.planErr == nil && p.plan.Name() != diffName:
		return fmt.Sprintf("Name() is %q, want %q", p.plan.Name(), diffName)
	}
	return ""
}

// executeDisagreement renders p over data with both, with missing keys an
// error if missingKeyErr, and describes how they disagree, or is "": in
// the messages of failures too if messages (see messageDisagreement). skip
// says the case could not be compared: text/template panicked or wrote
// more than diffOutputLimit.
func (p *diffParsed) executeDisagreement(data any, missingKeyErr, messages bool) (msg string, skip bool) {
	ref, eval := p.ref, p.plan
	if missingKeyErr {
		ref, eval = p.refMissingKeyErr, eval.MissingKeyError()
	}
	want := diffExecute(func(w io.Writer) error { return ref.Execute(w, data) })
	if want.panicked || want.overflow {
		return "", true
	}
	got := diffExecute(func(w io.Writer) error { return eval.Execute(w, data) })
	switch {
	case got.panicked, got.overflow,
		(want.err == nil) != (got.err == nil),
		want.err == nil && want.out != got.out:
		if got.overflow {
			got.err = errDiffOutputLimit
		}
		return fmt.Sprintf("text/template: %v\nParseTemplate: %v", want, got), false
	case messages && want.err != nil:
		return p.messageDisagreement(want.err, got.err), false
	}
	return "", false
}

// messageDisagreement describes how two failures' messages differ, or is
// "". They must be the same words, but in three places where
// ParseTemplate says more, or says it elsewhere: where text/template
// reports a panic of package reflect, ParseTemplate names the problem
// (len of no value, an index out of range); a failure in a chain,
// (.x).y, is placed at the chain, not at its operand; and call does not
// name its argument as it is written.
func (p *diffParsed) messageDisagreement(want, got error) string {
	w, g := want.Error(), got.Error()
	switch {
	case w == g, strings.Contains(w, ": reflect: "), strings.Contains(w, "error calling call: "):
		return ""
	case p.hasChain:
		_, wTail, _ := strings.Cut(w, ">: ")
		_, gTail, _ := strings.Cut(g, ">: ")
		if wTail == gTail {
			return ""
		}
	}
	return fmt.Sprintf("text/template fails with\n  %s\nParseTemplate with\n  %s", w, g)
}

// diffDecode decodes a JSON value, with numbers as json.Number if
// useNumber, else as float64. Arrays are clipped to their length: slice
// bounds arrays by their length, where text/template bounds them by their
// capacity and so can read the spare elements encoding/json leaves.
func diffDecode(data string, useNumber bool) (any, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return diffClip(v), nil
}

func diffClip(v any) any {
	switch v := v.(type) {
	case []any:
		v = slices.Clip(v)
		for i := range v {
			v[i] = diffClip(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = diffClip(v[k])
		}
	}
	return v
}

// TestTemplateAgainstTextTemplate renders every template of diffTemplates
// over every value of diffData, decoded with and without UseNumber, with
// missing keys allowed and an error, through ParseTemplate and through
// text/template, and reports every case where they disagree on whether
// parsing fails, whether executing fails, what an execution writes, or
// the message of a failed execution (see messageDisagreement).
func TestTemplateAgainstTextTemplate(t *testing.T) {
	type decoded struct {
		name      string
		useNumber bool
		value     any
	}
	var data []decoded
	for _, d := range diffData {
		for _, useNumber := range []bool{true, false} {
			v, err := diffDecode(d.json, useNumber)
			if err != nil {
				t.Fatalf("data %s: %v", d.name, err)
			}
			data = append(data, decoded{d.name, useNumber, v})
		}
	}
	var disagreements []string
	cases, skipped := 0, 0
	for i, text := range slices.Concat(diffTemplates, diffDeepTemplates) {
		data := data
		if i >= len(diffTemplates) {
			data = data[:2] // diffData's first value, decoded both ways
		}
		p := diffParse(text)
		cases++
		if p.refPanicked {
			t.Errorf("text/template panics parsing %q: %v", text, p.refErr)
			continue
		}
		if msg := p.parseDisagreement(); msg != "" {
			disagreements = append(disagreements, fmt.Sprintf("template %q: %s", text, msg))
			continue
		}
		if p.refErr != nil {
			continue
		}
		for _, d := range data {
			for _, missingKeyErr := range []bool{false, true} {
				cases++
				if p.namesNumberMethod && d.useNumber {
					skipped++
					continue
				}
				msg, skip := p.executeDisagreement(d.value, missingKeyErr, true)
				if skip {
					skipped++
					t.Errorf("template %q over %s: text/template panicked or wrote more than %d bytes", text, d.name, diffOutputLimit)
					continue
				}
				if msg != "" {
					disagreements = append(disagreements, fmt.Sprintf("template %q\ndata %s (UseNumber %v), missingkey=error %v\n%s",
						text, d.name, d.useNumber, missingKeyErr, msg))
				}
			}
		}
	}
	t.Logf("%d templates, %d cases (parses and executions), %d skipped", len(diffTemplates)+len(diffDeepTemplates), cases, skipped)
	for _, d := range disagreements {
		t.Error(d)
	}
	if len(disagreements) > 0 {
		t.Errorf("%d of %d cases disagree with text/template", len(disagreements), cases)
	}
}

// TestTemplateOverGoValues renders every template of diffGoTemplates over
// diffData's Go values, as TestTemplateAgainstTextTemplate renders its
// own, messages of failures compared.
func TestTemplateOverGoValues(t *testing.T) {
	for _, text := range diffGoTemplates {
		p := diffParse(text)
		if p.refErr != nil || p.planErr != nil {
			t.Errorf("template %q: parse errors %v and %v", text, p.refErr, p.planErr)
			continue
		}
		for _, missingKeyErr := range []bool{false, true} {
			msg, skip := p.executeDisagreement(diffGoData, missingKeyErr, true)
			if skip || msg != "" {
				t.Errorf("template %q, missingkey=error %v: %s", text, missingKeyErr, cmp.Or(msg, "text/template panicked"))
			}
		}
	}
}

// diffWorkBudget bounds the estimated work of a fuzzed template's
// execution; see diffWork.
const diffWorkBudget = 1 << 20

// diffBounded reports whether executing p is clearly bounded: no template
// it defines calls itself, directly or through others, and its estimated
// work is within diffWorkBudget. The estimate counts nodes walked, with
// each range taken to iterate as often as the largest integer the
// template could produce: the largest number written in the text (in a
// constant or inside a string, as a printf width), or the length of the
// text and data together (bounding len and the data's collections).
func diffBounded(p *diffParsed, dataLen int) bool {
	bound := int64(len(p.text) + dataLen)
	for _, run := range strings.FieldsFunc(p.text, func(r rune) bool { return r < '0' || r > '9' }) {
		n, err := strconv.ParseInt(run, 10, 64)
		if err != nil {
			n = math.MaxInt64
		}
		bound = max(bound, n)
	}
	for _, tree := range p.refTrees {
		diffWalk(tree.Root, func(n parse.Node) {
			if n, ok := n.(*parse.NumberNode); ok {
				switch {
				case n.IsInt:
					bound = max(bound, diffAbs(n.Int64))
				case n.IsUint:
					bound = math.MaxInt64
				case n.IsFloat:
					bound = max(bound, int64(min(math.Abs(n.Float64), math.MaxInt64/2)))
				}
			}
		})
	}
	w := &diffWork{trees: p.refTrees, bound: bound, cost: map[string]int64{}, active: map[string]bool{}}
	return w.tree(diffName) <= diffWorkBudget
}

func diffAbs(n int64) int64 {
	if n == math.MinInt64 {
		return math.MaxInt64
	}
	return max(n, -n)
}

// diffWork estimates the work of executing templates, saturating past
// diffWorkBudget.
type diffWork struct {
	trees  map[string]*parse.Tree
	bound  int64 // iterations of any range
	cost   map[string]int64
	active map[string]bool
}

func diffSaturate(n int64) int64 { return min(n, diffWorkBudget+1) }

func (w *diffWork) tree(name string) int64 {
	if c, ok := w.cost[name]; ok {
		return c
	}
	if w.active[name] {
		return diffWorkBudget + 1 // a recursive call
	}
	tree := w.trees[name]
	if tree == nil {
		return 1
	}
	w.active[name] = true
	c := w.node(tree.Root)
	w.active[name] = false
	w.cost[name] = c
	return c
}

func (w *diffWork) node(n parse.Node) int64 {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return 0
		}
		c := int64(1)
		for _, child := range n.Nodes {
			c = diffSaturate(c + w.node(child))
		}
		return c
	case *parse.IfNode:
		return diffSaturate(1 + w.node(n.List) + w.node(n.ElseList))
	case *parse.WithNode:
		return diffSaturate(1 + w.node(n.List) + w.node(n.ElseList))
	case *parse.RangeNode:
		body := w.node(n.List) + 1
		if body > 0 && w.bound > diffWorkBudget/body {
			return diffWorkBudget + 1
		}
		return diffSaturate(1 + w.bound*body + w.node(n.ElseList))
	case *parse.TemplateNode:
		return diffSaturate(1 + w.tree(n.Name))
	}
	return 1
}

// diffWalk calls visit on n and every node under it.
func diffWalk(n parse.Node, visit func(parse.Node)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		visit(n)
		for _, c := range n.Nodes {
			diffWalk(c, visit)
		}
		return
	case *parse.PipeNode:
		if n == nil {
			return
		}
		visit(n)
		for _, c := range n.Cmds {
			diffWalk(c, visit)
		}
		return
	case nil:
		return
	}
	visit(n)
	switch n := n.(type) {
	case *parse.ActionNode:
		diffWalk(n.Pipe, visit)
	case *parse.CommandNode:
		for _, a := range n.Args {
			diffWalk(a, visit)
		}
	case *parse.ChainNode:
		diffWalk(n.Node, visit)
	case *parse.IfNode:
		diffWalk(n.Pipe, visit)
		diffWalk(n.List, visit)
		diffWalk(n.ElseList, visit)
	case *parse.RangeNode:
		diffWalk(n.Pipe, visit)
		diffWalk(n.List, visit)
		diffWalk(n.ElseList, visit)
	case *parse.WithNode:
		diffWalk(n.Pipe, visit)
		diffWalk(n.List, visit)
		diffWalk(n.ElseList, visit)
	case *parse.TemplateNode:
		diffWalk(n.Pipe, visit)
	}
}

// FuzzTemplate parses a template with ParseTemplate and with text/template
// and renders it over JSON data through both, and fails where they
// disagree on whether parsing fails, whether executing fails, or what an
// execution writes. Data that is not JSON is skipped, and so are templates
// whose execution is not clearly bounded (see diffBounded), those naming
// a method of json.Number (see diffNumberMethods) when the data is decoded
// with UseNumber, data decoded without UseNumber that holds a number no
// float64 can (1e700), and executions where text/template panics or
// writes more than diffOutputLimit bytes.
func FuzzTemplate(f *testing.F) {
	for i, text := range diffTemplates {
		f.Add(text, diffData[i%len(diffData)].json)
	}
	f.Fuzz(func(t *testing.T, text, data string) {
		if !json.Valid([]byte(data)) {
			t.Skip("data is not JSON")
		}
		p := diffParse(text)
		if p.refPanicked {
			t.Skip("text/template panics parsing it")
		}
		if msg := p.parseDisagreement(); msg != "" {
			t.Fatalf("template %q: %s", text, msg)
		}
		if p.refErr != nil {
			return
		}
		if !diffBounded(p, len(data)) {
			t.Skip("execution not clearly bounded")
		}
		for _, useNumber := range []bool{true, false} {
			if useNumber && p.namesNumberMethod {
				continue
			}
			v, err := diffDecode(data, useNumber)
			var te *json.UnmarshalTypeError
			if !useNumber && errors.As(err, &te) {
				continue // a number past float64's range, as 1e700: only json.Number holds it
			}
			if err != nil {
				t.Fatalf("decoding valid JSON %q: %v", data, err)
			}
			for _, missingKeyErr := range []bool{false, true} {
				if msg, _ := p.executeDisagreement(v, missingKeyErr, false); msg != "" {
					t.Errorf("template %q\ndata %q (UseNumber %v), missingkey=error %v\n%s",
						text, data, useNumber, missingKeyErr, msg)
				}
			}
		}
	})
}
