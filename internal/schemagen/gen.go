// Package schemagen makes random JSON Schemas, changes of them and JSON
// values near them: the material of the tests that hold the inclusion
// engine's verdicts and the contract differ's against the validator. Only
// tests import it.
package schemagen

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
)

// Gen makes JSON Schemas from a byte stream: each byte is a choice, and a
// stream that runs out chooses 0, the simplest. A fuzz target hands it its
// input; a property test random bytes, whose number bounds the size.
type Gen struct {
	data  []byte
	pos   int
	draft int // index into Drafts
}

// New returns a generator that reads its choices from data.
func New(data []byte) *Gen { return &Gen{data: data} }

// NewRand returns a generator of n random choices.
func NewRand(rng *rand.Rand, n int) *Gen {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	return New(data)
}

func (g *Gen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

func (g *Gen) pick(n int) int { return g.next() % n }

var (
	// Drafts are the $schema values a document is made with; "" leaves
	// the validator's default, 2020-12.
	Drafts = []string{"", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema#"}
	// Values are the JSON values enum, const and the value sampler use.
	Values = []string{`null`, `true`, `false`, `0`, `1`, `-1`, `2`, `0.5`, `1.5`, `1.0`, `""`, `"a"`, `"ab"`, `"abc"`,
		`[]`, `[1]`, `["a"]`, `[1,1]`, `{}`, `{"a":1}`, `{"b":"x"}`, `1e300`, `"A1"`, `4`, `0.3`, `["a",1]`, `[1,2]`, `{"a":"b","c":[]}`}
	numbers  = []string{"0", "1", "-1", "2", "3", "0.5", "1.5", "10", "-0.5", "1e300", "2.5", "0.1"}
	counts   = []string{"0", "1", "2", "3"}
	names    = []string{"a", "b", "c"}
	patterns = []string{"^a", "a$", "^[0-9]+$", ".", "^$", "b", "^[a-c]*$"}
	formats  = []string{"email", "date", "ipv4", "uuid", "unknown-format", "date-time", "uri"}
	types    = []string{"null", "boolean", "integer", "number", "string", "array", "object"}
)

// The index of draft 4 in Drafts, whose exclusive bounds are flags.
const draft04 = 5

func (g *Gen) value() any { return mustJSON(Values[g.pick(len(Values))]) }

func (g *Gen) number() any { return json.Number(numbers[g.pick(len(numbers))]) }
func (g *Gen) count() any  { return json.Number(counts[g.pick(len(counts))]) }
func (g *Gen) name() string {
	return names[g.pick(len(names))]
}

func mustJSON(s string) any {
	v, err := decode([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("not JSON: %s", s))
	}
	return v
}

func (g *Gen) defsKey() string {
	if g.draft >= 2 {
		return "definitions"
	}
	return "$defs"
}

// Pair makes two schemas: the second is made afresh, or is the first with
// a keyword removed or added.
func (g *Gen) Pair() (any, any) {
	g.draft = g.pick(len(Drafts))
	a := g.root()
	switch g.pick(3) {
	case 0:
		return a, g.root()
	case 1:
		if m, ok := a.(map[string]any); ok && len(m) > 0 {
			ms := Mutants(m, 64)
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

// Root makes a schema document of a draft picked at random.
func (g *Gen) Root() any {
	g.draft = g.pick(len(Drafts))
	return g.repair(g.root())
}

func (g *Gen) root() any {
	s := g.schema(0)
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if Drafts[g.draft] != "" {
		m["$schema"] = Drafts[g.draft]
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

func (g *Gen) schema(depth int) any {
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

func (g *Gen) schemas(depth int) []any {
	var out []any
	for range 1 + g.pick(3) {
		out = append(out, g.schema(depth+1))
	}
	return out
}

// keyword adds one keyword to a schema object; past depth 3 only those
// without subschemas.
func (g *Gen) keyword(m map[string]any, depth int) {
	k := g.pick(44)
	if depth >= 3 {
		k %= 16
	}
	switch k {
	case 0:
		m["type"] = types[g.pick(len(types))]
	case 1:
		m["type"] = []any{types[g.pick(len(types))], types[g.pick(len(types))]}
	case 2:
		m["enum"] = []any{g.value(), g.value()}
	case 3:
		m["const"] = g.value()
	case 4:
		m["minimum"] = g.number()
	case 5:
		m["maximum"] = g.number()
	case 6:
		if g.draft == draft04 {
			m["exclusiveMinimum"] = g.pick(2) == 1
		} else {
			m["exclusiveMinimum"] = g.number()
		}
	case 7:
		if g.draft == draft04 {
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
		m["pattern"] = patterns[g.pick(len(patterns))]
	case 12:
		m["format"] = formats[g.pick(len(formats))]
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
		m["patternProperties"] = map[string]any{patterns[g.pick(len(patterns))]: g.schema(depth + 1)}
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
		lo, _ := new(big.Rat).SetString(numbers[g.pick(len(numbers))])
		hi := new(big.Rat).Add(lo, big.NewRat(int64(g.pick(5)), int64(1+g.pick(4))))
		lower, upper := "minimum", "maximum"
		if g.draft != draft04 && g.pick(2) == 1 {
			lower = "exclusiveMinimum"
		}
		if g.draft != draft04 && g.pick(2) == 1 {
			upper = "exclusiveMaximum"
		}
		m[lower] = json.Number(lo.FloatString(3))
		m[upper] = json.Number(hi.FloatString(3))
		if g.draft == draft04 {
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
