package schemagen

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
)

// A rewrite changes a schema object of a document in place without
// changing what the document accepts, and reports whether it applied.
// Some first make the object a form the rewrite needs (plant): the new
// form is then the old document, so the pair still means the same.
type rewrite struct {
	name  string
	plant func(rng *rand.Rand, doc any, n node) bool
	apply func(rng *rand.Rand, doc any, n node) bool
}

// Rewrites are the refactors Refactor makes: each keeps the meaning of the
// document, so a differ must never call the change breaking.
var rewrites = []rewrite{
	{"reorder", nil, reorder},
	{"type-list-to-anyOf", nil, typeListToAnyOf},
	{"anyOf-to-type-list", nil, anyOfToTypeList},
	{"const-to-enum", nil, constToEnum},
	{"enum-to-const", nil, enumToConst},
	{"integer-bound-strict", nil, integerBoundStrict},
	{"redundant-minimum", nil, redundantMinimum},
	{"draft04-false-flag", nil, draft04FalseFlag},
	{"property-into-allOf", nil, propertyIntoAllOf},
	{"flatten", nil, flatten},
	{"inline-ref", nil, inlineRef},
	{"number-multipleOf-1", nil, numberMultipleOfOne},
	{"required-forced", plantRequired, dropForcedRequired},
	{"draft04-strict-bound", plantDraft04Strict, draft04StrictBound},
}

// Refactor returns doc, perhaps with a form planted in it, as old, and a
// copy with one meaning-preserving rewrite made, as new, and the rewrite's
// name; ok is false when none applies.
func Refactor(rng *rand.Rand, doc any) (old, new any, name string, ok bool) {
	// The rewrites that plant their form apply everywhere: they go first
	// only in one refactor of three, so the others get their turn.
	order := rng.Perm(len(rewrites))
	plantFirst := rng.IntN(3) == 0
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := rewrites[a].plant != nil, rewrites[b].plant != nil
		switch {
		case pa == pb:
			return 0
		case pa == plantFirst:
			return -1
		}
		return 1
	})
	for _, i := range order {
		rw := rewrites[i]
		old = Clone(doc)
		ns := nodes(old)
		for _, j := range rng.Perm(len(ns)) {
			if rw.plant != nil {
				// The plant is made on old, and new is old rewritten.
				if !rw.plant(rng, old, ns[j]) {
					continue
				}
				new = Clone(old)
				if !rw.apply(rng, new, nodes(new)[j]) {
					old = Clone(doc)
					ns = nodes(old)
					continue
				}
				return old, new, rw.name, true
			}
			new = Clone(old)
			if rw.apply(rng, new, nodes(new)[j]) {
				return old, new, rw.name, true
			}
		}
	}
	return doc, doc, "", false
}

// hiddenRef reports an object whose keywords a $ref hides (drafts 4 to 7):
// any rewrite of them keeps the meaning, but a plant is wasted there.
func hiddenRef(doc any, m map[string]any) bool {
	_, ok := m["$ref"]
	return ok && Draft4to7(doc)
}

// reorder reverses or rotates a list whose order means nothing.
func reorder(rng *rand.Rand, _ any, n node) bool {
	var ks []string
	for _, k := range []string{"anyOf", "allOf", "oneOf", "enum", "required", "type"} {
		if l, ok := n.m[k].([]any); ok && len(l) > 1 {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return false
	}
	k := pick(rng, ks)
	l := slices.Clone(n.m[k].([]any))
	if rng.IntN(2) == 0 {
		slices.Reverse(l)
	} else {
		l = append(l[1:], l[0])
	}
	n.m[k] = l
	return true
}

// typeListToAnyOf: type [a, b] is anyOf [{type: a}, {type: b}].
func typeListToAnyOf(_ *rand.Rand, _ any, n node) bool {
	t, ok := n.m["type"].([]any)
	if !ok || len(t) == 0 {
		return false
	}
	if _, has := n.m["anyOf"]; has {
		return false
	}
	var branches []any
	for _, x := range t {
		branches = append(branches, map[string]any{"type": x})
	}
	delete(n.m, "type")
	n.m["anyOf"] = branches
	return true
}

// anyOfToTypeList: anyOf [{type: "string"}, {type: "null"}] is type
// ["string", "null"].
func anyOfToTypeList(_ *rand.Rand, _ any, n node) bool {
	l, ok := n.m["anyOf"].([]any)
	if _, has := n.m["type"]; !ok || has || len(l) == 0 {
		return false
	}
	var t []any
	for _, b := range l {
		bm, ok := b.(map[string]any)
		s, isStr := bm["type"].(string)
		if !ok || len(bm) != 1 || !isStr || slices.Contains(t, any(s)) {
			return false
		}
		t = append(t, s)
	}
	delete(n.m, "anyOf")
	n.m["type"] = t
	return true
}

// constToEnum: const v is enum [v], from draft 6 on.
func constToEnum(_ *rand.Rand, doc any, n node) bool {
	v, ok := n.m["const"]
	if _, has := n.m["enum"]; !ok || has || Draft04(doc) {
		return false
	}
	delete(n.m, "const")
	n.m["enum"] = []any{v}
	return true
}

func enumToConst(_ *rand.Rand, doc any, n node) bool {
	l, ok := n.m["enum"].([]any)
	if _, has := n.m["const"]; !ok || has || len(l) != 1 || Draft04(doc) {
		return false
	}
	delete(n.m, "enum")
	n.m["const"] = l[0]
	return true
}

// integerBoundStrict: for integers, minimum n is a strict bound at n-1
// (exclusiveMinimum n-1, or in draft 4 minimum n-1 with the flag), and
// the same above.
func integerBoundStrict(rng *rand.Rand, doc any, n node) bool {
	if n.m["type"] != "integer" || hiddenRef(doc, n.m) {
		return false
	}
	bound, flag, step := "minimum", "exclusiveMinimum", int64(-1)
	if rng.IntN(2) == 0 {
		bound, flag, step = "maximum", "exclusiveMaximum", 1
	}
	r := intValue(n.m[bound])
	if r == nil {
		return false
	}
	moved := json.Number(new(big.Int).Add(r, big.NewInt(step)).String())
	if Draft04(doc) {
		if f, has := n.m[flag]; has && f != false {
			return false
		}
		n.m[bound] = moved
		n.m[flag] = true
		return true
	}
	if _, has := n.m[flag]; has {
		return false
	}
	delete(n.m, bound)
	n.m[flag] = moved
	return true
}

// intValue is the integer a JSON number holds, or nil.
func intValue(v any) *big.Int {
	x, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(x))
	if !ok || !r.IsInt() || len(x) > 20 {
		return nil
	}
	return r.Num()
}

// redundantMinimum: minimum a beside exclusiveMinimum b >= a says nothing
// more (and maximum a beside exclusiveMaximum b <= a), from draft 6 on.
func redundantMinimum(_ *rand.Rand, doc any, n node) bool {
	if Draft04(doc) {
		return false
	}
	for _, p := range [][3]string{{"minimum", "exclusiveMinimum", "lo"}, {"maximum", "exclusiveMaximum", "hi"}} {
		a, b := ratValue(n.m[p[0]]), ratValue(n.m[p[1]])
		if a == nil || b == nil {
			continue
		}
		if c := b.Cmp(a); p[2] == "lo" && c >= 0 || p[2] == "hi" && c <= 0 {
			delete(n.m, p[0])
			return true
		}
	}
	return false
}

func ratValue(v any) *big.Rat {
	x, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(x))
	if !ok || len(x) > 40 {
		return nil
	}
	return r
}

// draft04FalseFlag: in draft 4, exclusiveMaximum false is no flag.
func draft04FalseFlag(rng *rand.Rand, doc any, n node) bool {
	if !Draft04(doc) {
		return false
	}
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		if n.m[k] == false {
			delete(n.m, k)
			return true
		}
	}
	k, bound := "exclusiveMaximum", "maximum"
	if rng.IntN(2) == 0 {
		k, bound = "exclusiveMinimum", "minimum"
	}
	if _, has := n.m[bound]; has && n.m[k] == nil {
		n.m[k] = false
		return true
	}
	return false
}

// propertyIntoAllOf moves a property's schema into a member of allOf,
// where no additionalProperties beside it would count it out.
func propertyIntoAllOf(rng *rand.Rand, _ any, n node) bool {
	props, ok := n.m["properties"].(map[string]any)
	if _, has := n.m["additionalProperties"]; !ok || has || len(props) == 0 {
		return false
	}
	if _, has := n.m["allOf"]; has {
		if _, isList := n.m["allOf"].([]any); !isList {
			return false
		}
	}
	name := pick(rng, sortedKeys(props))
	moved := map[string]any{"properties": map[string]any{name: props[name]}}
	props = Clone(props).(map[string]any)
	delete(props, name)
	n.m["properties"] = props
	l, _ := n.m["allOf"].([]any)
	n.m["allOf"] = append(slices.Clone(l), moved)
	return true
}

// flatten: an allOf member that is only an allOf is its members, and the
// same for anyOf.
func flatten(_ *rand.Rand, _ any, n node) bool {
	for _, k := range []string{"allOf", "anyOf"} {
		l, ok := n.m[k].([]any)
		if !ok {
			continue
		}
		for i, x := range l {
			xm, ok := x.(map[string]any)
			inner, isList := xm[k].([]any)
			if ok && isList && len(xm) == 1 && len(inner) > 0 {
				out := slices.Concat(l[:i:i], inner, l[i+1:])
				n.m[k] = out
				return true
			}
		}
	}
	return false
}

// inlineRef puts the schema a $ref names in its place: in drafts 4 to 7
// instead of the object (the keywords beside $ref mean nothing there), in
// later drafts as a member of allOf.
func inlineRef(_ *rand.Rand, doc any, n node) bool {
	ref, ok := n.m["$ref"].(string)
	if !ok || n.ptr == "" || !strings.HasPrefix(ref, "#/") {
		return false
	}
	target, ok := at(doc, ref[1:])
	if !ok {
		return false
	}
	if b, err := json.Marshal(target); err != nil || strings.Contains(string(b), `"$anchor"`) || strings.Contains(string(b), `"$id"`) || strings.Contains(string(b), `"$ref":"#"`) {
		return false
	}
	if Draft4to7(doc) {
		tm, isObj := target.(map[string]any)
		for k := range n.m {
			delete(n.m, k)
		}
		if !isObj {
			// a boolean schema as an object
			if target == false {
				n.m["not"] = map[string]any{}
			}
			return true
		}
		for k, v := range Clone(tm).(map[string]any) {
			n.m[k] = v
		}
		return true
	}
	if _, has := n.m["allOf"]; has {
		if _, isList := n.m["allOf"].([]any); !isList {
			return false
		}
	}
	delete(n.m, "$ref")
	l, _ := n.m["allOf"].([]any)
	n.m["allOf"] = append(slices.Clone(l), Clone(target))
	return true
}

// numberMultipleOfOne: a number that is a multiple of 1 is an integer
// (from draft 6 on, where 1.0 is one).
func numberMultipleOfOne(_ *rand.Rand, doc any, n node) bool {
	if n.m["type"] != "number" || n.m["multipleOf"] != json.Number("1") || Draft04(doc) {
		return false
	}
	n.m["type"] = "integer"
	delete(n.m, "multipleOf")
	return true
}

// plantRequired and dropForcedRequired: where the only property an
// object may have is p and it must have one, required [p] says nothing
// more. The plant makes that form with required; the rewrite drops it.
func plantRequired(rng *rand.Rand, doc any, n node) bool {
	if hiddenRef(doc, n.m) {
		return false
	}
	name := pick(rng, names)
	var sub any = map[string]any{"type": pick(rng, types)}
	if props, ok := n.m["properties"].(map[string]any); ok && len(props) > 0 {
		name = pick(rng, sortedKeys(props))
		sub = props[name]
	}
	delete(n.m, "patternProperties")
	n.m["properties"] = map[string]any{name: sub}
	n.m["additionalProperties"] = false
	n.m["minProperties"] = json.Number("1")
	n.m["required"] = []any{name}
	return true
}

func dropForcedRequired(_ *rand.Rand, _ any, n node) bool {
	req, ok := n.m["required"].([]any)
	if !ok || len(req) != 1 || n.m["minProperties"] != json.Number("1") || n.m["additionalProperties"] != false {
		return false
	}
	name, _ := req[0].(string)
	props, ok := n.m["properties"].(map[string]any)
	if _, has := props[name]; !ok || len(props) != 1 || !has {
		return false
	}
	if _, has := n.m["patternProperties"]; has {
		return false
	}
	delete(n.m, "required")
	return true
}

// plantDraft04Strict and draft04StrictBound: in draft 4, an integer
// below maximum n with the flag is one at most n-1, and the same above
// minimum. The plant makes the flagged form; the rewrite the plain one.
func plantDraft04Strict(rng *rand.Rand, doc any, n node) bool {
	if !Draft04(doc) || hiddenRef(doc, n.m) {
		return false
	}
	bound, flag := "maximum", "exclusiveMaximum"
	if rng.IntN(2) == 0 {
		bound, flag = "minimum", "exclusiveMinimum"
	}
	n.m["type"] = "integer"
	n.m[bound] = json.Number(pick(rng, []string{"0", "1", "3", "10", "-1"}))
	n.m[flag] = true
	return true
}

func draft04StrictBound(_ *rand.Rand, doc any, n node) bool {
	if !Draft04(doc) || n.m["type"] != "integer" {
		return false
	}
	for _, b := range []struct {
		bound, flag string
		step        int64
	}{{"maximum", "exclusiveMaximum", -1}, {"minimum", "exclusiveMinimum", 1}} {
		if r := intValue(n.m[b.bound]); r != nil && n.m[b.flag] == true {
			n.m[b.bound] = json.Number(new(big.Int).Add(r, big.NewInt(b.step)).String())
			delete(n.m, b.flag)
			return true
		}
	}
	return false
}

// at is the value at a JSON pointer.
func at(doc any, ptr string) (any, bool) {
	cur := doc
	if ptr == "" {
		return cur, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[unescape(tok)]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}
