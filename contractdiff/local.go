package contractdiff

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"agentc.dev/agentc/inclusion"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/runtime/testmodel"
)

// A change made in one schema object, reached from the root through
// positions where a narrower schema can only narrow the whole (properties,
// items, allOf, then, ...), is decided by the part of that object it
// touches: the keywords of an object hold together (a value must satisfy
// each), so when the changed keyword, with the keywords it works with,
// narrows, the object narrows, and so does the document. The engine then
// compares two small schemas instead of two whole documents, whose other
// parts (a pattern, a format) it may not be able to compare even with
// themselves.

// positive are the keywords whose schema a narrower one narrows the whole
// with, and whether a member name or an index follows them.
var positive = map[string]bool{
	"properties": true, "patternProperties": true, "dependentSchemas": true,
	"allOf": true, "anyOf": true, "prefixItems": true,
	"items": false, "additionalItems": false, "additionalProperties": false,
	"contains": false, "propertyNames": false, "then": false, "else": false,
}

// together are the keywords that decide a value together with a keyword:
// each is compared with the others of its group.
// Every pair of keywords whose meaning depends on the other must be in
// one group, in every draft the validator reads: a keyword compared
// without its partner is compared with a different meaning (draft 4's
// exclusiveMaximum is a flag that changes what maximum means).
var together = [][]string{
	{"properties", "patternProperties", "additionalProperties"},
	{"prefixItems", "items", "additionalItems"},
	{"contains", "minContains", "maxContains"},
	{"if", "then", "else"},
	{"minimum", "exclusiveMinimum"},
	{"maximum", "exclusiveMaximum"},
}

// local returns, for an edit of the old document (changed is the document
// with it made), the object the edit is made in, cut to the changed
// keyword and those it works with, before and after; ok is false when the
// edit cannot be decided there.
func (d *differ) local(e edit, changed any) (before, after any, node string, kept map[string]bool, ok bool) {
	node, kw := e.ptr, e.key
	if node != "" {
		if parent, last := splitPointer(node); mapSub[last] || listSub[last] {
			node, kw = parent, last // a member of properties, an item of allOf
		}
	}
	// The draft gives every keyword of the document its meaning: a change
	// of it, alone or with others, is never decided in one object.
	if kw == "$schema" || !inclusion.Equal(draftOf(d.old), draftOf(changed)) {
		return nil, nil, "", nil, false
	}
	if kw == "" || !positivePath(d.old, node) || !positivePath(changed, node) || !refsClear(d.old, node) || !refsClear(changed, node) {
		return nil, nil, "", nil, false
	}
	o, ok1 := inclusion.At(d.old, node)
	n, ok2 := inclusion.At(changed, node)
	om, isO := o.(map[string]any)
	nm, isN := n.(map[string]any)
	if !ok1 || !ok2 || !isO || !isN {
		return nil, nil, "", nil, false
	}
	keep := map[string]bool{"type": true, kw: true}
	for _, g := range together {
		for _, k := range g {
			if k == kw {
				for _, k2 := range g {
					keep[k2] = true
				}
			}
		}
	}
	cut := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if keep[k] {
				out[k] = v
			}
		}
		if draft := draftOf(d.old); draft != nil {
			out["$schema"] = draft // the same in both (above)
		}
		return out
	}
	before, after = cut(om), cut(nm)
	// What is cut away must be the same in both, and what is kept must
	// stand alone.
	for k := range union(om, nm) {
		if !keep[k] && !inclusion.Equal(om[k], nm[k]) {
			return nil, nil, "", nil, false
		}
	}
	if hasRef(before) || hasRef(after) {
		return nil, nil, "", nil, false
	}
	return before, after, node, keep, true
}

// draftOf is the $schema at the root of a document, nil where none.
func draftOf(doc any) any {
	if root, ok := doc.(map[string]any); ok {
		return root["$schema"]
	}
	return nil
}

// localProof is a change proved compatible in the object it is made in:
// the object, and the keywords its proof compared (type among them).
type localProof struct {
	node string
	kept map[string]bool
	ok   bool
}

// composable reports whether changes each proved in their own object
// make, together, a change proved too: made one after another, none
// touches what another's proof compared, so each proof holds after the
// others and every step narrows. Two changes in one object must compare
// different keywords (type aside, which no such pair may change); a
// change in an object below another's must not lie inside a keyword the
// other's proof compared.
func composable(ps []localProof) bool {
	for i, a := range ps {
		if !a.ok {
			return false
		}
		for _, b := range ps[i+1:] {
			if !b.ok || !apart(a, b) || !apart(b, a) {
				return false
			}
		}
	}
	return true
}

// apart reports whether b's change leaves a's proof as it was.
func apart(a, b localProof) bool {
	// The document's $schema says what every keyword means (draft 4 has
	// no propertyNames, and reads exclusiveMaximum as a flag): every
	// local proof was made under the old one, so a change of it is apart
	// from none.
	if a.node == "" && a.kept["$schema"] || b.node == "" && b.kept["$schema"] {
		return false
	}
	if a.node == b.node {
		for k := range a.kept {
			if b.kept[k] && k != "type" {
				return false
			}
		}
		// type is compared by both: neither may be a change of it.
		return !(len(a.kept) == 1 || len(b.kept) == 1)
	}
	rest, below := strings.CutPrefix(b.node, a.node+"/")
	if a.node == "" {
		rest, below = strings.TrimPrefix(b.node, "/"), b.node != ""
	}
	if !below {
		return true
	}
	first, _, _ := strings.Cut(rest, "/")
	return !a.kept[jsonpointer.Unescape(first)]
}

// positivePath reports whether the schema at ptr in doc is reached from
// the root through positive keywords only. contains is positive only
// where no maxContains stands beside it: a narrower contains matches
// fewer items, so more arrays keep under the most it allows.
func positivePath(doc any, ptr string) bool {
	segs := segments(ptr)
	at := doc
	for i := 0; i < len(segs); i++ {
		member, ok := positive[segs[i]]
		if !ok {
			return false
		}
		if segs[i] == "contains" {
			m, isObj := at.(map[string]any)
			if _, bounded := m["maxContains"]; !isObj || bounded {
				return false
			}
		}
		at = step(at, segs[i])
		if member && i+1 < len(segs) {
			at = step(at, segs[i+1])
		}
		if member {
			i++
			if i == len(segs) {
				return false
			}
		}
	}
	return true
}

// step is the value of a member of an object, or an item of a list; nil
// where there is none.
func step(v any, seg string) any {
	switch x := v.(type) {
	case map[string]any:
		return x[seg]
	case []any:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			return x[i]
		}
	}
	return nil
}

func segments(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = jsonpointer.Unescape(p)
	}
	return parts
}

// refsClear reports whether no reference in the document could reach the
// schema at ptr, or one around it, from elsewhere (where it might count
// against the whole, under a not), and nothing makes what a subschema
// evaluated matter to another (unevaluated*).
func refsClear(doc any, ptr string) bool {
	targets, entangled := refsOf(doc)
	if entangled {
		return false
	}
	for _, t := range targets {
		if strings.HasPrefix(ptr, t) || strings.HasPrefix(t, ptr) {
			return false
		}
	}
	return true
}

// hasRef reports whether a schema refers to anything outside itself.
func hasRef(v any) bool {
	targets, entangled := refsOf(v)
	return len(targets) > 0 || entangled
}

// refsOf returns the pointers the $refs of a schema document name within
// it, and whether anything ties the meaning of a subschema to another's
// beyond those: a $ref elsewhere or to an anchor, one whose fragment does
// not decode, $dynamicRef, $recursiveRef, an anchor, id or $id,
// unevaluatedProperties or unevaluatedItems. Every object of the document
// is looked at, not only its subschemas: a reference may lead into an
// unknown member, and on from there. A fragment is percent-decoded, as
// the validator reads it (#/properties/%61 is #/properties/a).
func refsOf(doc any) (targets []string, entangled bool) {
	members(doc, func(k string, y any) {
		switch k {
		case "$dynamicRef", "$recursiveRef", "unevaluatedProperties", "unevaluatedItems", "$anchor", "$dynamicAnchor", "$id", "id":
			entangled = true
		case "$ref":
			s, _ := y.(string)
			t, local := strings.CutPrefix(s, "#")
			if !local {
				entangled = true
				return
			}
			t, err := url.PathUnescape(t)
			if err != nil || t != "" && !strings.HasPrefix(t, "/") || !canonicalIndexes(t) {
				entangled = true // an anchor, or what the validator reads otherwise
				return
			}
			targets = append(targets, t)
		}
	})
	return targets, entangled
}

// members calls fn with every member of every object in doc, wherever it
// is written, before the members within it.
func members(doc any, fn func(k string, v any)) {
	switch x := doc.(type) {
	case []any:
		for _, y := range x {
			members(y, fn)
		}
	case map[string]any:
		for k, y := range x {
			fn(k, y)
			members(y, fn)
		}
	}
}

// read reports whether a reference of either document may read the
// value of the annotation at ptr (old value o, new n) as a schema: a
// pointer into it ("#/$defs/a/examples/0", percent-decoded, an index
// written in any digits the validator reads as it), or an anchor or id
// inside it, which a reference could name. A value so read is no
// annotation: its change is decided as the schema's.
func (d *differ) read(ptr string, o, n any) bool {
	if identifies(o) || identifies(n) {
		return true
	}
	if !d.found {
		d.found = true
		for _, ref := range append(references(d.old), references(d.new)...) {
			_, frag, _ := strings.Cut(ref, "#")
			frag, err := url.PathUnescape(frag)
			if err != nil {
				d.opaque = true
			} else if strings.HasPrefix(frag, "/") {
				d.targets = append(d.targets, segments(frag))
			}
		}
	}
	if d.opaque {
		return true
	}
	want := segments(ptr)
	return slices.ContainsFunc(d.targets, func(t []string) bool { return within(t, want) })
}

// references lists every $ref, $dynamicRef and $recursiveRef of a
// document, wherever it is written.
func references(doc any) []string {
	var out []string
	members(doc, func(k string, y any) {
		if s, ok := y.(string); ok && (k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef") {
			out = append(out, s)
		}
	})
	return out
}

// identifies reports whether a value holds an anchor or an id anywhere.
func identifies(v any) bool {
	found := false
	members(v, func(k string, _ any) {
		switch k {
		case "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$id", "id":
			found = true
		}
	})
	return found
}

// within reports whether the pointer segs may lead to the place of the
// pointer at or below it: segment by segment the same, or two indexes
// the validator reads as one ("0", "00", "+0").
func within(segs, at []string) bool {
	if len(segs) < len(at) {
		return false
	}
	for i, s := range at {
		if s == segs[i] {
			continue
		}
		a, err1 := strconv.Atoi(s)
		b, err2 := strconv.Atoi(segs[i])
		if err1 != nil || err2 != nil || a != b {
			return false
		}
	}
	return true
}

// canonicalIndexes reports whether every token of a pointer that the
// validator reads as an array's index (it reads them with strconv.Atoi)
// is written as refsClear compares them: "+0", "-0" and "01" reach items
// 0 and 1 as "0" and "1" do, and share no prefix with them.
func canonicalIndexes(ptr string) bool {
	for tok := range strings.SplitSeq(ptr, "/") {
		if n, err := strconv.Atoi(tok); err == nil && strconv.Itoa(n) != tok {
			return false
		}
	}
	return true
}

// lift makes a whole example from one for the object at node: a value the
// document sub accepts (made by the test model's generator), with w put
// where node's values go. The caller confirms it with the validator.
// bounded says the generator gave up at a bound of its work or of its
// value's size (testmodel.MaxValueBytes), which the schema's author
// chooses: the change is then left unexamined, never passed for want of
// an example.
func lift(sub any, node string, w any) (x any, ok, bounded bool) {
	schema, err := json.Marshal(sub)
	if err != nil {
		return nil, false, false
	}
	for seed := int64(0); seed < 4; seed++ {
		raw, err := testmodel.Synthesize(schema, seed)
		if err != nil {
			var ue *testmodel.UnsatisfiableError
			return nil, false, errors.As(err, &ue) && ue.Bounded
		}
		var inst any
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if dec.Decode(&inst) != nil {
			return nil, false, false
		}
		if out, ok := place(inst, segments(node), w); ok {
			return out, true, false
		}
	}
	return nil, false, false
}

// place puts w in inst where the schema path segs leads; false when the
// path goes where an instance has no one place (patternProperties,
// contains, ...).
func place(inst any, segs []string, w any) (any, bool) {
	if len(segs) == 0 {
		return w, true
	}
	switch segs[0] {
	case "allOf", "anyOf":
		return place(inst, segs[2:], w)
	case "then", "else":
		return place(inst, segs[1:], w)
	case "properties":
		m, ok := inst.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := place(m[segs[1]], segs[2:], w)
		if ok {
			m[segs[1]] = v
		}
		return m, ok
	case "prefixItems", "items":
		l, ok := inst.([]any)
		if !ok {
			return nil, false
		}
		i := 0
		rest := segs[1:]
		if segs[0] == "prefixItems" {
			var err error
			if i, err = strconv.Atoi(segs[1]); err != nil {
				return nil, false
			}
			rest = segs[2:]
		} else if p, ok := prefixLen(l); ok {
			i = p
		}
		for len(l) <= i {
			l = append(l, nil)
		}
		v, ok := place(l[i], rest, w)
		if ok {
			l[i] = v
		}
		return l, ok
	}
	return nil, false
}

// prefixLen is where items' values start in an array made for a schema
// without prefixItems: at 0.
func prefixLen([]any) (int, bool) { return 0, true }
