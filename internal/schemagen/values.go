package schemagen

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"agentc.dev/agentc/plan"
	"agentc.dev/agentc/runtime/testmodel"
)

func decode(data []byte) (any, error) { return plan.UnmarshalJSONValue(data) }

// Instance is one JSON value, as the validator reads it, with its
// canonical text.
type Instance struct {
	Text string
	V    any
}

// Set is a set of JSON values, deduplicated by canonical JSON. The zero
// value is an empty set.
type Set struct {
	List []Instance
	seen map[string]bool
}

// Add adds a value, unless the set holds it.
func (s *Set) Add(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[string(b)] {
		return
	}
	s.seen[string(b)] = true
	s.List = append(s.List, Instance{string(b), v})
}

// AddJSON adds the value data holds, if it is JSON.
func (s *Set) AddJSON(data []byte) {
	if v, err := decode(data); err == nil {
		s.Add(v)
	}
}

// Sorted orders the values shortest first, so that the first
// counterexample found is a small one.
func (s *Set) Sorted() []Instance {
	sort.SliceStable(s.List, func(i, j int) bool {
		if len(s.List[i].Text) != len(s.List[j].Text) {
			return len(s.List[i].Text) < len(s.List[j].Text)
		}
		return s.List[i].Text < s.List[j].Text
	})
	return s.List
}

// Synthesized adds what the test model's generator makes for a schema,
// one value a seed.
func (s *Set) Synthesized(schema any, seeds ...int64) {
	s.SynthesizedUpTo(schema, -1, seeds...)
}

// SynthesizedUpTo is Synthesized for a schema of at most size bytes of
// JSON (when size >= 0).
func (s *Set) SynthesizedUpTo(schema any, size int, seeds ...int64) {
	data, err := json.Marshal(schema)
	if err != nil || size >= 0 && len(data) > size {
		return
	}
	for _, seed := range seeds {
		if out, err := testmodel.Synthesize(data, seed); err == nil {
			s.AddJSON(out)
		}
	}
}

// Derived are values near the constants of schemas: their enum and const
// members, the numbers they hold and their neighbours, strings of the
// lengths they name, and arrays and objects made of these.
func Derived(docs ...any) []any {
	var atoms []any
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], k)
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

// Atoms are the scalar values and member names of schemas, with the
// generator's own values: what Mutate and Random build values of.
func Atoms(docs ...any) []any {
	var out []any
	for _, s := range Values {
		out = append(out, mustJSON(s))
	}
	out = append(out, "x", "c", json.Number("100000"), json.Number("-1.5"))
	for _, doc := range docs {
		var walk func(v any, key string)
		walk = func(v any, key string) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					if key == "properties" || key == "patternProperties" || key == "dependentRequired" || key == "dependentSchemas" || key == "dependencies" {
						out = append(out, k)
					}
					walk(x[k], k)
				}
			case []any:
				for _, y := range x {
					walk(y, key)
				}
			case string:
				if key == "enum" || key == "const" || key == "required" {
					out = append(out, x)
				}
			case json.Number, bool, nil:
				out = append(out, x)
			}
		}
		walk(doc, "")
	}
	return out
}

// Mutate returns a copy of v with one member, item or the whole replaced,
// added or removed, from atoms.
func Mutate(rng *rand.Rand, v any, atoms []any) any {
	v = Clone(v)
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		switch {
		case len(keys) > 0 && rng.IntN(3) == 0:
			delete(x, pick(rng, keys))
		case len(keys) > 0 && rng.IntN(2) == 0:
			k := pick(rng, keys)
			x[k] = Mutate(rng, x[k], atoms)
		default:
			if name, ok := pick(rng, atoms).(string); ok {
				x[name] = Clone(pick(rng, atoms))
			}
		}
		return x
	case []any:
		switch {
		case len(x) > 0 && rng.IntN(3) == 0:
			return x[:len(x)-1]
		case len(x) > 0 && rng.IntN(2) == 0:
			i := rng.IntN(len(x))
			x[i] = Mutate(rng, x[i], atoms)
			return x
		case len(x) > 0 && rng.IntN(2) == 0:
			return append(x, Clone(x[rng.IntN(len(x))]))
		default:
			return append(x, Clone(pick(rng, atoms)))
		}
	}
	if rng.IntN(3) == 0 {
		return Random(rng, atoms, 2)
	}
	return Clone(pick(rng, atoms))
}

// Random makes a JSON value of atoms, arrays and objects nested at most
// depth deep, member names among the string atoms.
func Random(rng *rand.Rand, atoms []any, depth int) any {
	k := rng.IntN(5)
	if depth <= 0 {
		k = 0
	}
	switch k {
	case 3:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = Random(rng, atoms, depth-1)
		}
		return l
	case 4:
		m := map[string]any{}
		for range rng.IntN(4) {
			name, ok := pick(rng, atoms).(string)
			if !ok {
				name = pick(rng, names)
			}
			m[name] = Random(rng, atoms, depth-1)
		}
		return m
	}
	return Clone(pick(rng, atoms))
}

func pick[T any](rng *rand.Rand, l []T) T { return l[rng.IntN(len(l))] }

// Clone is a deep copy of a JSON value.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, y := range x {
			m[k] = Clone(y)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, y := range x {
			l[i] = Clone(y)
		}
		return l
	}
	return v
}
