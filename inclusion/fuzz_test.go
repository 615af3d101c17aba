package inclusion_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// FuzzVerdicts holds the engine's Yes verdicts on random schemas against
// the validator, as TestDifferential does on the corpora: the fuzz input
// is read as the choices of a small schema generator, for a schema and a
// second one to compare it with.
func FuzzVerdicts(f *testing.F) {
	edge := edgeValues(f)
	// The seeds are in testdata/fuzz/FuzzVerdicts.
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &schemaGen{data: data}
		a, b := g.pair()
		var corpus instanceSet
		for _, v := range edge {
			corpus.add(v)
		}
		for _, v := range derivedValues(a, b) {
			corpus.add(v)
		}
		corpus.synthesized(a, 0, 1)
		corpus.synthesized(b, 0)
		d := &differ{t: t, inst: corpus.sorted(), done: map[string]bool{}, targetedMax: 4000}
		var c tally
		d.document(&c, "schema A", a)
		d.document(&c, "schema B", b)
		d.pair(&c, "A ⊆ B", a, b)
		d.pair(&c, "B ⊆ A", b, a)
		if c.wrong > 0 {
			t.Logf("A: %s\nB: %s", short(a), short(b))
		}
	})
}

// schemaGen makes JSON Schemas from a byte stream: each byte is a choice,
// and a stream that runs out chooses 0, the simplest.
type schemaGen struct {
	data  []byte
	pos   int
	draft int // index into fuzzDrafts
}

func (g *schemaGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

func (g *schemaGen) pick(n int) int { return g.next() % n }

var (
	fuzzDrafts = []string{"", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema#"}
	fuzzValues = []string{`null`, `true`, `false`, `0`, `1`, `-1`, `2`, `0.5`, `1.5`, `1.0`, `""`, `"a"`, `"ab"`, `"abc"`,
		`[]`, `[1]`, `["a"]`, `[1,1]`, `{}`, `{"a":1}`, `{"b":"x"}`, `1e300`, `"A1"`, `4`, `0.3`, `["a",1]`, `[1,2]`, `{"a":"b","c":[]}`}
	fuzzNumbers  = []string{"0", "1", "-1", "2", "3", "0.5", "1.5", "10", "-0.5", "1e300", "2.5", "0.1"}
	fuzzCounts   = []string{"0", "1", "2", "3"}
	fuzzNames    = []string{"a", "b", "c"}
	fuzzPatterns = []string{"^a", "a$", "^[0-9]+$", ".", "^$", "b", "^[a-c]*$"}
	fuzzFormats  = []string{"email", "date", "ipv4", "uuid", "unknown-format", "date-time", "uri"}
	fuzzTypes    = []string{"null", "boolean", "integer", "number", "string", "array", "object"}
)

func (g *schemaGen) value() any {
	v, _ := decodeJSON(fuzzValues[g.pick(len(fuzzValues))])
	return v
}

func (g *schemaGen) number() any { return json.Number(fuzzNumbers[g.pick(len(fuzzNumbers))]) }
func (g *schemaGen) count() any  { return json.Number(fuzzCounts[g.pick(len(fuzzCounts))]) }
func (g *schemaGen) name() string {
	return fuzzNames[g.pick(len(fuzzNames))]
}

func decodeJSON(s string) (any, error) {
	var out instanceSet
	out.addJSON([]byte(s))
	if len(out.list) == 0 {
		return nil, fmt.Errorf("not JSON: %s", s)
	}
	return out.list[0].v, nil
}

func (g *schemaGen) defsKey() string {
	if g.draft >= 2 {
		return "definitions"
	}
	return "$defs"
}

// pair makes the two schemas: the second is made afresh, or is the first
// with a keyword removed or added.
func (g *schemaGen) pair() (any, any) {
	g.draft = g.pick(len(fuzzDrafts))
	a := g.root()
	switch g.pick(3) {
	case 0:
		return a, g.root()
	case 1:
		if m, ok := a.(map[string]any); ok && len(m) > 0 {
			ms := mutants(m, 64)
			if len(ms) > 0 {
				return a, ms[g.pick(len(ms))]
			}
		}
		return a, g.root()
	default:
		m, ok := a.(map[string]any)
		if !ok {
			return a, g.root()
		}
		c := make(map[string]any, len(m)+1)
		for k, v := range m {
			c[k] = v
		}
		g.keyword(c, 1)
		return a, c
	}
}

func (g *schemaGen) root() any {
	s := g.schema(0)
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if fuzzDrafts[g.draft] != "" {
		m["$schema"] = fuzzDrafts[g.draft]
	}
	if g.pick(2) == 1 {
		defs := map[string]any{}
		for i := range 1 + g.pick(2) {
			defs[fmt.Sprintf("d%d", i)] = g.schema(2)
		}
		m[g.defsKey()] = defs
	}
	return m
}

func (g *schemaGen) schema(depth int) any {
	switch c := g.next(); {
	case c == 1:
		return true
	case c == 2:
		return false
	}
	m := map[string]any{}
	for range 1 + g.pick(3) {
		g.keyword(m, depth)
	}
	return m
}

func (g *schemaGen) schemas(depth int) []any {
	var out []any
	for range 1 + g.pick(3) {
		out = append(out, g.schema(depth+1))
	}
	return out
}

// keyword adds one keyword to a schema object; past depth 3 only those
// without subschemas.
func (g *schemaGen) keyword(m map[string]any, depth int) {
	k := g.pick(44)
	if depth >= 3 {
		k %= 16
	}
	switch k {
	case 0:
		m["type"] = fuzzTypes[g.pick(len(fuzzTypes))]
	case 1:
		m["type"] = []any{fuzzTypes[g.pick(len(fuzzTypes))], fuzzTypes[g.pick(len(fuzzTypes))]}
	case 2:
		m["enum"] = []any{g.value(), g.value()}
	case 3:
		m["const"] = g.value()
	case 4:
		m["minimum"] = g.number()
	case 5:
		m["maximum"] = g.number()
	case 6:
		if g.draft == 5 {
			m["exclusiveMinimum"] = g.pick(2) == 1
		} else {
			m["exclusiveMinimum"] = g.number()
		}
	case 7:
		if g.draft == 5 {
			m["exclusiveMaximum"] = g.pick(2) == 1
		} else {
			m["exclusiveMaximum"] = g.number()
		}
	case 8:
		m["multipleOf"] = json.Number([]string{"1", "2", "0.5", "3", "0.1", "1.5"}[g.pick(6)])
	case 9:
		m["minLength"] = g.count()
	case 10:
		m["maxLength"] = g.count()
	case 11:
		m["pattern"] = fuzzPatterns[g.pick(len(fuzzPatterns))]
	case 12:
		m["format"] = fuzzFormats[g.pick(len(fuzzFormats))]
	case 13:
		m["required"] = []any{g.name()}
	case 14:
		m["minItems"] = g.count()
	case 15:
		m["maxItems"] = g.count()
	case 16:
		props := map[string]any{}
		for range 1 + g.pick(2) {
			props[g.name()] = g.schema(depth + 1)
		}
		m["properties"] = props
	case 17:
		m["additionalProperties"] = g.schema(depth + 1)
	case 18:
		m["patternProperties"] = map[string]any{fuzzPatterns[g.pick(len(fuzzPatterns))]: g.schema(depth + 1)}
	case 19:
		m["propertyNames"] = g.schema(depth + 1)
	case 20:
		m["minProperties"] = g.count()
	case 21:
		m["maxProperties"] = g.count()
	case 22:
		m["items"] = g.schema(depth + 1)
	case 23:
		if g.draft <= 1 {
			m["prefixItems"] = g.schemas(depth)
		} else {
			m["items"] = g.schemas(depth)
			if g.pick(2) == 1 {
				m["additionalItems"] = g.schema(depth + 1)
			}
		}
	case 24:
		m["uniqueItems"] = g.pick(2) == 1
	case 25:
		m["contains"] = g.schema(depth + 1)
		if g.pick(2) == 1 {
			m["minContains"] = g.count()
		}
		if g.pick(2) == 1 {
			m["maxContains"] = g.count()
		}
	case 26:
		m["allOf"] = g.schemas(depth)
	case 27:
		m["anyOf"] = g.schemas(depth)
	case 28:
		m["oneOf"] = g.schemas(depth)
	case 29:
		m["not"] = g.schema(depth + 1)
	case 30:
		m["if"] = g.schema(depth + 1)
		if g.pick(3) != 0 {
			m["then"] = g.schema(depth + 1)
		}
		if g.pick(3) != 0 {
			m["else"] = g.schema(depth + 1)
		}
	case 31, 32:
		m["$ref"] = fmt.Sprintf("#/%s/d%d", g.defsKey(), g.pick(2))
	case 33:
		m["$ref"] = "#"
	case 34:
		if g.draft <= 1 || g.draft == 3 {
			m["dependentRequired"] = map[string]any{g.name(): []any{g.name()}}
		} else {
			m["dependencies"] = map[string]any{g.name(): []any{g.name()}}
		}
	case 35:
		if g.draft <= 1 || g.draft == 3 {
			m["dependentSchemas"] = map[string]any{g.name(): g.schema(depth + 1)}
		} else {
			m["dependencies"] = map[string]any{g.name(): g.schema(depth + 1)}
		}
	case 36:
		m["unevaluatedProperties"] = g.schema(depth + 1)
	case 37:
		m["unevaluatedItems"] = g.schema(depth + 1)
	case 38:
		m["$anchor"] = "x"
		m["$ref"] = "#x"
	case 39:
		m["type"] = "object"
		m["properties"] = map[string]any{g.name(): g.schema(depth + 1)}
		m["additionalProperties"] = false
	case 40:
		// A short interval and a multipleOf: often no multiple in it.
		lo, _ := new(big.Rat).SetString(fuzzNumbers[g.pick(len(fuzzNumbers))])
		hi := new(big.Rat).Add(lo, big.NewRat(int64(g.pick(5)), int64(1+g.pick(4))))
		lower, upper := "minimum", "maximum"
		if g.draft != 5 && g.pick(2) == 1 {
			lower = "exclusiveMinimum"
		}
		if g.draft != 5 && g.pick(2) == 1 {
			upper = "exclusiveMaximum"
		}
		m[lower] = json.Number(lo.FloatString(3))
		m[upper] = json.Number(hi.FloatString(3))
		if g.draft == 5 {
			m["exclusiveMinimum"] = g.pick(2) == 1
			m["exclusiveMaximum"] = g.pick(2) == 1
		}
		m["multipleOf"] = json.Number([]string{"2", "0.5", "3", "0.1", "1.5", "0.3", "7"}[g.pick(7)])
	case 41:
		// An enum or a const beside keywords that may reject every member.
		if g.pick(2) == 0 {
			m["enum"] = []any{g.value(), g.value(), g.value()}
		} else {
			m["const"] = g.value()
		}
		g.keyword(m, depth+1)
	case 42:
		// contains against items, prefixItems closed by items false, and
		// counts.
		m["contains"] = g.schema(depth + 1)
		switch g.pick(3) {
		case 0:
			m["items"] = g.schema(depth + 1)
		case 1:
			if g.draft <= 1 {
				m["prefixItems"] = g.schemas(depth)
				m["items"] = false
			} else {
				m["items"] = g.schemas(depth)
				m["additionalItems"] = false
			}
		}
		for _, k := range []string{"minContains", "maxContains", "maxItems", "minItems"} {
			if g.pick(3) == 0 {
				m[k] = g.count()
			}
		}
	case 43:
		// Several contains through allOf, within a length.
		var list []any
		for range 2 + g.pick(2) {
			c := map[string]any{"contains": g.schema(depth + 1)}
			if g.pick(2) == 1 {
				c[[]string{"minContains", "maxContains"}[g.pick(2)]] = g.count()
			}
			list = append(list, c)
		}
		m["allOf"] = list
		m["maxItems"] = g.count()
	}
}

// derivedValues are values near the constants of schemas: their enum and
// const members, the numbers they hold and their neighbours, strings of
// the lengths they name, and arrays and objects made of these.
func derivedValues(docs ...any) []any {
	var atoms []any
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				walk(y, k)
			}
		case []any:
			for _, y := range x {
				walk(y, key)
			}
			if key == "enum" || key == "const" {
				atoms = append(atoms, x)
			}
		case json.Number:
			r, ok := new(big.Rat).SetString(string(x))
			if !ok || len(x) > 40 {
				atoms = append(atoms, x)
				return
			}
			for _, delta := range []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(1, 2), big.NewRat(-1, 2)} {
				n := new(big.Rat).Add(r, delta)
				atoms = append(atoms, json.Number(n.FloatString(3)))
				if n.IsInt() {
					atoms = append(atoms, json.Number(n.RatString()))
					if c := n.Num().Int64(); n.Num().IsInt64() && c >= 0 && c < 8 {
						atoms = append(atoms, strings.Repeat("a", int(c)), strings.Repeat("1", int(c)))
						arr := make([]any, c)
						for i := range arr {
							arr[i] = json.Number(fmt.Sprint(i))
						}
						atoms = append(atoms, arr)
						obj := map[string]any{}
						for i := range c {
							obj[string(rune('a'+i))] = json.Number("1")
						}
						atoms = append(atoms, obj)
					}
				}
			}
		default:
			atoms = append(atoms, x)
		}
	}
	for _, d := range docs {
		walk(d, "")
	}
	out := append([]any(nil), atoms...)
	for _, a := range atoms {
		out = append(out, []any{a}, []any{a, a}, map[string]any{"a": a}, map[string]any{"b": a, "a": a}, map[string]any{"c": a})
	}
	return out
}
