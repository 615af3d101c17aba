package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/testmodel"
)

func mustDoc(t *testing.T, s string) any {
	t.Helper()
	doc, err := plan.UnmarshalJSONValue([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return doc
}

func canon(t *testing.T, s string) string {
	t.Helper()
	b, err := digest.Canonical([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return string(b)
}

// TestLowerFalse: no dialect takes a boolean as a schema. A property that
// must be absent (false, not required) is left out of an object the
// dialect closes, which says the same; a false anywhere else keeps the
// schema out of the dialect, sent as written.
func TestLowerFalse(t *testing.T) {
	absent := `{"type":"object","properties":{"a":{"type":"string"},"x":false}}`
	for _, provider := range []string{"openai", "anthropic"} {
		l, err := Lower(Profiles[provider], "tool", mustDoc(t, absent))
		if err != nil {
			t.Fatal(err)
		}
		if !l.Strict || len(l.Local) > 0 || strings.Contains(string(l.Schema), `"x"`) || !strings.Contains(string(l.Schema), `"additionalProperties":false`) {
			t.Errorf("%s: a property that must be absent: strict %v (%s), local %v, lowered %s; want strict, closed, without it", provider, l.Strict, l.Reason, l.Local, l.Schema)
		}
	}
	for schema, at := range map[string]string{
		absent: "/properties/x", // Gemini's objects are not closed
		`{"type":"object","properties":{"x":false},"required":["x"]}`:                    "/properties/x",
		`{"type":"object","properties":{"a":{"type":"array","items":false}}}`:            "/properties/a/items",
		`{"type":"object","properties":{"a":{"anyOf":[false,{"type":"string"}]}}}`:       "/properties/a/anyOf/0",
		`{"type":"object","properties":{"a":{"type":"string"}},"$defs":{"n":false}}`:     "/$defs/n",
		`{"type":"object","properties":{"a":{"anyOf":[true,{"type":"string"}]}}}`:        "/properties/a/anyOf/0",
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":true}}}}`: "/properties/a/properties/b",
	} {
		for _, provider := range []string{"openai", "anthropic", "google"} {
			if schema == absent && provider != "google" {
				continue
			}
			l, err := Lower(Profiles[provider], "tool", mustDoc(t, schema))
			if err != nil {
				t.Fatal(err)
			}
			if l.Strict || !strings.HasPrefix(l.Reason, at+": a boolean schema") || string(l.Schema) != mustCanon(t, []byte(schema)) {
				t.Errorf("%s, %s: strict %v, reason %q, sent %s; want it sent as written for the boolean at %s", schema, provider, l.Strict, l.Reason, l.Schema, at)
			}
		}
	}
}

// TestLowerPrefixItems: Gemini takes prefixItems, and each of its
// schemas is lowered as any other: what Gemini does not enforce there is
// recorded as local, and a schema that says nothing of its value keeps
// the whole outside the dialect.
func TestLowerPrefixItems(t *testing.T) {
	l, err := Lower(Profiles["google"], "native", mustDoc(t, `{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"type":"string","maxLength":2}],"items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Strict || len(l.Local) != 1 || l.Local[0].Pointer != "/properties/a/prefixItems/0/maxLength" {
		t.Errorf("strict %v (%s), local %v; want strict, maxLength in prefixItems local", l.Strict, l.Reason, l.Local)
	}
	l, err = Lower(Profiles["google"], "native", mustDoc(t, `{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"minimum":0}],"items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if l.Strict || !strings.HasPrefix(l.Reason, "/properties/a/prefixItems/0: ") {
		t.Errorf("strict %v (%s); want outside the dialect at /properties/a/prefixItems/0", l.Strict, l.Reason)
	}
}

// TestLowerWrap: in tool mode an answer that is not an object goes in the
// one member of the output tool's arguments, the schema's definitions at
// the wrapper's root and its other references through the member; an
// object answer, another mode and the test model are not wrapped.
func TestLowerWrap(t *testing.T) {
	list := `{"$defs":{"item":{"type":"string"}},"type":"array","items":{"anyOf":[{"$ref":"#/$defs/item"},{"$ref":"#"}]},"maxItems":3}`
	for _, c := range []struct {
		provider, mode, schema string
		want                   string // the schema sent; "" for not wrapped
	}{
		{"anthropic", "auto", list, `{"$defs":{"item":{"type":"string"}},"additionalProperties":false,"properties":{"value":{"items":{"anyOf":[{"$ref":"#/$defs/item"},{"$ref":"#/properties/value"}]},"maxItems":3,"type":"array"}},"required":["value"],"type":"object"}`},
		{"openai", "tool", `{"type":"string","enum":["a","b"]}`, `{"additionalProperties":false,"properties":{"value":{"enum":["a","b"],"type":"string"}},"required":["value"],"type":"object"}`},
		{"google", "tool", `{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"integer"}]}`, `{"additionalProperties":false,"properties":{"value":{"anyOf":[{"properties":{"a":{"type":"string"}},"type":"object"},{"type":"integer"}]}},"required":["value"],"type":"object"}`},
		{"bedrock", "auto", `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`, `{"additionalProperties":false,"properties":{"value":{"properties":{"a":{"type":"string"}},"type":["object","null"]}},"required":["value"],"type":"object"}`},
		{"openai", "auto", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, ""},
		{"anthropic", "auto", `{"properties":{"a":{"type":"string"}}}`, ""},
		{"google", "auto", list, ""},
		{"openai", "prompted", list, ""},
		{"test", "tool", list, ""},
		// Wrapped, a list is a property: OpenAI holds it to its strict
		// dialect.
		{"openai", "auto", `{"type":"array","items":{"type":"string"}}`, `{"additionalProperties":false,"properties":{"value":{"items":{"type":"string"},"type":"array"}},"required":["value"],"type":"object"}`},
		// Anchors name a place wherever it is; a pointer written with
		// escapes into the definitions stays there.
		{"anthropic", "tool", `{"type":"array","items":{"$ref":"#item"},"$defs":{"i":{"$anchor":"item","type":"string"}}}`, `{"$defs":{"i":{"$anchor":"item","type":"string"}},"additionalProperties":false,"properties":{"value":{"items":{"$ref":"#item"},"type":"array"}},"required":["value"],"type":"object"}`},
		{"bedrock", "tool", `{"type":"array","items":{"$ref":"#/%24defs/i"},"$defs":{"i":{"type":"string"}}}`, `{"$defs":{"i":{"type":"string"}},"additionalProperties":false,"properties":{"value":{"items":{"$ref":"#/%24defs/i"},"type":"array"}},"required":["value"],"type":"object"}`},
	} {
		doc := mustDoc(t, c.schema)
		l, err := Lower(Profiles[c.provider], c.mode, doc)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			if l.Wrap != "" || strings.Contains(string(l.Schema), `"value"`) {
				t.Errorf("%s, %s, %s: wrapped in %q: %s", c.provider, c.mode, c.schema, l.Wrap, l.Schema)
			}
			continue
		}
		if l.Mode != plan.ModeTool || l.Wrap != plan.AnswerMember || string(l.Schema) != c.want {
			t.Errorf("%s, %s, %s: mode %s, wrap %q, sent\n  %s\nwant\n  %s", c.provider, c.mode, c.schema, l.Mode, l.Wrap, l.Schema, c.want)
		}
		if _, err := plan.CompileSchemaJSON(l.Schema); err != nil {
			t.Errorf("%s: the wrapper does not compile: %v", c.schema, err)
		}
		if got, _ := json.Marshal(doc); string(got) != canon(t, c.schema) {
			t.Errorf("%s: wrapping changed the schema it was given: %s", c.schema, got)
		}
	}
}

// TestLowerWrapStrict: the wrapper is lowered as any schema, so a list
// OpenAI could not take at the root goes strict in the member, and what
// its dialect cannot enforce is named where it is in the contract.
func TestLowerWrapStrict(t *testing.T) {
	l, err := Lower(Profiles["openai"], "auto", mustDoc(t, `{"type":"array","items":{"type":"string","maxLength":5},"uniqueItems":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var at []string
	for _, c := range l.Local {
		at = append(at, c.Pointer)
	}
	if !l.Strict || l.Mode != plan.ModeTool || l.Wrap != plan.AnswerMember || fmt.Sprint(at) != "[/items/maxLength /uniqueItems]" {
		t.Errorf("strict %v (%s), mode %s, wrap %q, local %v", l.Strict, l.Reason, l.Mode, l.Wrap, at)
	}
}

// TestLowerWrapRecursive: a list that refers back to itself refers, once
// wrapped, to the member, which keeps its meaning: OpenAI takes it strict,
// Anthropic refuses recursion as before, and the reason speaks of the
// contract as written.
func TestLowerWrapRecursive(t *testing.T) {
	doc := mustDoc(t, `{"type":"array","items":{"anyOf":[{"type":"string"},{"$ref":"#"}]}}`)
	l, err := Lower(Profiles["openai"], "tool", doc)
	if err != nil || !l.Strict || l.Wrap == "" {
		t.Errorf("openai: %v, strict %v (%s), wrap %q", err, l.Strict, l.Reason, l.Wrap)
	}
	l, err = Lower(Profiles["anthropic"], "tool", doc)
	if err != nil || l.Strict || l.Reason != "/items/anyOf/1: a $ref leads back into itself" {
		t.Errorf("anthropic: %v, strict %v, reason %q", err, l.Strict, l.Reason)
	}
	l, err = Lower(Profiles["openai"], "tool", mustDoc(t, `{"type":"array","items":{"type":"string"},"anyOf":[{"$ref":"#/items"},{"maxItems":2}]}`))
	if err != nil || l.Strict || l.Reason != `/anyOf/0/$ref: a $ref to "#/items": only references to $defs, definitions or the whole schema ("#") can be lowered` {
		t.Errorf("a reference the lowering cannot keep: %v, strict %v, reason %q; want it as written", err, l.Strict, l.Reason)
	}
}

// TestLowerWrapRefused: a schema whose references the wrapper cannot
// keep (a resource of its own below the root, dynamic references) is an
// error, not a broken schema sent; a tool's input is never wrapped.
func TestLowerWrapRefused(t *testing.T) {
	for _, schema := range []string{
		`{"type":"array","items":{"$id":"https://example.com/item","type":"object","properties":{"next":{"$ref":"#"}}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"array","items":{"$recursiveRef":"#"}}`,
	} {
		_, err := Lower(Profiles["anthropic"], "tool", mustDoc(t, schema))
		var we *WrapError
		if !errors.As(err, &we) {
			t.Errorf("%s: %v, want a WrapError", schema, err)
		}
	}
	l, err := lowerToolInput(Profiles["openai"], mustDoc(t, `{"type":["object"],"properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`), func(any) error { return nil })
	if err != nil || l.Wrap != "" || strings.Contains(string(l.Schema), `"value"`) {
		t.Errorf("a tool's input: %v, wrap %q, %s", err, l.Wrap, l.Schema)
	}
}

// TestLowerWrapNullable: a null standing for an absent optional property
// inside the definitions, which stay at the wrapper's root, is found where
// the definitions are, and raised.
func TestLowerWrapNullable(t *testing.T) {
	schema := `{"type":["object"],"properties":{"x":{"$ref":"#/$defs/X"}},"required":["x"],"additionalProperties":false,` +
		`"$defs":{"X":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b"],"additionalProperties":false}}}`
	l, err := Lower(Profiles["openai"], "tool", mustDoc(t, schema))
	if err != nil || l.Wrap == "" || !l.Strict {
		t.Fatalf("%v, wrap %q, strict %v (%s)", err, l.Wrap, l.Strict, l.Reason)
	}
	raised, ok := l.Unwrap(plan.Raise(l.Schema, l.Nullable, json.RawMessage(`{"value":{"x":{"a":null,"b":"y"}}}`)))
	if !ok || string(raised) != `{"x":{"b":"y"}}` {
		t.Errorf("raised %s (nullable %v), want the absent a left out", raised, l.Nullable)
	}
}

func TestLowerLocal(t *testing.T) {
	tests := []struct {
		schema            string
		openai, anthropic []string // keywords enforced only locally, by pointer order
	}{
		{`{"type":"object","properties":{"a":{"type":"string","enum":["a","b"]}}}`, nil, nil},
		{`{"type":"object","properties":{"a":{"type":"string","maxLength":3}}}`, []string{"maxLength"}, []string{"maxLength"}},
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1}}}`, nil, []string{"minimum"}},
		{`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, nil, nil},
		{`{"type":"object","properties":{"a":{"type":"string","format":"uri"}}}`, []string{"format"}, nil},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","pattern":"^a"},"uniqueItems":true,"minItems":2}}}`,
			[]string{"uniqueItems"}, []string{"minItems", "uniqueItems"}},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer","multipleOf":2}]}}}`, []string{"oneOf"}, []string{"oneOf", "multipleOf"}},
		{`{"type":"object","properties":{"a":{"type":"string","not":{"const":""}}},"$defs":{"d":{"type":"string","minLength":1}}}`,
			[]string{"minLength", "not"}, []string{"minLength", "not"}},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/d","maxLength":4}},"$defs":{"d":{"type":"string"}}}`,
			[]string{"maxLength"}, []string{"maxLength"}},
		// Patterns: a regular one goes to both; lookaround and
		// backreferences to neither; a word boundary not to Anthropic.
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^[A-Z]{3}-\\d{4}$"}}}`, nil, nil},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^(?=.*\\d)[a-z\\d]+$"}}}`, []string{"pattern"}, []string{"pattern"}},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^(?<!x)y"}}}`, []string{"pattern"}, []string{"pattern"}},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^(a)\\1$"}}}`, []string{"pattern"}, []string{"pattern"}},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"\\bword\\b"}}}`, nil, []string{"pattern"}},
		// additionalProperties where no object schema lowers it (an enum
		// of objects) still holds every object value; under a type
		// without object it holds none.
		{`{"type":"object","properties":{"a":{"enum":[{"b":"x"},1],"additionalProperties":false}}}`, []string{"additionalProperties"}, []string{"additionalProperties"}},
		{`{"type":"object","properties":{"a":{"type":"string","additionalProperties":false}}}`, nil, nil},
		// required beside a $ref, whose schema holds the properties: a
		// null there would stand for an absent property the raise removes.
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/n","required":["x"]}},"$defs":{"n":{"type":"object","properties":{"x":{"type":"string"}}}}}`, []string{"required"}, []string{"required"}},
	}
	for _, tt := range tests {
		for provider, want := range map[string][]string{"openai": tt.openai, "anthropic": tt.anthropic} {
			l, err := Lower(Profiles[provider], "tool", mustDoc(t, tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if !l.Strict {
				t.Errorf("%s, %s: not strict: %s", tt.schema, provider, l.Reason)
				continue
			}
			var got []string
			for _, c := range l.Local {
				got = append(got, c.Keyword)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: local %v, want %v", tt.schema, provider, got, want)
			}
		}
	}
}

func TestLowerShape(t *testing.T) {
	tests := []struct {
		name, provider, schema string
		want                   string // the lowered schema
		nullable               []string
	}{
		{"openai closes objects and makes optional properties nullable", "openai",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"T","examples":[{}],
			  "properties":{"a":{"type":"string"},"b":{"type":"integer","default":3},"c":{"enum":["x","y"]},"d":{"$ref":"#/$defs/D"},"e":{"type":["string","null"]}},
			  "required":["a"],"$defs":{"D":{"type":"object","properties":{"n":{"type":"number"}}}}}`,
			`{"type":"object","title":"T","additionalProperties":false,"required":["a","b","c","d","e"],
			  "properties":{"a":{"type":"string"},"b":{"type":["integer","null"]},"c":{"enum":["x","y",null]},
			    "d":{"anyOf":[{"$ref":"#/$defs/D"},{"type":"null"}]},"e":{"type":["string","null"]}},
			  "$defs":{"D":{"type":"object","properties":{"n":{"type":["number","null"]}},"required":["n"],"additionalProperties":false}}}`,
			[]string{"/$defs/D/properties/n", "/properties/b", "/properties/c", "/properties/d"}},
		{"openai moves what it cannot enforce into the description", "openai",
			`{"type":"object","properties":{"s":{"type":"string","description":"A name.","minLength":2,"maxLength":9}},"required":["s"]}`,
			`{"type":"object","additionalProperties":false,"required":["s"],
			  "properties":{"s":{"type":"string","description":"A name.\n\n{maxLength: 9, minLength: 2}"}}}`, nil},
		{"anthropic keeps optional properties optional and $ref alone", "anthropic",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/D","description":"d"},"b":{"oneOf":[{"type":"string"},{"type":"integer"}]}},
			  "$defs":{"D":{"type":"integer","maximum":3}}}`,
			`{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/D","description":"d"},
			  "b":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"$defs":{"D":{"type":"integer","description":"{maximum: 3}"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Lower(Profiles[tt.provider], "tool", mustDoc(t, tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if !l.Strict {
				t.Fatalf("not strict: %s", l.Reason)
			}
			if got, want := string(l.Schema), canon(t, tt.want); got != want {
				t.Errorf("lowered\n got %s\nwant %s", got, want)
			}
			got := append([]string(nil), l.Nullable...)
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.nullable) {
				t.Errorf("nullable %v, want %v", got, tt.nullable)
			}
		})
	}
}

func TestLowerOutsideDialect(t *testing.T) {
	tests := []struct {
		provider, schema, reason string
	}{
		{"openai", `{"type":"array"}`, "an array with no items schema"}, // wrapped in the output tool's arguments
		{"openai", `{"type":"object","additionalProperties":{"type":"string"}}`, "a map"},
		{"anthropic", `{"type":"object","additionalProperties":{"type":"string"}}`, "a map"},
		{"openai", `{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, "patternProperties"},
		{"openai", `{"type":"object","properties":{"a":{"description":"anything"}}}`, "/properties/a: a schema that does not say what its value is"},
		{"openai", `{"type":"object","required":["z"]}`, `required property "z" is not declared`},
		{"openai", `{"type":"object","properties":{"l":{"type":"array"}}}`, "an array with no items schema"},
		{"openai", `{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]}}}`, "items as a list"},
		{"anthropic", `{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`, "leads back into itself"},
		{"openai", deep(12), "nesting deeper than 10 levels"},
		{"openai", `{"type":"object","properties":{"billing":{"type":"object","properties":{"city":{"type":"string"}}},"shipping":{"$ref":"#/properties/billing"}},"required":["shipping"]}`,
			`a $ref to "#/properties/billing": only references to $defs, definitions or the whole schema`},
		{"anthropic", `{"type":"object","properties":{"a":{"$ref":"#foo"}},"$defs":{"f":{"$anchor":"foo","type":"string"}}}`, `a $ref to "#foo"`},
		{"openai", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]},"b":{"$ref":"#/properties/a/oneOf/0"}}}`, `a $ref to "#/properties/a/oneOf/0"`},
	}
	for _, tt := range tests {
		l, err := Lower(Profiles[tt.provider], "auto", mustDoc(t, tt.schema))
		if err != nil {
			t.Fatal(err)
		}
		if l.Strict || !strings.Contains(l.Reason, tt.reason) {
			t.Errorf("%s %s: strict %v, reason %q; want not strict, reason with %q", tt.provider, tt.schema, l.Strict, l.Reason, tt.reason)
		}
		if l.Mode != plan.ModeTool {
			t.Errorf("%s %s: auto chose %s, want the fallback tool", tt.provider, tt.schema, l.Mode)
		}
		want := canon(t, tt.schema)
		if l.Wrap != "" {
			// the answer is not an object: it goes in the tool's arguments' one member
			w, err := wrapAnswer(mustDoc(t, tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			b, err := digest.CanonicalValue(w)
			if err != nil {
				t.Fatal(err)
			}
			want = string(b)
		}
		if string(l.Schema) != want || l.Nullable != nil || l.Local != nil || (l.Wrap != "") != strings.HasPrefix(tt.schema, `{"type":"array"`) {
			t.Errorf("%s %s: a schema outside the dialect must be sent as written, all of it enforced locally: got %s (wrapped in %q)", tt.provider, tt.schema, l.Schema, l.Wrap)
		}
	}
	// Recursion is fine for OpenAI.
	if l, _ := Lower(Profiles["openai"], "auto", mustDoc(t, tests[8].schema)); !l.Strict || l.Mode != plan.ModeNative {
		t.Errorf("openai recursive schema: strict %v (%s), mode %s", l.Strict, l.Reason, l.Mode)
	}
}

func deep(n int) string {
	s := `{"type":"string"}`
	for range n {
		s = `{"type":"object","properties":{"x":` + s + `},"required":["x"]}`
	}
	return s
}

func TestLowerModes(t *testing.T) {
	obj := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	// An object schema that says so only by its properties is typed.
	if l, _ := Lower(Profiles["openai"], "auto", mustDoc(t, `{"properties":{"a":{"type":"string"}},"required":["a"]}`)); !strings.Contains(string(l.Schema), `"type":"object"`) || !l.Strict {
		t.Errorf("lowered %s (strict %v, %s): want the root typed as an object", l.Schema, l.Strict, l.Reason)
	}
	for _, tt := range []struct{ provider, mode, want string }{
		{"openai", "auto", "native"}, {"anthropic", "auto", "tool"}, {"test", "auto", "tool"},
		{"openai", "tool", "tool"}, {"anthropic", "native", "native"}, {"openai", "prompted", "prompted"},
	} {
		l, err := Lower(Profiles[tt.provider], tt.mode, mustDoc(t, obj))
		if err != nil {
			t.Fatal(err)
		}
		if l.Mode != tt.want {
			t.Errorf("%s %s: mode %s, want %s", tt.provider, tt.mode, l.Mode, tt.want)
		}
		if tt.mode == "prompted" && (l.Strict || string(l.Schema) != canon(t, obj)) {
			t.Errorf("prompted: strict %v, schema %s; want the contract, unenforced", l.Strict, l.Schema)
		}
	}
}

// violations checks a lowered schema against a profile's documented rules,
// independently of Lower: every keyword supported, objects closed,
// properties all required where the dialect demands it, and so on.
func violations(prof Profile, doc any) []string {
	var out []string
	bad := func(ptr, f string, args ...any) { out = append(out, ptr+": "+fmt.Sprintf(f, args...)) }
	if m, ok := doc.(map[string]any); !ok || prof.RootObject && !isObjectSchema(m) {
		bad("", "root is not an object schema")
	}
	walkSchema(doc, func(ptr, parent string, sub any) {
		m, ok := sub.(map[string]any)
		if !ok {
			if sub != false || parent != "additionalProperties" {
				bad(ptr, "boolean schema")
			}
			return
		}
		if parent != "$defs" && parent != "definitions" && parent != "" || parent == "" && ptr != "" {
			if !describesValue(m) {
				bad(ptr, "says nothing of its value")
			}
		}
		for k, v := range m {
			switch {
			case k == "title" || k == "description" || k == "$defs" || k == "definitions":
			case !prof.Supported[k]:
				bad(ptr, "keyword %q", k)
			case k == "format" && !prof.Formats[fmt.Sprint(v)]:
				bad(ptr, "format %v", v)
			case k == "minItems" && prof.MinItemsMax >= 0 && fmt.Sprint(v) > fmt.Sprint(prof.MinItemsMax):
				bad(ptr, "minItems %v", v)
			case k == "items" && isList(v):
				bad(ptr, "tuple items")
			}
		}
		if _, ok := m["$ref"]; ok && prof.RefAlone {
			for k := range m {
				if k != "$ref" && k != "title" && k != "description" && k != "$defs" && k != "definitions" {
					bad(ptr, "%q beside $ref", k)
				}
			}
		}
		if isObjectSchema(m) {
			if prof.CloseObjects && m["additionalProperties"] != false {
				bad(ptr, "object not closed")
			}
			if prof.RequireAll {
				props, _ := m["properties"].(map[string]any)
				req, _ := m["required"].([]any)
				if len(req) != len(props) {
					bad(ptr, "%d properties, %d required", len(props), len(req))
				}
				for _, r := range req {
					if _, ok := props[fmt.Sprint(r)]; !ok {
						bad(ptr, "required %v is not a property", r)
					}
				}
			}
		}
	})
	return out
}

// TestLowerCorpus lowers every schema of the real-world SchemaStore sample
// (and the examples' table above) for each provider: a lowered schema is
// within the provider's documented rules, and an answer valid under the
// lowered schema, raised back, either satisfies the contract or fails it
// only at a constraint the lowering recorded as enforced locally.
func TestLowerCorpus(t *testing.T) {
	dir := filepath.Join("..", "testdata", "corpora", "schemastore-sample")
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatalf("the SchemaStore sample: %v", err)
	}
	var index []struct {
		File    string `json:"file"`
		Offline string `json:"jsonschema_v6_offline_compile"`
	}
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatal(err)
	}
	strict := map[string]int{}
	answers := 0
	for _, e := range index {
		if e.Offline != "ok" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		contract, err := plan.CompileSchemaJSON(raw)
		if err != nil {
			continue
		}
		doc, err := plan.UnmarshalJSONValue(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := digest.Canonical(raw); err != nil {
			continue // vet refuses it (SCHEMA_NUMBER); it is never lowered
		}
		name := filepath.Base(e.File)
		for _, provider := range []string{"openai", "anthropic", "google"} {
			ok, n := checkLowering(t, name, provider, raw, doc, contract, 3)
			if ok {
				strict[provider]++
			}
			answers += n
		}
	}
	t.Logf("strict lowerings: %v; answers checked against their contracts: %d", strict, answers)
	if strict["openai"] < 10 || strict["anthropic"] < 10 || answers < 50 {
		t.Errorf("too few schemas lowered strictly (%v) or answers checked (%d) for the test to mean much", strict, answers)
	}
}

// checkLowering lowers the schema raw (doc, decoded; contract, compiled)
// for provider and holds the lowering to its promises. A schema outside
// the provider's strict dialect is sent as written. A strict one keeps
// the dialect's rules and compiles, and an answer valid under it (what a
// strict provider lets through: the test model's, for seeds 0 to
// seeds-1), raised, fails the contract only at constraints the lowering
// records as local. It reports whether the lowering was strict and how
// many answers it checked. TestLowerCorpus runs it on real schemas,
// FuzzLowerRaise on random ones.
func checkLowering(t testing.TB, name, provider string, raw []byte, doc any, contract *jsonschema.Schema, seeds int64) (strict bool, answers int) {
	t.Helper()
	prof := Profiles[provider]
	l, err := Lower(prof, "auto", doc)
	if err != nil {
		t.Errorf("%s, %s: %v", name, provider, err)
		return false, 0
	}
	if !l.Strict {
		want := mustCanon(t, raw)
		if l.Wrap != "" {
			w, err := wrapAnswer(doc)
			if err != nil {
				t.Fatal(err)
			}
			b, err := digest.CanonicalValue(w)
			if err != nil {
				t.Fatal(err)
			}
			want = string(b)
		}
		if string(l.Schema) != want {
			t.Errorf("%s, %s: outside the dialect (%s) but not sent as written", name, provider, l.Reason)
		}
		return false, 0
	}
	lowered, err := plan.UnmarshalJSONValue(l.Schema)
	if err != nil {
		t.Fatalf("%s, %s: the lowered schema is not JSON: %v", name, provider, err)
	}
	if v := violations(prof, lowered); len(v) > 0 {
		t.Errorf("%s, %s: the lowered schema breaks the dialect's rules:\n  %s\nlowered %s", name, provider, strings.Join(v, "\n  "), l.Schema)
		return true, 0
	}
	if _, err := plan.CompileSchema(lowered); err != nil {
		t.Errorf("%s, %s: the lowered schema does not compile: %v\nlowered %s", name, provider, err, l.Schema)
		return true, 0
	}
	for seed := int64(0); seed < seeds; seed++ {
		answer, err := testmodel.Synthesize(l.Schema, seed)
		if err != nil {
			continue // unsatisfiable under the narrower schema: nothing to check
		}
		answers++
		raised, _ := l.Unwrap(plan.Raise(l.Schema, l.Nullable, answer))
		inst, err := plan.UnmarshalJSONValue(raised)
		if err != nil {
			t.Fatalf("%s, %s: the raised answer is not JSON: %s", name, provider, raised)
		}
		if err := contract.Validate(inst); err != nil {
			if at := unexplained(err, l.Local); len(at) > 0 {
				t.Errorf("%s, %s, seed %d: an answer valid under the lowered schema fails the contract at %v, which the lowering did not record as local\nlowered %s\nanswer  %s\nraised  %s", name, provider, seed, at, l.Schema, answer, raised)
			}
		}
	}
	return true, answers
}

func mustCanon(t testing.TB, raw []byte) string {
	b, err := digest.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unexplained lists the failures of a validation error that no
// constraint enforced only locally accounts for: every failure of an
// allOf-like group must be accounted for, one branch of a failed anyOf or
// oneOf is enough.
func unexplained(err error, local []plan.Constraint) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var walk func(e *jsonschema.ValidationError) []string
	walk = func(e *jsonschema.ValidationError) []string {
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		kw := e.ErrorKind.KeywordPath()
		if _, ok := e.ErrorKind.(*kind.Not); ok && len(kw) == 0 {
			kw = []string{"not"} // the validator's "not" names no keyword
		}
		at := frag + "/" + strings.Join(kw, "/")
		if len(kw) > 0 && kw[0] == "dependency" { // draft-07 "dependencies"
			at = frag + "/dependencies"
		}
		if coveredBy(at, local) {
			return nil
		}
		if len(e.Causes) == 0 {
			return []string{at}
		}
		either := len(kw) > 0 && (kw[len(kw)-1] == "anyOf" || kw[len(kw)-1] == "oneOf")
		var all []string
		for _, c := range e.Causes {
			u := walk(c)
			if either && len(u) == 0 {
				return nil
			}
			all = append(all, u...)
		}
		return all
	}
	return walk(ve)
}

// coveredBy reports whether a failed keyword is one the lowering left to
// local validation, or lies under one (a dropped "not" fails inside it).
func coveredBy(at string, local []plan.Constraint) bool {
	for _, c := range local {
		if at == c.Pointer || strings.HasPrefix(at, c.Pointer+"/") {
			return true
		}
	}
	return false
}

func TestRaise(t *testing.T) {
	l, err := Lower(Profiles["openai"], "native", mustDoc(t, `{"type":"object","properties":{
		"a":{"type":"string"},"o":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["y"]},
		"l":{"type":"array","items":{"$ref":"#/$defs/I"}},"u":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/I"}]},"n":{"type":["null","string"]}},
		"required":["l","u"],"$defs":{"I":{"type":"object","properties":{"k":{"const":1}}}}}`))
	if err != nil || !l.Strict {
		t.Fatalf("%v %s", err, l.Reason)
	}
	answer := `{"a":null,"o":{"x":null,"y":"why"},"l":[{"k":null},{"k":1}],"u":{"k":null},"n":null}`
	want := `{"l":[{},{"k":1}],"n":null,"o":{"y":"why"},"u":{}}`
	if got := plan.Raise(l.Schema, l.Nullable, json.RawMessage(answer)); canon(t, string(got)) != want {
		t.Errorf("raised %s, want %s", got, want)
	}
	if got := plan.Raise(l.Schema, l.Nullable, json.RawMessage(`not json`)); string(got) != "not json" {
		t.Errorf("non-JSON answer changed: %s", got)
	}
}

// TestRaiseChoosesTheBranchGenerated: of an anyOf, the branch the value is
// valid against is the one raised, not merely the first whose type fits.
func TestRaiseChoosesTheBranchGenerated(t *testing.T) {
	contract := `{"type":"object","properties":{"shape":{"anyOf":[
		{"type":"object","properties":{"kind":{"const":"circle"},"note":{"type":"string"}},"required":["kind"]},
		{"type":"object","properties":{"kind":{"const":"square"},"note":{"type":"string"},"side":{"type":"number"}},"required":["kind"]}]}},
		"required":["shape"]}`
	l, err := Lower(Profiles["openai"], "native", mustDoc(t, contract))
	if err != nil || !l.Strict {
		t.Fatalf("%v %s", err, l.Reason)
	}
	got := plan.Raise(l.Schema, l.Nullable, json.RawMessage(`{"shape":{"kind":"square","note":"x","side":null}}`))
	if want := `{"shape":{"kind":"square","note":"x"}}`; canon(t, string(got)) != want {
		t.Errorf("raised %s, want %s", got, want)
	}
}

// TestRaiseDeep: a recursive schema's nulls are raised however deep the
// value goes.
func TestRaiseDeep(t *testing.T) {
	l, err := Lower(Profiles["openai"], "native", mustDoc(t, `{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#"}},"required":["name"]}`))
	if err != nil || !l.Strict {
		t.Fatalf("%v %s", err, l.Reason)
	}
	answer, want := `{"name":"leaf","child":null}`, `{"name":"leaf"}`
	for range 40 {
		answer = `{"name":"n","child":` + answer + `}`
		want = `{"child":` + want + `,"name":"n"}`
	}
	if got := plan.Raise(l.Schema, l.Nullable, json.RawMessage(answer)); canon(t, string(got)) != want {
		t.Errorf("a null 41 levels down was not raised:\n got %s", got)
	}
}
