package contractdiff_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"agentc.dev/agentc/compile"
	"agentc.dev/agentc/contractdiff"
	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/schemagen"
	"agentc.dev/agentc/manifest"
	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/testmodel"
)

// Sizes of the property test: schema changes made per base schema, and
// values synthesized per schema and derived from them.
const (
	changesPerBase = 12
	seedsPerSchema = 12
	derivedPerSeed = 3
)

// TestCompatibleIsIncluded checks the claim a compatible verdict makes,
// against the validator rather than the engine: for schema pairs made by
// changing base schemas (enum values, required members, properties,
// additionalProperties, bounds, types), where Compare calls every change
// of an output compatible, each value valid under the new schema is valid
// under the old; where it calls every change of an input compatible, each
// value valid under the old is valid under the new. The values come from
// testmodel.Synthesize with many seeds and from edits of those values.
func TestCompatibleIsIncluded(t *testing.T) {
	bases := baseSchemas(t)
	rng := rand.New(rand.NewPCG(17, 2))
	var pairs, compatible, values int
	for bi, base := range bases {
		for range changesPerBase {
			changed := changeSchema(rng, base)
			if equalJSON(base, changed) {
				continue
			}
			for _, p := range [][2]any{{base, changed}, {changed, base}} {
				for _, asInput := range []bool{false, true} {
					pairs++
					fs, err := contractdiff.Compare(agentWith(t, p[0], asInput), agentWith(t, p[1], asInput))
					if err != nil {
						t.Fatalf("base %d: %v", bi, err)
					}
					if len(fs) == 0 || slices.ContainsFunc(fs, func(f contractdiff.Finding) bool { return f.Class != contractdiff.Compatible }) {
						continue
					}
					compatible++
					// The output may only narrow: new within old. The input
					// may only widen: old within new.
					sub, super := p[1], p[0]
					if asInput {
						sub, super = p[0], p[1]
					}
					n, bad := counterexample(t, rng, sub, super)
					values += n
					if bad != nil {
						t.Errorf("base %d: compatible %s change %s -> %s (findings %+v), but %s is valid under %s and not under %s",
							bi, map[bool]string{false: "output", true: "input"}[asInput], js(p[0]), js(p[1]), fs, js(bad), js(sub), js(super))
					}
				}
			}
		}
	}
	t.Logf("%d base schemas, %d schema pairs compared, %d called compatible, %d values checked against them", len(bases), pairs, compatible, values)
	// The check must have had something to check.
	if compatible < 100 || values < 10000 {
		t.Errorf("only %d compatible pairs and %d values: the generator lost its reach", compatible, values)
	}
}

// counterexample returns how many values it tried, and one valid under sub
// and not under super if it found one.
func counterexample(t *testing.T, rng *rand.Rand, sub, super any) (int, any) {
	subS, err := plan.CompileSchema(sub)
	if err != nil {
		t.Fatalf("%s: %v", js(sub), err)
	}
	superS, err := plan.CompileSchema(super)
	if err != nil {
		t.Fatalf("%s: %v", js(super), err)
	}
	consts := constants(sub, super)
	n := 0
	try := func(v any) any {
		n++
		if subS.Validate(v) == nil && superS.Validate(v) != nil {
			return v
		}
		return nil
	}
	for _, from := range []any{sub, super} {
		raw, _ := json.Marshal(from)
		for seed := range int64(seedsPerSchema) {
			out, err := testmodel.Synthesize(raw, seed)
			if err != nil {
				break // an unsatisfiable schema has no value to check
			}
			v, err := plan.UnmarshalJSONValue(out)
			if err != nil {
				t.Fatal(err)
			}
			if bad := try(v); bad != nil {
				return n, bad
			}
			for range derivedPerSeed {
				if bad := try(schemagen.Mutate(rng, v, consts)); bad != nil {
					return n, bad
				}
			}
		}
	}
	return n, nil
}

// baseSchemas are the schemas of the rule cases and the examples' input
// and output schemas.
func baseSchemas(t *testing.T) []any {
	var out []any
	readJSONL(t, "testdata/rules.jsonl", func(_ int, _ []byte, c map[string]any) {
		out = append(out, c["old"], c["new"])
	})
	names, err := filepath.Glob("../examples/*.*")
	if err != nil || len(names) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, name := range names {
		comp := compile.New(manifest.NewLoader())
		insts, err := comp.Loader().Load([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		p, ds, err := comp.Build(insts[0])
		if err != nil || p == nil {
			t.Fatalf("%s: %v %v", name, err, ds)
		}
		for _, raw := range []json.RawMessage{inputOf(p.Agent), outputOf(p.Agent)} {
			if raw == nil {
				continue
			}
			v, err := plan.UnmarshalJSONValue(raw)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func inputOf(a plan.Agent) json.RawMessage {
	if a.Input == nil {
		return nil
	}
	return a.Input.Schema
}

func outputOf(a plan.Agent) json.RawMessage {
	if a.Output == nil {
		return nil
	}
	return a.Output.Schema
}

// changeSchema returns a copy of doc with one or two of the changes the
// rules name made at subschemas picked at random.
func changeSchema(rng *rand.Rand, doc any) any {
	doc = schemagen.Clone(doc)
	for range 1 + rng.IntN(2) {
		var nodes []map[string]any
		inclusion.Walk(doc, func(_, _ string, sub any) {
			if m, ok := sub.(map[string]any); ok {
				nodes = append(nodes, m)
			}
		})
		if len(nodes) == 0 {
			return doc
		}
		changeNode(rng, nodes[rng.IntN(len(nodes))])
	}
	return doc
}

var (
	types      = []any{"string", "integer", "number", "boolean", "object", "array", "null"}
	boundWords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
	names      = []string{"a", "b", "severity", "title", "zz"}
)

// changeNode makes one change to the schema object m.
func changeNode(rng *rand.Rand, m map[string]any) {
	switch rng.IntN(6) {
	case 0: // enum: a value added or removed
		l, _ := m["enum"].([]any)
		if len(l) > 1 && rng.IntN(2) == 0 {
			i := rng.IntN(len(l))
			m["enum"] = slices.Delete(slices.Clone(l), i, i+1)
		} else {
			m["enum"] = append(slices.Clone(l), pick(rng, []any{"critical", "low", json.Number("3"), true, nil}))
		}
	case 1: // required: a member added or removed
		l, _ := m["required"].([]any)
		if len(l) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(l))
			if l = slices.Delete(slices.Clone(l), i, i+1); len(l) == 0 {
				delete(m, "required")
			} else {
				m["required"] = l
			}
		} else {
			name := pick(rng, names)
			if props, ok := m["properties"].(map[string]any); ok && len(props) > 0 && rng.IntN(2) == 0 {
				name = pick(rng, slices.Sorted(maps.Keys(props)))
			}
			if !slices.Contains(l, any(name)) {
				m["required"] = append(slices.Clone(l), name)
			}
		}
	case 2: // properties: one added or removed
		props, _ := m["properties"].(map[string]any)
		if len(props) > 0 && rng.IntN(2) == 0 {
			delete(props, pick(rng, slices.Sorted(maps.Keys(props))))
		} else {
			if props == nil {
				props = map[string]any{}
				m["properties"] = props
			}
			props[pick(rng, names)] = map[string]any{"type": pick(rng, types)}
		}
	case 3: // additionalProperties: closed, opened or typed
		switch rng.IntN(3) {
		case 0:
			m["additionalProperties"] = false
		case 1:
			delete(m, "additionalProperties")
		default:
			m["additionalProperties"] = map[string]any{"type": "string"}
		}
	case 4: // a bound raised, lowered, added or removed
		k := pick(rng, boundWords)
		if _, ok := m[k]; ok && rng.IntN(3) == 0 {
			delete(m, k)
			return
		}
		old, _ := m[k].(json.Number)
		n, err := old.Int64()
		if err != nil {
			n = int64(rng.IntN(4))
		}
		m[k] = json.Number(fmt.Sprint(max(0, n+int64(rng.IntN(5))-2)))
	default: // type: changed, widened to a list, or removed
		switch rng.IntN(3) {
		case 0:
			m["type"] = pick(rng, types)
		case 1:
			cur, ok := m["type"].(string)
			if !ok {
				cur = pick(rng, types).(string)
			}
			if other := pick(rng, types); other != cur {
				m["type"] = []any{cur, other}
			}
		default:
			delete(m, "type")
		}
	}
}

// constants are the names and values the two schemas mention, which a
// derived value tries in place of a member.
func constants(docs ...any) []any {
	out := []any{nil, true, false, json.Number("0"), json.Number("-1"), json.Number("1.5"), json.Number("100000"), "", "x", []any{}, map[string]any{}}
	for _, doc := range docs {
		inclusion.Walk(doc, func(_, _ string, sub any) {
			m, ok := sub.(map[string]any)
			if !ok {
				return
			}
			if l, ok := m["enum"].([]any); ok {
				out = append(out, l...)
			}
			if props, ok := m["properties"].(map[string]any); ok {
				for name := range props {
					out = append(out, name)
				}
			}
			for _, k := range boundWords {
				if n, ok := m[k].(json.Number); ok {
					out = append(out, n, json.Number(n.String()+"1"))
				}
			}
		})
	}
	return out
}

func pick[T any](rng *rand.Rand, l []T) T { return l[rng.IntN(len(l))] }

func equalJSON(a, b any) bool { return js(a) == js(b) }

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
