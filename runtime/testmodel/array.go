package testmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// array builds an array: minItems items (more for a varied value), the
// items contains asks for first.
func (g *gen) array(atoms []*jsonschema.Schema, v, depth int) (any, error) {
	at := firstOr(atoms)
	r := arrayRulesOf(atoms)
	lower, upper, err := r.length(at)
	if err != nil {
		return nil, err
	}
	n, childV := g.itemCount(lower, upper, v, depth)
	items := make([]any, 0, n)
	seen := map[string]bool{}
	for i := range n {
		if err := g.step("minItems", at); err != nil {
			return nil, err
		}
		item, err := g.item(atoms, &r, i, childV, depth, seen)
		if err != nil {
			return nil, err
		}
		if r.unique {
			seen[key(item)] = true
		}
		items = append(items, item)
	}
	return items, nil
}

// containsRule is one contains keyword with its bounds.
type containsRule struct {
	s        *jsonschema.Schema
	min, max int // max -1: none
	at       *jsonschema.Schema
}

// arrayRules are the array keywords of a value's atoms, combined.
type arrayRules struct {
	minI, maxI int // maxI -1: none
	unique     bool
	uniqueAt   *jsonschema.Schema
	contains   []containsRule
	limit      int // the first item index an items keyword forbids; -1: none
	limitKw    string
	limitAt    *jsonschema.Schema
}

// arrayRulesOf combines the array keywords of atoms: the tightest bounds
// and every contains.
func arrayRulesOf(atoms []*jsonschema.Schema) arrayRules {
	r := arrayRules{maxI: -1, limit: -1}
	for _, a := range atoms {
		if a.MinItems != nil {
			r.minI = max(r.minI, *a.MinItems)
		}
		if a.MaxItems != nil && (r.maxI < 0 || *a.MaxItems < r.maxI) {
			r.maxI = *a.MaxItems
		}
		if a.UniqueItems {
			r.unique, r.uniqueAt = true, a
		}
		if a.Contains != nil {
			c := containsRule{s: a.Contains, min: 1, max: -1, at: a}
			if a.MinContains != nil {
				c.min = *a.MinContains
			}
			if a.MaxContains != nil {
				c.max = *a.MaxContains
			}
			r.contains = append(r.contains, c)
		}
		if k, kw := forbiddenFrom(a); k >= 0 && (r.limit < 0 || k < r.limit) {
			r.limit, r.limitKw, r.limitAt = k, kw, a
		}
	}
	return r
}

// length returns the least and the most items the rules allow (upper -1:
// no most), or names the keywords that contradict each other.
func (r *arrayRules) length(at *jsonschema.Schema) (lower, upper int, err error) {
	needC := 0
	for _, c := range r.contains {
		if c.max >= 0 && c.min > c.max {
			return 0, 0, unsat("minContains", c.at, "minContains %d exceeds maxContains %d", c.min, c.max)
		}
		needC = max(needC, c.min)
	}
	lower = max(r.minI, needC)
	upper = r.maxI
	if r.limit >= 0 && (upper < 0 || r.limit < upper) {
		upper = r.limit
	}
	if lower > maxItemsCap {
		return 0, 0, unsat("minItems", at, "asks for %d items, more than the %d this model builds", lower, maxItemsCap)
	}
	if upper >= 0 && lower > upper {
		switch {
		case r.maxI >= 0 && r.minI > r.maxI:
			return 0, 0, unsat("minItems", at, "minItems %d exceeds maxItems %d", r.minI, r.maxI)
		case r.limit >= 0 && r.minI > r.limit:
			return 0, 0, unsat(r.limitKw, r.limitAt, "allows at most %d items, fewer than minItems %d", r.limit, r.minI)
		default:
			return 0, 0, unsat("contains", at, "contains needs %d items where at most %d are allowed", needC, upper)
		}
	}
	return lower, upper, nil
}

// itemCount chooses how many items to build, and the variant to ask of
// them: the least allowed in the simplest value, save that a later variant
// of an array that may be empty gets one item; a few more in a varied
// value near the top.
func (g *gen) itemCount(lower, upper, v, depth int) (n, childV int) {
	n, childV = lower, v
	switch {
	case g.simple && v > 0 && lower == 0 && upper != 0:
		n, childV = 1, v-1
	case !g.simple && depth < softDepth:
		room := 2
		if upper >= 0 {
			room = min(room, upper-lower)
		}
		n += g.rng.IntN(room + 1)
	}
	return n, childV
}

// item builds item i: valid against its item schemas and the contains
// schemas it is among the first to satisfy, clear of the contains schemas
// whose maxContains it could exceed, and, under uniqueItems, unlike the
// items before it (seen holds their keys).
func (g *gen) item(atoms []*jsonschema.Schema, r *arrayRules, i, childV, depth int, seen map[string]bool) (any, error) {
	roots, forbidden := itemSchemas(atoms, i)
	if forbidden != nil {
		return nil, forbidden
	}
	var avoid []containsRule
	for _, c := range r.contains {
		if i < c.min {
			roots = append(roots, c.s)
		} else if c.max >= 0 {
			avoid = append(avoid, c)
		}
	}
	tries := 1
	if r.unique || len(avoid) > 0 {
		tries = uniqueTries
	}
	var firstErr error
	for k := range tries {
		iv := childV
		if r.unique {
			iv = childV + i + k
		} else {
			iv = childV + k
		}
		// After a few random clashes, enumerate: the simplest choices
		// with variant iv differ from those with other variants.
		saved := g.simple
		g.simple = g.simple || k >= 4
		val, err := g.value(roots, nil, iv, depth+1)
		g.simple = saved
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if k == 0 {
				break
			}
			continue
		}
		why, err := g.clash(val, avoid, r, seen, i)
		if err != nil {
			return nil, err
		}
		if why == nil {
			return val, nil
		}
		if firstErr == nil {
			firstErr = why
		}
	}
	var ue *UnsatisfiableError
	if r.unique && g.steps > 0 && errors.As(firstErr, &ue) && ue.Keyword != "uniqueItems" && i > 0 {
		firstErr = unsat("uniqueItems", r.uniqueAt, "found no item %d unlike the ones before it", i)
	}
	return nil, firstErr
}

// clash returns why item i, val, cannot be taken: it matches a contains
// schema in avoid, or repeats an item under uniqueItems; nil if it can.
// Every schema in avoid is charged for, clash or not.
func (g *gen) clash(val any, avoid []containsRule, r *arrayRules, seen map[string]bool, i int) (why, err error) {
	for _, c := range avoid {
		if err := g.charge(visits(c.s, val, g.steps), "maxContains", c.at); err != nil {
			return nil, err
		}
		if c.s.Validate(val) == nil && why == nil {
			why = unsat("maxContains", c.at, "every item found matches contains")
		}
	}
	if r.unique && seen[key(val)] && why == nil {
		why = unsat("uniqueItems", r.uniqueAt, "found no item %d unlike the ones before it", i)
	}
	return why, nil
}

// forbiddenFrom returns the first item index a schema forbids (items,
// prefixItems or additionalItems false), or -1.
func forbiddenFrom(a *jsonschema.Schema) (int, string) {
	if a.Items2020 != nil && a.Items2020.Bool != nil && !*a.Items2020.Bool {
		return len(a.PrefixItems), "items"
	}
	if list, ok := a.Items.([]*jsonschema.Schema); ok {
		if b, ok := a.AdditionalItems.(bool); ok && !b {
			return len(list), "additionalItems"
		}
	}
	if s, ok := a.Items.(*jsonschema.Schema); ok && s.Bool != nil && !*s.Bool {
		return 0, "items"
	}
	return -1, ""
}

// itemSchemas lists the schemas item i must satisfy.
func itemSchemas(atoms []*jsonschema.Schema, i int) ([]*jsonschema.Schema, *UnsatisfiableError) {
	var out []*jsonschema.Schema
	evaluated := false
	for _, a := range atoms {
		switch {
		case i < len(a.PrefixItems):
			out = append(out, a.PrefixItems[i])
			evaluated = true
		case a.Items2020 != nil:
			out = append(out, a.Items2020)
			evaluated = true
		}
		switch items := a.Items.(type) {
		case *jsonschema.Schema:
			out = append(out, items)
			evaluated = true
		case []*jsonschema.Schema:
			evaluated = true
			if i < len(items) {
				out = append(out, items[i])
			} else {
				switch ai := a.AdditionalItems.(type) {
				case bool:
					if !ai {
						return nil, unsat("additionalItems", a, "item %d is not allowed", i)
					}
				case *jsonschema.Schema:
					out = append(out, ai)
				}
			}
		}
	}
	if !evaluated {
		for _, a := range atoms {
			if a.UnevaluatedItems != nil {
				out = append(out, a.UnevaluatedItems)
			}
		}
	}
	for _, s := range out {
		if s.Bool != nil && !*s.Bool {
			return nil, unsat("false", s, "item %d is not allowed", i)
		}
	}
	return out, nil
}

// key is a canonical form of a value: equal JSON values (1 and 1.0) have
// equal keys, as uniqueItems counts them.
func key(v any) string {
	var b strings.Builder
	writeKey(&b, v)
	return b.String()
}

func writeKey(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		fmt.Fprint(b, v)
	case json.Number:
		if r, ok := ratOf(v); ok {
			b.WriteString("n" + r.RatString())
		} else {
			b.WriteString("n" + string(v))
		}
	case float64:
		b.WriteString(fmt.Sprintf("n%v", v))
	case string:
		b.WriteString(fmt.Sprintf("%q", v))
	case []any:
		b.WriteByte('[')
		for _, e := range v {
			writeKey(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		ks := make([]string, 0, len(v))
		for k := range v {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		b.WriteByte('{')
		for _, k := range ks {
			fmt.Fprintf(b, "%q:", k)
			writeKey(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "?%v", v)
	}
}
