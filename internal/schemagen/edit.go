package schemagen

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"

	"agentc.dev/agentc/inclusion"
)

// node is a schema object of a document and where it is.
type node struct {
	ptr string
	m   map[string]any
}

// nodes lists the schema objects of a document, the root first.
func nodes(doc any) []node {
	var out []node
	inclusion.Walk(doc, func(ptr, _ string, sub any) {
		if m, ok := sub.(map[string]any); ok {
			out = append(out, node{ptr, m})
		}
	})
	return out
}

// depth is how deep a pointer is, in the generator's count of nested
// schemas.
func depth(ptr string) int { return strings.Count(ptr, "/") / 2 }

// draftOf sets the generator's draft to the one doc declares.
func (g *Gen) draftOf(doc any) {
	g.draft = max(0, slices.Index(Drafts, SchemaKey(doc)))
}

// Edit returns a copy of doc with one change made at a schema object
// picked at random: a keyword removed, added or replaced, a number moved,
// a flag turned, a member of enum or required added or removed, a
// subschema replaced, a type changed, a contains narrowed or widened, or
// draft 4's exclusive flags set beside their bound. Most changes change
// what the schema accepts; a few cannot.
func (g *Gen) Edit(rng *rand.Rand, doc any) any {
	doc = Clone(doc)
	g.draftOf(doc)
	defer func() { g.repair(doc) }()
	ns := nodes(doc)
	if len(ns) == 0 {
		return g.root()
	}
	n := pick(rng, ns)
	m, d := n.m, depth(n.ptr)
	keys := slices.DeleteFunc(sortedKeys(m), func(k string) bool { return k == "$schema" || k == "$defs" || k == "definitions" })
	switch rng.IntN(10) {
	case 0: // a keyword removed
		if len(keys) > 0 {
			delete(m, pick(rng, keys))
			return doc
		}
		g.keyword(m, d)
	case 1: // a keyword added or replaced
		g.keyword(m, d)
	case 2: // a number moved
		var nums []string
		for _, k := range keys {
			if _, ok := m[k].(json.Number); ok {
				nums = append(nums, k)
			}
		}
		if len(nums) == 0 {
			g.keyword(m, d)
			return doc
		}
		k := pick(rng, nums)
		m[k] = moveNumber(rng, k, m[k].(json.Number))
	case 3: // a flag turned
		var flags []string
		for _, k := range keys {
			if _, ok := m[k].(bool); ok && k != "$recursiveAnchor" {
				flags = append(flags, k)
			}
		}
		if len(flags) == 0 {
			m["uniqueItems"] = rng.IntN(2) == 0
			return doc
		}
		k := pick(rng, flags)
		m[k] = !m[k].(bool)
	case 4: // enum or const
		switch l, _ := m["enum"].([]any); {
		case len(l) > 1 && rng.IntN(2) == 0:
			i := rng.IntN(len(l))
			m["enum"] = slices.Delete(slices.Clone(l), i, i+1)
		case l != nil:
			m["enum"] = append(slices.Clone(l), g.value())
		case rng.IntN(2) == 0:
			m["const"] = mustJSON(pick(rng, Values))
		default:
			m["enum"] = []any{mustJSON(pick(rng, Values)), mustJSON(pick(rng, Values))}
		}
	case 5: // required
		l, _ := m["required"].([]any)
		if len(l) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(l))
			if l = slices.Delete(slices.Clone(l), i, i+1); len(l) == 0 {
				delete(m, "required")
			} else {
				m["required"] = l
			}
			return doc
		}
		name := pick(rng, names)
		if props, ok := m["properties"].(map[string]any); ok && len(props) > 0 && rng.IntN(2) == 0 {
			name = pick(rng, sortedKeys(props))
		}
		if !slices.Contains(l, any(name)) {
			m["required"] = append(slices.Clone(l), name)
		}
	case 6: // a subschema replaced
		var subs []node
		inclusion.Walk(m, func(ptr, kw string, _ any) {
			if ptr != "" {
				subs = append(subs, node{ptr: ptr})
			}
		})
		if len(subs) == 0 {
			g.keyword(m, d)
			return doc
		}
		p := pick(rng, subs).ptr
		var with any
		switch rng.IntN(3) {
		case 0:
			with = true
		case 1:
			with = false
		default:
			with = g.schema(d + 1 + depth(p))
		}
		setAt(m, p, with)
	case 7: // the type
		switch t := m["type"].(type) {
		case []any:
			if len(t) > 1 && rng.IntN(2) == 0 {
				m["type"] = t[:len(t)-1]
			} else {
				m["type"] = append(slices.Clone(t), pick(rng, types))
			}
		case string:
			if rng.IntN(2) == 0 {
				m["type"] = []any{t, pick(rng, types)}
			} else {
				m["type"] = pick(rng, types)
			}
		default:
			m["type"] = pick(rng, types)
		}
	case 8: // contains, with or without its counts
		c, has := m["contains"]
		switch {
		case !has:
			m["contains"] = map[string]any{"type": pick(rng, types)}
			m["maxContains"] = json.Number(pick(rng, counts))
		case rng.IntN(3) == 0:
			k := pick(rng, []string{"minContains", "maxContains"})
			if n, ok := m[k].(json.Number); ok {
				m[k] = moveNumber(rng, k, n)
			} else {
				m[k] = json.Number(pick(rng, counts))
			}
		default:
			cm, ok := c.(map[string]any)
			if !ok {
				m["contains"] = map[string]any{"type": pick(rng, types)}
				return doc
			}
			cm = Clone(cm).(map[string]any)
			if rng.IntN(2) == 0 && len(cm) > 0 {
				delete(cm, pick(rng, sortedKeys(cm)))
			} else {
				g.keyword(cm, 3)
			}
			m["contains"] = cm
		}
	default: // draft 4's exclusive bounds, or the bounds of later drafts
		lo := rng.IntN(2) == 0
		bound, flag := "maximum", "exclusiveMaximum"
		if lo {
			bound, flag = "minimum", "exclusiveMinimum"
		}
		if _, ok := m[bound]; !ok {
			m[bound] = g.number()
		}
		if !Draft04(doc) {
			if _, ok := m[flag].(json.Number); ok && rng.IntN(2) == 0 {
				delete(m, flag)
			} else {
				m[flag] = m[bound]
				delete(m, bound)
			}
			return doc
		}
		switch f, ok := m[flag].(bool); {
		case !ok:
			m[flag] = rng.IntN(2) == 0
		case rng.IntN(3) == 0:
			delete(m, flag)
		default:
			m[flag] = !f
		}
	}
	return doc
}

// moveNumber returns a neighbour of the value of keyword k: a count stays
// a count, a divisor positive.
func moveNumber(rng *rand.Rand, k string, n json.Number) json.Number {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return json.Number("1")
	}
	switch {
	case k == "multipleOf":
		return json.Number(pick(rng, []string{"1", "2", "0.5", "3", "0.1", "1.5", "4"}))
	case strings.HasPrefix(k, "min") && k != "minimum" || strings.HasPrefix(k, "max") && k != "maximum":
		c := r.Num().Int64() + int64(rng.IntN(3)) - 1
		return json.Number(fmt.Sprint(max(0, c)))
	}
	delta := pick(rng, []*big.Rat{big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(1, 2), big.NewRat(-1, 2)})
	return ratNumber(new(big.Rat).Add(r, delta))
}

func ratNumber(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.RatString())
	}
	s := r.FloatString(10)
	s = strings.TrimRight(s, "0")
	return json.Number(s)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// setAt puts v at a pointer below doc, whose parent exists.
func setAt(doc any, ptr string, v any) {
	i := strings.LastIndexByte(ptr, '/')
	parent, ok := inclusion.At(doc, ptr[:i])
	if !ok {
		return
	}
	last := unescape(ptr[i+1:])
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
	case []any:
		var j int
		if _, err := fmt.Sscan(last, &j); err == nil && j < len(p) {
			p[j] = v
		}
	}
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// repair makes a document one the validator compiles: a missing
// definition is made, a reference to a missing anchor points at the root
// instead, of several schemas with the same anchor only the first keeps
// it, and a draft 4 exclusive flag gets the bound it qualifies.
func (g *Gen) repair(doc any) any {
	root, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	anchors := !Draft4to7(doc)
	seen := false
	for _, n := range nodes(doc) {
		if _, has := n.m["$anchor"]; has {
			if seen || !anchors {
				delete(n.m, "$anchor")
			}
			seen = true
		}
	}
	seen = seen && anchors
	if Draft04(doc) {
		for _, n := range nodes(doc) {
			for _, fb := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if _, has := n.m[fb[1]]; n.m[fb[0]] != nil && !has {
					n.m[fb[1]] = g.number()
				}
			}
		}
	}
	for _, n := range nodes(doc) {
		ref, ok := n.m["$ref"].(string)
		if !ok {
			continue
		}
		if ref == "#x" && !seen {
			n.m["$ref"] = "#"
			continue
		}
		for _, key := range []string{"$defs", "definitions"} {
			name, ok := strings.CutPrefix(ref, "#/"+key+"/")
			if !ok {
				continue
			}
			defs, _ := root[key].(map[string]any)
			if defs == nil {
				defs = map[string]any{}
				root[key] = defs
			}
			if _, has := defs[name]; !has {
				defs[name] = g.schema(3)
			}
		}
	}
	return doc
}
