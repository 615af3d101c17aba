package testmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// mustValidate fails the test unless out is valid against schema, checked
// apart from Synthesize with the compiler the runtime uses.
func mustValidate(t testing.TB, schema string, out json.RawMessage) {
	t.Helper()
	sch, err := plan.CompileSchemaJSON([]byte(schema))
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("INVALID value %s for %s:\n%v", out, schema, err)
	}
}

// satisfiable is a table of schemas, one or more per keyword, that have
// values. want, if set, is the value seed 0 must give: the simplest one.
var satisfiable = []struct {
	name, schema, want string
}{
	// Boolean schemas and no constraint.
	{"true", `true`, `null`},
	{"empty", `{}`, `null`},
	// type
	{"null", `{"type":"null"}`, `null`},
	{"boolean", `{"type":"boolean"}`, `false`},
	{"integer", `{"type":"integer"}`, `1`},
	{"number", `{"type":"number"}`, `1`},
	{"string", `{"type":"string"}`, `""`},
	{"array", `{"type":"array"}`, `[]`},
	{"object", `{"type":"object"}`, `{}`},
	{"type list", `{"type":["boolean","string"]}`, `""`},
	{"nullable", `{"type":["integer","null"],"minimum":3}`, `3`},
	{"only null allowed by not", `{"type":["string","null"],"not":{"type":"string"}}`, `null`},
	// const, enum, examples, default
	{"const", `{"const":{"a":[1,"x"]}}`, `{"a":[1,"x"]}`},
	{"const with type", `{"type":"number","const":2.50}`, `2.50`},
	{"enum", `{"enum":["red","green","blue"]}`, `"red"`},
	{"enum of objects", `{"enum":[{"k":1},{"k":2}],"properties":{"k":{"minimum":2}}}`, `{"k":2}`},
	{"enum filtered by type", `{"type":"string","enum":[1,null,"x"]}`, `"x"`},
	{"examples", `{"type":"string","examples":["hello","world"]}`, `"hello"`},
	{"first valid example", `{"type":"integer","minimum":5,"examples":[1,7]}`, `7`},
	{"default", `{"type":"string","default":"dflt"}`, `"dflt"`},
	{"example valid against the whole schema", `{"allOf":[{"type":"string","examples":["eur","EUR"]},{"pattern":"^[A-Z]{3}$"}]}`, `"EUR"`},
	{"invalid default is passed over", `{"type":"integer","minimum":3,"maximum":5,"default":9}`, `4`},
	{"example before default", `{"type":"string","examples":["ex"],"default":"dflt"}`, `"ex"`},
	// numbers
	{"minimum", `{"type":"integer","minimum":10}`, `10`},
	{"maximum", `{"type":"integer","maximum":-4}`, `-4`},
	{"exclusive bounds", `{"type":"integer","exclusiveMinimum":3,"exclusiveMaximum":5}`, `4`},
	{"fraction between", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, `0.5`},
	{"multipleOf", `{"type":"integer","minimum":10,"multipleOf":7}`, `14`},
	{"multipleOf decimal", `{"type":"number","minimum":0.15,"multipleOf":0.1}`, `1`},
	{"multipleOf decimal, no integer", `{"type":"number","minimum":0.15,"maximum":0.9,"multipleOf":0.1}`, `0.5`},
	{"two multipleOfs", `{"allOf":[{"multipleOf":4},{"multipleOf":6}],"minimum":1}`, `12`},
	{"negative range", `{"type":"number","minimum":-10.5,"maximum":-10.25}`, `-10.375`},
	{"huge bounds", `{"type":"integer","minimum":1e30}`, `1000000000000000000000000000000`},
	{"draft-04 exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":5,"exclusiveMinimum":true}`, `6`},
	// strings
	{"minLength", `{"type":"string","minLength":3}`, `"aaa"`},
	{"maxLength", `{"type":"string","maxLength":2}`, `""`},
	{"length range", `{"type":"string","minLength":2,"maxLength":4}`, `"aa"`},
	{"pattern literal", `{"type":"string","pattern":"^abc$"}`, `"abc"`},
	{"pattern classes", `{"type":"string","pattern":"^[A-Z]{2}-\\d{3,}$"}`, `"AB-234"`},
	{"pattern alternation", `{"type":"string","pattern":"^(cat|dog)s?$"}`, `"cat"`},
	{"pattern unanchored", `{"type":"string","pattern":"x+y"}`, `"xy"`},
	{"pattern with minLength", `{"type":"string","pattern":"^[a-f0-9]+$","minLength":8}`, `"abcdefab"`},
	{"pattern negated class", `{"type":"string","pattern":"^[^/]+/[^/]+$"}`, `"a/b"`},
	{"pattern unicode", `{"type":"string","pattern":"^\\p{Greek}+$"}`, ``},
	{"pattern case-insensitive", `{"type":"string","pattern":"(?i)^yes$"}`, ``},
	{"two patterns", `{"allOf":[{"pattern":"^a"},{"pattern":"z$"}],"type":"string"}`, ``},
	{"semver pattern", `{"type":"string","pattern":"^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$"}`, `"0.0.0"`},
	// formats
	{"date", `{"type":"string","format":"date"}`, `"2024-01-01"`},
	{"date-time", `{"type":"string","format":"date-time"}`, `"2024-01-01T09:30:00Z"`},
	{"time", `{"type":"string","format":"time"}`, `"09:30:00Z"`},
	{"email", `{"type":"string","format":"email"}`, `"user@example.com"`},
	{"uri", `{"type":"string","format":"uri"}`, `"https://example.com/"`},
	{"uri-reference", `{"type":"string","format":"uri-reference"}`, ``},
	{"uuid", `{"type":"string","format":"uuid"}`, ``},
	{"ipv4", `{"type":"string","format":"ipv4"}`, `"192.0.2.1"`},
	{"ipv6", `{"type":"string","format":"ipv6"}`, ``},
	{"hostname", `{"type":"string","format":"hostname"}`, `"example.com"`},
	{"duration", `{"type":"string","format":"duration"}`, `"P1D"`},
	{"other asserted formats", `{"type":"object","required":["a","b","c","d","e","f","g","h"],"properties":{
		"a":{"format":"json-pointer","type":"string"},"b":{"format":"relative-json-pointer","type":"string"},
		"c":{"format":"uri-template","type":"string"},"d":{"format":"regex","type":"string"},
		"e":{"format":"semver","type":"string"},"f":{"format":"period","type":"string"},
		"g":{"format":"iri","type":"string"},"h":{"format":"iri-reference","type":"string"}}}`, ``},
	{"unknown format", `{"type":"string","format":"x-color"}`, `""`},
	{"format and pattern", `{"type":"string","format":"date","pattern":"^2024"}`, `"2024-01-01"`},
	// objects
	{"required", `{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`, `{"a":"example a","b":1}`},
	{"required undeclared", `{"type":"object","required":["x"]}`, `{"x":null}`},
	{"closed object", `{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"],"additionalProperties":false}`, `{"a":false}`},
	{"additionalProperties schema", `{"type":"object","minProperties":2,"additionalProperties":{"type":"integer"}}`, `{"a":1,"b":1}`},
	{"patternProperties", `{"type":"object","minProperties":1,"patternProperties":{"^x-[a-z]+$":{"type":"string"}},"additionalProperties":false}`, `{"x-a":"example x a"}`},
	{"minProperties with declared", `{"type":"object","minProperties":1,"properties":{"p":{"const":1}}}`, `{"p":1}`},
	{"maxProperties", `{"type":"object","maxProperties":1,"required":["a"]}`, `{"a":null}`},
	{"propertyNames", `{"type":"object","minProperties":2,"propertyNames":{"pattern":"^[A-Z]+$"}}`, ``},
	{"dependentRequired", `{"type":"object","required":["card"],"dependentRequired":{"card":["billing"]}}`, `{"billing":null,"card":null}`},
	{"dependentSchemas", `{"type":"object","required":["a"],"dependentSchemas":{"a":{"required":["b"],"properties":{"b":{"const":"B"}}}}}`, `{"a":null,"b":"B"}`},
	{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","required":["a"],"dependencies":{"a":["b"],"b":{"properties":{"c":{"type":"string"}},"required":["c"]}}}`, ``},
	{"property false is left out", `{"type":"object","properties":{"a":false,"b":{"type":"null"}},"minProperties":1}`, `{"b":null}`},
	{"unevaluatedProperties", `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}}}],"required":["a"],"unevaluatedProperties":false}`, `{"a":"example a"}`},
	// arrays
	{"minItems", `{"type":"array","items":{"type":"integer"},"minItems":3}`, `[1,1,1]`},
	{"maxItems", `{"type":"array","maxItems":0}`, `[]`},
	{"uniqueItems", `{"type":"array","items":{"type":"integer","minimum":1},"minItems":3,"uniqueItems":true}`, `[1,2,3]`},
	{"uniqueItems enum", `{"type":"array","items":{"enum":["a","b","c"]},"minItems":3,"uniqueItems":true}`, `["a","b","c"]`},
	{"uniqueItems strings", `{"type":"array","items":{"type":"string"},"minItems":3,"uniqueItems":true}`, `["","a","b"]`},
	{"uniqueItems objects", `{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}},"minItems":2,"uniqueItems":true}`, ``},
	{"prefixItems", `{"type":"array","prefixItems":[{"const":"x"},{"type":"integer"}],"minItems":2,"items":false}`, `["x",1]`},
	{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"},{"type":"boolean"}],"additionalItems":false,"minItems":2}`, `["",false]`},
	{"contains", `{"type":"array","contains":{"const":5}}`, `[5]`},
	{"minContains", `{"type":"array","contains":{"type":"string"},"minContains":2,"items":{"type":["string","integer"]}}`, `["",""]`},
	{"maxContains", `{"type":"array","minItems":3,"contains":{"type":"integer"},"maxContains":1,"items":{"type":["integer","string"]}}`, ``},
	{"unevaluatedItems", `{"type":"array","prefixItems":[{"type":"string"}],"minItems":1,"unevaluatedItems":false}`, `[""]`},
	// $ref and $defs
	{"$defs ref", `{"$ref":"#/$defs/pos","$defs":{"pos":{"type":"integer","minimum":1}}}`, `1`},
	{"definitions ref", `{"properties":{"a":{"$ref":"#/definitions/s"}},"required":["a"],"definitions":{"s":{"type":"string","minLength":1}}}`, `{"a":"example a"}`},
	{"$ref with siblings", `{"$ref":"#/$defs/n","maximum":3,"$defs":{"n":{"type":"integer","minimum":2}}}`, `3`},
	{"recursive tree", `{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#"}}}}`, `{"v":1}`},
	{"recursion with required kids", `{"$defs":{"node":{"type":"object","required":["next"],"properties":{"next":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/node"}]}}}},"$ref":"#/$defs/node"}`, `{"next":null}`},
	{"$anchor", `{"$ref":"#pos","$defs":{"p":{"$anchor":"pos","type":"integer","minimum":7}}}`, `7`},
	{"$id and relative ref", `{"$id":"https://example.com/root.json","$ref":"item.json","$defs":{"i":{"$id":"item.json","type":"string","const":"it"}}}`, `"it"`},
	{"$dynamicRef", `{"$id":"https://example.com/list","$dynamicAnchor":"T","type":"array","items":{"$dynamicRef":"#T"},"maxItems":0}`, `[]`},
	// combinators
	{"allOf", `{"allOf":[{"type":"object","required":["a"]},{"properties":{"a":{"type":"string","minLength":2}}}]}`, `{"a":"example a"}`},
	{"anyOf", `{"anyOf":[{"type":"string","minLength":3},{"type":"integer"}]}`, `"aaa"`},
	{"anyOf second", `{"anyOf":[{"type":"string","maxLength":1,"minLength":2},{"type":"boolean"}]}`, `false`},
	{"oneOf exclusive", `{"oneOf":[{"type":"integer"},{"type":"number","minimum":0}]}`, ``},
	{"oneOf required", `{"type":"object","properties":{"a":{},"b":{}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`, `{"a":null}`},
	{"oneOf objects discriminated", `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"]},{"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]}`, `{"kind":"a","x":1}`},
	{"not type", `{"not":{"type":["null","boolean"]}}`, `1`},
	{"not const", `{"type":"integer","not":{"const":0}}`, `1`},
	{"not required", `{"type":"object","properties":{"a":{},"b":{}},"minProperties":1,"not":{"required":["a"]}}`, `{"b":null}`},
	{"not enum", `{"enum":[1,2,3],"not":{"enum":[1,2]}}`, `3`},
	{"if then", `{"type":"object","required":["kind"],"properties":{"kind":{"enum":["x","y"]}},"if":{"properties":{"kind":{"const":"x"}}},"then":{"required":["xv"],"properties":{"xv":{"type":"integer"}}},"else":{"required":["yv"]}}`, `{"kind":"x","xv":1}`},
	{"if else", `{"type":"integer","if":{"minimum":0},"then":{"multipleOf":2,"maximum":-1},"else":{"maximum":-5}}`, `-5`},
	{"if without then", `{"type":"string","if":{"minLength":2},"else":{"const":"z"}}`, ``},
	// realistic
	{"typical count", `{"type":"integer","minimum":0}`, `1`},
	{"typical price", `{"type":"number","minimum":0}`, `1`},
	{"typical positive", `{"type":"number","exclusiveMinimum":0}`, `1`},
	{"typical rating", `{"type":"integer","minimum":1,"maximum":5}`, `3`},
	{"typical fraction", `{"type":"number","minimum":0,"maximum":1}`, `0.5`},
	{"typical amount", `{"type":"number","minimum":-10000000,"maximum":10000000}`, `1`},
	{"typical multiple", `{"type":"integer","multipleOf":7}`, `7`},
	{"typical below one", `{"type":"integer","maximum":-3}`, `-3`},
	{"code pattern", `{"type":"string","pattern":"^[A-Z]{3}$"}`, `"ABC"`},
	{"member labels", `{"type":"object","required":["invoice_number","supplierName","tax-id"],"properties":{"invoice_number":{"type":"string","minLength":1},"supplierName":{"type":"string"},"tax-id":{"type":["string","null"]}}}`, `{"invoice_number":"example invoice number","supplierName":"example supplier name","tax-id":"example tax id"}`},
	{"label too long", `{"type":"object","required":["code"],"properties":{"code":{"type":"string","maxLength":4}}}`, `{"code":""}`},
	{"labels of unique items", `{"type":"object","required":["tags"],"properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":2,"uniqueItems":true}}}`, `{"tags":["example tags","example tags 2"]}`},
	{"formats of a record", `{"type":"object","required":["on","at","mail","site","id","ip"],"properties":{"on":{"type":"string","format":"date"},"at":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"site":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"},"ip":{"type":"string","format":"ipv4"}}}`, `{"at":"2024-01-01T09:30:00Z","id":"e220a839-7b1d-4daf-b42c-5a1aa3820138","ip":"192.0.2.1","mail":"user@example.com","on":"2024-01-01","site":"https://example.com/"}`},
	{"tool arguments", `{"type":"object","additionalProperties":false,"required":["query","limit"],"properties":{"query":{"type":"string","minLength":1,"description":"what to search"},"limit":{"type":"integer","minimum":1,"maximum":50},"sort":{"enum":["asc","desc"]}}}`, `{"limit":1,"query":"example query"}`},
}

func TestSynthesizeSatisfiable(t *testing.T) {
	if len(satisfiable) < 60 {
		t.Fatalf("the table holds %d schemas; keep at least 60", len(satisfiable))
	}
	for _, tc := range satisfiable {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed <= 8; seed++ {
				out, err := Synthesize([]byte(tc.schema), seed)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				mustValidate(t, tc.schema, out)
				if seed == 0 && tc.want != "" && string(out) != tc.want {
					t.Errorf("seed 0 gave %s, want %s", out, tc.want)
				}
			}
		})
	}
}

// unsatisfiable is a table of schemas without values and the keyword the
// error must name.
var unsatisfiable = []struct {
	name, schema, keyword string
}{
	{"false", `false`, "false"},
	{"not anything", `{"not":{}}`, "not"},
	{"not true", `{"not":true}`, "not"},
	{"length contradiction", `{"type":"string","minLength":5,"maxLength":2}`, "minLength"},
	{"type contradiction", `{"allOf":[{"type":"string"},{"type":"integer"}]}`, "type"},
	{"const against enum", `{"const":1,"enum":[2,3]}`, "enum"},
	{"const against type", `{"type":"string","const":1}`, "type"},
	{"enum against type", `{"type":"string","enum":[1,2]}`, "type"},
	{"bounds", `{"type":"number","minimum":5,"maximum":4}`, "minimum"},
	{"exclusive bounds", `{"type":"number","exclusiveMinimum":5,"exclusiveMaximum":5}`, "exclusiveMinimum"},
	{"no integer in range", `{"type":"integer","minimum":0.2,"maximum":0.8}`, "type"},
	{"no multiple in range", `{"type":"number","minimum":1,"maximum":4,"multipleOf":5}`, "multipleOf"},
	{"pattern never matches", `{"type":"string","pattern":"^a$","minLength":2}`, "pattern"},
	{"two patterns clash", `{"type":"string","allOf":[{"pattern":"^a+$"},{"pattern":"^b+$"}]}`, "pattern"},
	{"format too long", `{"type":"string","format":"date","maxLength":5}`, "format"},
	{"items contradiction", `{"type":"array","minItems":3,"maxItems":2}`, "minItems"},
	{"huge minItems", `{"type":"array","minItems":100000000}`, "minItems"},
	{"huge minLength", `{"type":"string","minLength":100000000}`, "minLength"},
	{"huge minProperties", `{"type":"object","minProperties":100000000}`, "minProperties"},
	{"uniqueItems booleans", `{"type":"array","items":{"type":"boolean"},"minItems":3,"uniqueItems":true}`, "uniqueItems"},
	{"uniqueItems enum", `{"type":"array","items":{"enum":[1,2]},"minItems":3,"uniqueItems":true}`, "uniqueItems"},
	{"required but closed", `{"type":"object","required":["a"],"additionalProperties":false}`, "additionalProperties"},
	{"required but false", `{"type":"object","required":["a"],"properties":{"a":false}}`, "false"},
	{"properties contradiction", `{"type":"object","minProperties":2,"maxProperties":1}`, "minProperties"},
	{"required over maxProperties", `{"type":"object","required":["a","b"],"maxProperties":1}`, "maxProperties"},
	{"oneOf both match", `{"oneOf":[{"type":"string"},{"type":"string"}]}`, "oneOf"},
	{"anyOf none", `{"anyOf":[false,false]}`, "false"},
	{"infinite recursion", `{"$defs":{"n":{"type":"object","required":["next"],"properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, "$ref"},
	{"contains impossible", `{"type":"array","items":{"type":"string"},"contains":{"type":"integer"}}`, "type"},
	{"minContains over maxItems", `{"type":"array","contains":{},"minContains":3,"maxItems":2}`, "contains"},
	{"prefix closed", `{"type":"array","prefixItems":[{}],"items":false,"minItems":2}`, "items"},
	{"nested", `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":1,"items":{"type":"string","pattern":"^x$","maxLength":0}}}}`, "pattern"},
}

func TestSynthesizeUnsatisfiable(t *testing.T) {
	for _, tc := range unsatisfiable {
		t.Run(tc.name, func(t *testing.T) {
			for _, seed := range []int64{0, 1, 7} {
				out, err := Synthesize([]byte(tc.schema), seed)
				if err == nil {
					t.Fatalf("seed %d: got %s, want an error", seed, out)
				}
				var ue *UnsatisfiableError
				if !errors.As(err, &ue) {
					t.Fatalf("seed %d: error %v is not an *UnsatisfiableError", seed, err)
				}
				if ue.Keyword != tc.keyword {
					t.Errorf("seed %d: keyword %q, want %q (%v)", seed, ue.Keyword, tc.keyword, err)
				}
				if !strings.Contains(err.Error(), tc.keyword) {
					t.Errorf("seed %d: message %q does not name %q", seed, err, tc.keyword)
				}
			}
		})
	}
}

func TestSynthesizeLocation(t *testing.T) {
	_, err := Synthesize([]byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"^x$","minLength":3}},"required":["a"]}`), 0)
	var ue *UnsatisfiableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an *UnsatisfiableError", err)
	}
	if ue.Keyword != "pattern" || ue.Location != "/properties/a" {
		t.Errorf("got keyword %q at %q, want \"pattern\" at \"/properties/a\"", ue.Keyword, ue.Location)
	}
}

func TestSynthesizeBadSchema(t *testing.T) {
	for _, schema := range []string{`{`, `{"type":"strin"}`, `{"$ref":"https://example.com/x.json"}`, `{"pattern":"a++"}`} {
		_, err := Synthesize([]byte(schema), 0)
		if err == nil {
			t.Errorf("%s: no error", schema)
			continue
		}
		var ue *UnsatisfiableError
		if errors.As(err, &ue) {
			t.Errorf("%s: a schema that does not compile is not unsatisfiable: %v", schema, err)
		}
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]{2,8}$"}},"n":{"type":"number"},"c":{"enum":["a","b","c","d","e"]}},"required":["c"]}`)
	for seed := int64(0); seed <= 20; seed++ {
		a, err := Synthesize(schema, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Synthesize(schema, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("seed %d: %s then %s", seed, a, b)
		}
	}
}

// TestSynthesizeVaries: where a schema leaves room, seeds give different
// values.
func TestSynthesizeVaries(t *testing.T) {
	for _, schema := range []string{
		`{"enum":["a","b","c","d","e"]}`,
		`{"type":"integer","minimum":0,"maximum":100}`,
		`{"type":"string","pattern":"^[a-z]{3,9}$"}`,
		`{"type":"string","format":"date"}`,
		`{"type":"array","items":{"type":"boolean"}}`,
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}}`,
		`{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`,
	} {
		seen := map[string]bool{}
		for seed := int64(0); seed <= 20; seed++ {
			out, err := Synthesize([]byte(schema), seed)
			if err != nil {
				t.Fatalf("%s: seed %d: %v", schema, seed, err)
			}
			mustValidate(t, schema, out)
			seen[string(out)] = true
		}
		if len(seen) < 2 {
			t.Errorf("%s: seeds 0-20 all gave the same value", schema)
		}
	}
}

// TestSynthesizeBounded: schemas that ask for much work end with a valid
// value or an *UnsatisfiableError.
func TestSynthesizeBounded(t *testing.T) {
	repeat := func(part string, n int) string { return strings.Repeat(part+",", n) + "true" }
	for _, schema := range []string{
		`{"type":"integer","allOf":[` + repeat(`{"anyOf":[{"type":"string"},{"type":"boolean"},{"type":"integer","minimum":1}]}`, 12) + `]}`,
		`{"type":"object","allOf":[` + repeat(`{"anyOf":[{"required":["x"],"properties":{"x":false}},{"required":["y"]}]}`, 12) + `]}`,
		`{"type":"object","allOf":[` + repeat(`{"oneOf":[{"required":["a"]},{"required":["b"]},{"required":["c"]}]}`, 10) + `]}`,
		`{"type":"array","minItems":5000,"items":{"type":"array","minItems":5000}}`,
		`{"type":"array","minItems":10000,"uniqueItems":true,"items":{"type":"integer"}}`,
		`{"type":"array","minItems":10000,"uniqueItems":true,"items":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
		`{"type":"array","minItems":7,"uniqueItems":true,"items":{"type":"array","items":{"enum":[1,2,3]},"minItems":3,"uniqueItems":true}}`,
		`{"type":"string","pattern":"^[a-z]+$","minLength":99999}`,
		`{"type":"object","minProperties":5000,"propertyNames":{"pattern":"^x[0-9]+$"}}`,
		`{"$defs":{"t":{"type":"array","minItems":2,"items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"}`,
		`{"$defs":{"t":{"anyOf":[{"type":"array","minItems":3,"items":{"$ref":"#/$defs/t"}},{"type":"object","minProperties":3,"additionalProperties":{"$ref":"#/$defs/t"}}]}},"$ref":"#/$defs/t"}`,
		`{"$defs":{"t":{"type":"object","properties":{"l":{"$ref":"#/$defs/t"},"r":{"$ref":"#/$defs/t"}},"minProperties":2}},"$ref":"#/$defs/t"}`,
		`{"type":"number","multipleOf":0.0001,"minimum":1e-300,"maximum":2e-300}`,
		`{"type":"integer","minimum":1e300,"multipleOf":1e-300}`,
	} {
		for _, seed := range []int64{0, 1} {
			// How long it takes is not asserted (a loaded machine makes any
			// limit flaky); that it ends is, by the test's timeout.
			out, err := Synthesize([]byte(schema), seed)
			if err != nil {
				var ue *UnsatisfiableError
				if !errors.As(err, &ue) {
					t.Errorf("%.80s: seed %d: %v is not an *UnsatisfiableError", schema, seed, err)
				}
				continue
			}
			mustValidate(t, schema, out)
		}
	}
}

// TestSynthesizeSizeBounded: the bounds on one array's items and one
// string's length each hold alone, but their product is a gigabyte, which
// ran a run of the test model and agentc diff out of memory. Past
// MaxValueBytes of JSON text the value is refused with an
// *UnsatisfiableError that names the bound; a value within it is made.
func TestSynthesizeSizeBounded(t *testing.T) {
	member := `"` + strings.Repeat("m", 1000) + `"`
	for _, c := range []struct {
		schema, keyword string
	}{
		{`{"type":"array","minItems":10000,"items":{"type":"string","minLength":100000}}`, "minItems"},
		{`{"type":"object","required":["big","e"],"properties":{"big":{"type":"array","minItems":10000,"items":{"type":"string","minLength":100000,"pattern":"^a"}},"e":{"enum":["x","y"]}}}`, "minItems"},
		{`{"type":"array","minItems":10000,"items":{"enum":[` + member + `]}}`, "minItems"},
		{`{"type":"array","minItems":90,"items":{"type":"string","minLength":100000}}`, "minItems"},
	} {
		for _, seed := range []int64{0, 1} {
			out, err := Synthesize([]byte(c.schema), seed)
			var ue *UnsatisfiableError
			if !errors.As(err, &ue) || ue.Keyword != c.keyword || !strings.Contains(ue.Reason, "larger than 8 MiB") {
				t.Errorf("%.80s: seed %d: %d bytes, error %v; want an *UnsatisfiableError at %q naming the bound", c.schema, seed, len(out), err, c.keyword)
			}
		}
	}
	within := `{"type":"array","minItems":80,"items":{"type":"string","minLength":100000}}`
	out, err := Synthesize([]byte(within), 0)
	if err != nil {
		t.Fatalf("8,000,000 characters: %v", err)
	}
	if len(out) > MaxValueBytes {
		t.Errorf("a value of %d bytes, past MaxValueBytes", len(out))
	}
	mustValidate(t, within, out)
}

// randomSchema builds a random schema from the keywords above, nested up to
// five levels, with references back to the root.
func randomSchema(r *rand.Rand, depth int) any {
	if depth > 4 || r.IntN(6) == 0 {
		if r.IntN(3) == 0 {
			return r.IntN(2) == 0
		}
		return map[string]any{"type": []string{"string", "integer", "number", "boolean", "null", "array", "object"}[r.IntN(7)]}
	}
	sub := func() any { return randomSchema(r, depth+1) }
	m := map[string]any{}
	for range 1 + r.IntN(4) {
		switch r.IntN(30) {
		case 0:
			m["type"] = []string{"string", "integer", "number", "object", "array"}[r.IntN(5)]
		case 1:
			m["type"] = []any{"string", "null"}
		case 2:
			m["enum"] = []any{1, "a", nil, map[string]any{"x": 1}, []any{1}}[:1+r.IntN(5)]
		case 3:
			m["const"] = []any{1, "a", nil, 2.5}[r.IntN(4)]
		case 4:
			m["minimum"] = r.IntN(20) - 10
		case 5:
			m["maximum"] = r.IntN(20) - 10
		case 6:
			m["exclusiveMinimum"] = float64(r.IntN(20)) / 4
		case 7:
			m["multipleOf"] = []float64{0.5, 3, 0.01, 7}[r.IntN(4)]
		case 8:
			m["minLength"] = r.IntN(6)
		case 9:
			m["maxLength"] = r.IntN(6)
		case 10:
			m["pattern"] = []string{"^a+$", "[0-9]{2}", "^(x|yy)*z$", `\bfoo`, "^[^a-z]{3}$", "^.{2,3}$"}[r.IntN(6)]
		case 11:
			m["format"] = []string{"date", "email", "uri", "ipv4", "uuid", "duration", "hostname", "time", "regex", "json-pointer"}[r.IntN(10)]
		case 12:
			m["properties"] = map[string]any{"a": sub(), "b": sub()}
		case 13:
			m["required"] = []string{"a", "b", "c"}[:1+r.IntN(3)]
		case 14:
			m["additionalProperties"] = sub()
		case 15:
			m["items"] = sub()
		case 16:
			m["minItems"] = r.IntN(5)
		case 17:
			m["maxItems"] = r.IntN(5)
		case 18:
			m["uniqueItems"] = true
		case 19:
			m["contains"], m["maxContains"] = sub(), r.IntN(3)
		case 20:
			m["allOf"] = []any{sub(), sub()}
		case 21:
			m["anyOf"] = []any{sub(), sub()}
		case 22:
			m["oneOf"] = []any{sub(), sub(), sub()}
		case 23:
			m["not"] = sub()
		case 24:
			m["if"], m["then"], m["else"] = sub(), sub(), sub()
		case 25:
			m["$ref"] = "#"
		case 26:
			m["minProperties"], m["maxProperties"] = r.IntN(4), r.IntN(4)
		case 27:
			m["prefixItems"] = []any{sub()}
		case 28:
			m["patternProperties"] = map[string]any{"^x": sub()}
		case 29:
			m["dependentSchemas"], m["propertyNames"] = map[string]any{"a": sub()}, map[string]any{"maxLength": 2}
		}
	}
	return m
}

// TestSynthesizeRandomSchemas: random combinations of keywords end quickly
// with a valid value or an *UnsatisfiableError, and most get a value.
func TestSynthesizeRandomSchemas(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewPCG(1, 2))
	valued := 0
	for i := range n {
		schema, err := json.Marshal(randomSchema(r, 0))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := Synthesize(schema, int64(i%3))
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", schema, d)
		}
		if err != nil {
			var ue *UnsatisfiableError
			if !errors.As(err, &ue) || ue.Keyword == "" {
				t.Errorf("%s: %v is not an *UnsatisfiableError naming a keyword", schema, err)
			}
			continue
		}
		mustValidate(t, string(schema), out)
		valued++
	}
	// Many random schemas contradict themselves; about 80% have a value.
	if valued < n*3/4 {
		t.Errorf("%d of %d random schemas got a value; want at least 75%%", valued, n)
	}
}

// FuzzSynthesize: no schema makes Synthesize panic or hang, and every value
// it returns is valid.
func FuzzSynthesize(f *testing.F) {
	for _, tc := range satisfiable {
		f.Add([]byte(tc.schema), int64(0))
	}
	for _, tc := range unsatisfiable {
		f.Add([]byte(tc.schema), int64(3))
	}
	f.Fuzz(func(t *testing.T, schema []byte, seed int64) {
		sch, err := plan.CompileSchemaJSON(schema)
		if err != nil {
			return
		}
		out, err := Synthesize(schema, seed)
		if err != nil {
			var ue *UnsatisfiableError
			if !errors.As(err, &ue) || ue.Keyword == "" {
				t.Fatalf("a schema that compiles gave %v, not an *UnsatisfiableError naming a keyword", err)
			}
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		if err := sch.Validate(v); err != nil {
			t.Fatalf("INVALID value %s for %s:\n%v", out, schema, err)
		}
	})
}

// benchSchema is a realistic answer contract: nested objects, arrays,
// enums, formats, patterns and $defs.
const benchSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["title", "severity", "labels", "reporter", "steps", "created"],
  "properties": {
    "title": {"type": "string", "minLength": 5, "maxLength": 120},
    "severity": {"enum": ["low", "medium", "high", "critical"]},
    "labels": {"type": "array", "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,30}$"}, "minItems": 1, "maxItems": 5, "uniqueItems": true},
    "reporter": {"$ref": "#/$defs/person"},
    "assignees": {"type": "array", "items": {"$ref": "#/$defs/person"}},
    "steps": {"type": "array", "minItems": 2, "items": {"type": "object", "required": ["n", "text"], "properties": {"n": {"type": "integer", "minimum": 1}, "text": {"type": "string", "minLength": 1}}}},
    "created": {"type": "string", "format": "date-time"},
    "estimate": {"type": ["number", "null"], "minimum": 0, "multipleOf": 0.5},
    "links": {"type": "object", "additionalProperties": {"type": "string", "format": "uri"}}
  },
  "$defs": {
    "person": {"type": "object", "required": ["name", "email"], "additionalProperties": false,
      "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"}, "role": {"enum": ["dev", "qa", "pm"]}}}
  }
}`

func BenchmarkSynthesize(b *testing.B) {
	schema := []byte(benchSchema)
	for i := 0; b.Loop(); i++ {
		out, err := Synthesize(schema, int64(i%8))
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			mustValidate(b, benchSchema, out)
		}
	}
}
