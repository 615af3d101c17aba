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
	minI, maxI := 0, -1
	unique := false
	var uniqueAt *jsonschema.Schema
	type containsRule struct {
		s        *jsonschema.Schema
		min, max int // max -1: none
		at       *jsonschema.Schema
	}
	var contains []containsRule
	limit, limitKw := -1, ""
	var limitAt *jsonschema.Schema
	for _, a := range atoms {
		if a.MinItems != nil {
			minI = max(minI, *a.MinItems)
		}
		if a.MaxItems != nil && (maxI < 0 || *a.MaxItems < maxI) {
			maxI = *a.MaxItems
		}
		if a.UniqueItems {
			unique, uniqueAt = true, a
		}
		if a.Contains != nil {
			c := containsRule{s: a.Contains, min: 1, max: -1, at: a}
			if a.MinContains != nil {
				c.min = *a.MinContains
			}
			if a.MaxContains != nil {
				c.max = *a.MaxContains
			}
			contains = append(contains, c)
		}
		if k, kw := forbiddenFrom(a); k >= 0 && (limit < 0 || k < limit) {
			limit, limitKw, limitAt = k, kw, a
		}
	}
	needC := 0
	for _, c := range contains {
		if c.max >= 0 && c.min > c.max {
			return nil, unsat("minContains", c.at, "minContains %d exceeds maxContains %d", c.min, c.max)
		}
		needC = max(needC, c.min)
	}
	lower := max(minI, needC)
	upper := maxI
	if limit >= 0 && (upper < 0 || limit < upper) {
		upper = limit
	}
	if lower > maxItemsCap {
		return nil, unsat("minItems", at, "asks for %d items, more than the %d this model builds", lower, maxItemsCap)
	}
	if upper >= 0 && lower > upper {
		switch {
		case maxI >= 0 && minI > maxI:
			return nil, unsat("minItems", at, "minItems %d exceeds maxItems %d", minI, maxI)
		case limit >= 0 && minI > limit:
			return nil, unsat(limitKw, limitAt, "allows at most %d items, fewer than minItems %d", limit, minI)
		default:
			return nil, unsat("contains", at, "contains needs %d items where at most %d are allowed", needC, upper)
		}
	}
	n := lower
	childV := v
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
	items := make([]any, 0, n)
	seen := map[string]bool{}
	for i := range n {
		if err := g.step("minItems", at); err != nil {
			return nil, err
		}
		roots, forbidden := itemSchemas(atoms, i)
		if forbidden != nil {
			return nil, forbidden
		}
		var avoid []containsRule
		for _, c := range contains {
			if i < c.min {
				roots = append(roots, c.s)
			} else if c.max >= 0 {
				avoid = append(avoid, c)
			}
		}
		tries := 1
		if unique || len(avoid) > 0 {
			tries = uniqueTries
		}
		var (
			got      any
			ok       bool
			firstErr error
		)
		for k := range tries {
			iv := childV
			if unique {
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
			clash := false
			for _, c := range avoid {
				if err := g.charge(visits(c.s, val, g.steps), "maxContains", c.at); err != nil {
					return nil, err
				}
				if c.s.Validate(val) == nil {
					clash = true
					if firstErr == nil {
						firstErr = unsat("maxContains", c.at, "every item found matches contains")
					}
				}
			}
			if unique && seen[key(val)] {
				clash = true
				if firstErr == nil {
					firstErr = unsat("uniqueItems", uniqueAt, "found no item %d unlike the ones before it", i)
				}
			}
			if !clash {
				got, ok = val, true
				break
			}
		}
		if !ok {
			var ue *UnsatisfiableError
			if unique && g.steps > 0 && errors.As(firstErr, &ue) && ue.Keyword != "uniqueItems" && i > 0 {
				firstErr = unsat("uniqueItems", uniqueAt, "found no item %d unlike the ones before it", i)
			}
			return nil, firstErr
		}
		if unique {
			seen[key(got)] = true
		}
		items = append(items, got)
	}
	return items, nil
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
