package inclusion

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/internal/leaf/pattern"
	"agentc.dev/agentc/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// dir says which way a schema is approximated where a Set cannot hold it
// exactly: over gives a superset of the values the schema accepts, under a
// subset. A verdict compares an under-approximation with an
// over-approximation, so it holds for the schema itself.
//
// A dir also carries the analysis' budget of work: once it is spent, every
// operation answers with its approximation at once, so no schema can make
// an analysis run long (see maxWork).
type dir struct {
	u bool // under
	w *work
}

// work is what an analysis may still spend; a nil *work has no limit.
// names are member names a search for a counterexample tries where a
// schema closes an object (see Witness).
type work struct {
	left  int
	names []string
}

func (d dir) isOver() bool  { return !d.u }
func (d dir) isUnder() bool { return d.u }
func (d dir) flip() dir     { return dir{!d.u, d.w} }

// spend takes n units of work, and reports whether there were any left.
func (d dir) spend(n int) bool {
	if d.w == nil {
		return true
	}
	d.w.left -= n
	return d.w.left >= 0
}

// exact is for operations that need no approximation.
var exact = dir{}

func approx(d dir) *Set {
	if d.isOver() {
		return all()
	}
	return none()
}

// except is every value not of type t ("number", "string", "array" or
// "object").
func except(t string) *Set {
	return complement(typeSet(t), exact)
}

// opaque stands for a constraint on type t that Sets cannot hold.
func opaque(d dir, t string) *Set {
	if d.isOver() {
		return all()
	}
	return except(t)
}

// Limits on the work one analysis does; past them it approximates.
const (
	maxWork     = 50000 // set operations and shapes made, per analysis
	maxDepth    = 24    // nested instance levels
	maxExponent = 400   // |exponent| of a number in a schema
	maxBranches = 24    // oneOf members compared pairwise
	maxPattern  = 1000  // bytes of a pattern matched against member names
)

// drafts, ordered.
const (
	draft4    = 4
	draft6    = 6
	draft7    = 7
	draft2019 = 2019
	draft2020 = 2020
)

type memoKey struct {
	ptr   string
	under bool
}

// noPtr marks a schema object that is not at a place in the document
// (one rewritten for an explanation): it is never memoised.
const noPtr = "\x00"

type builder struct {
	root    any
	draft   int
	base    string // the root's $id, without fragment
	refs    bool   // references can be followed: one schema resource
	anchors map[string]string
	stray   map[string]bool // anchors not to follow: written twice, or where the validator may not read them
	memo    map[memoKey]*Set
	active  map[string]int // schemas being built, at which instance depth
	depth   int
	cuts    int // cycles cut so far; a result built across a cut is not memoised
	work    work
	// validator compiles subschemas with the validator agentc uses, once
	// asked; nil when the document does not compile.
	validator func(ptr string) (*jsonschema.Schema, error)
	compiled  bool
	// budget bounds the time the analysis spends matching patterns, in
	// its value checks and its patternProperties; shared with others.
	budget *Budget
	// recursive says the root has $recursiveAnchor true (2019-09 on): a
	// $recursiveRef to a schema with it too goes on from the outermost
	// schema the validator's check began at (see recursiveRef).
	recursive bool
	// names counts the propertyNames schemas around the one being built,
	// where the validator checks a member name anew.
	names int
}

func (b *builder) over() dir  { return dir{false, &b.work} }
func (b *builder) under() dir { return dir{true, &b.work} }

func newBuilder(root any, budget *Budget) *builder {
	if budget == nil {
		budget = NewBudget()
	}
	b := &builder{root: root, draft: draft2020, refs: true, anchors: map[string]string{},
		memo: map[memoKey]*Set{}, active: map[string]int{}, work: work{left: maxWork}, budget: budget}
	if m, ok := root.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			if b.draft = draftOf(s); b.draft == 0 {
				// The validator loads a meta-schema it does not know,
				// which agentc's loader refuses: no verdict.
				b.draft = draft2020
				b.giveUp()
			}
		}
		b.recursive = m["$recursiveAnchor"] == true && b.draft >= draft2019
		if _, ref := m["$ref"]; !ref || b.draft >= draft2019 {
			if id, ok := m[b.idKeyword()].(string); ok {
				b.base, _, _ = strings.Cut(id, "#")
			}
		}
	}
	b.stray = map[string]bool{}
	b.scan(root, "", true)
	return b
}

// giveUp spends the analysis' budget: every answer is then Unknown. It is
// for documents the engine cannot read as the validator does.
func (b *builder) giveUp() { b.work.left = -1 << 40 }

// draftOf is the draft a $schema names, as the validator reads it
// (jsonschema/v6's draftFromURL, and the meta-schema it then loads for a
// known URL with a fragment); 0 for one it does not know.
func draftOf(s string) int {
	u, frag, hasFrag := strings.Cut(s, "#")
	u, ok := strings.CutPrefix(u, "http://")
	if !ok {
		u, _ = strings.CutPrefix(u, "https://")
	}
	d := map[string]int{
		"json-schema.org/draft/2020-12/schema": draft2020,
		"json-schema.org/draft/2019-09/schema": draft2019,
		"json-schema.org/draft-07/schema":      draft7,
		"json-schema.org/draft-06/schema":      draft6,
		"json-schema.org/draft-04/schema":      draft4,
	}[u]
	if u == "json-schema.org/schema" && (!hasFrag || frag == "") {
		d = draft2020
	}
	return d
}

func (b *builder) idKeyword() string {
	if b.draft == draft4 {
		return "id"
	}
	return "$id"
}

// subschemaKeys are where the validator looks for subschemas, and so for
// anchors and resources, in each draft (jsonschema/v6's Draft.subschemas):
// one schema, a list of them, or a map of them.
func (b *builder) subschemaKey(k string) (one, list, byName bool) {
	switch k {
	case "not", "additionalProperties", "additionalItems":
		return true, false, false
	case "items":
		return true, true, false
	case "allOf", "anyOf", "oneOf":
		return false, true, false
	case "definitions", "properties", "patternProperties", "dependencies":
		return false, false, true
	case "propertyNames", "contains":
		return b.draft >= draft6, false, false
	case "if", "then", "else":
		return b.draft >= draft7, false, false
	case "unevaluatedProperties", "unevaluatedItems", "contentSchema":
		return b.draft >= draft2019, false, false
	case "$defs", "dependentSchemas":
		return false, false, b.draft >= draft2019
	case "prefixItems":
		return false, b.draft >= draft2020, false
	}
	return false, false, false
}

// scan records the anchors of the subschemas the validator collects
// them from, and whether any subschema starts a resource of its own (then
// references are not followed: their base would change) or names another
// draft (then the document is read under two drafts, which the engine
// does not do: no verdict). An anchor written anywhere else (in an
// unknown member, under a keyword of another draft) is stray: the
// validator may meet it when a pointer leads there, so a reference to its
// name is not followed.
func (b *builder) scan(v any, ptr string, isRoot bool) {
	x, ok := v.(map[string]any)
	if !ok {
		b.scanStray(v)
		return
	}
	if s, ok := x["$schema"].(string); ok && !isRoot && draftOf(s) != b.draft {
		b.giveUp()
	}
	_, hasRef := x["$ref"]
	ignored := hasRef && b.draft < draft2019 // the validator reads no id or anchor beside $ref
	if id, ok := x[b.idKeyword()].(string); ok && !isRoot && !ignored {
		if name, ok := strings.CutPrefix(id, "#"); ok && b.draft <= draft7 {
			b.anchor(name, ptr)
		} else {
			b.refs = false
		}
	}
	if s, ok := x["$anchor"].(string); ok && b.draft >= draft2019 {
		b.anchor(s, ptr)
	}
	if s, ok := x["$dynamicAnchor"].(string); ok && b.draft >= draft2020 {
		b.anchor(s, ptr)
	}
	for k, v := range x {
		p := ptr + "/" + jsonpointer.Escape(k)
		one, list, byName := b.subschemaKey(k)
		l, isList := v.([]any)
		m, isMap := v.(map[string]any)
		switch {
		case list && isList:
			for i, sub := range l {
				b.scan(sub, p+"/"+strconv.Itoa(i), false)
			}
		case byName && isMap:
			for name, sub := range m {
				b.scan(sub, p+"/"+jsonpointer.Escape(name), false)
			}
		case one:
			b.scan(v, p, false)
		default:
			b.scanStray(v)
		}
	}
}

// anchor records an anchor; one named twice is refused by the validator,
// and followed nowhere.
func (b *builder) anchor(name, ptr string) {
	if p, ok := b.anchors[name]; ok && p != ptr {
		b.stray[name] = true
	}
	b.anchors[name] = ptr
}

// scanStray scans a value the validator does not read as a schema.
func (b *builder) scanStray(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if s, ok := sub.(string); ok {
				switch k {
				case "$anchor", "$dynamicAnchor":
					b.stray[s] = true
				case "$id", "id":
					if name, ok := strings.CutPrefix(s, "#"); ok {
						b.stray[name] = true
					} else {
						b.refs = false
					}
				}
			}
			b.scanStray(sub)
		}
	case []any:
		for _, sub := range x {
			b.scanStray(sub)
		}
	}
}

// Walk calls fn for a schema document and every subschema in it, in a
// deterministic order (members sorted), with the JSON pointer of each and
// the keyword that holds it ("" for the document itself).
func Walk(doc any, fn func(ptr, keyword string, sub any)) {
	var walk func(doc any, ptr, parent string)
	walk = func(doc any, ptr, parent string) {
		fn(ptr, parent, doc)
		m, ok := doc.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !schemaList[k] && !schemaOne[k] && !schemaMap[k] {
				continue
			}
			val := m[k]
			kp := ptr + "/" + jsonpointer.Escape(k)
			list, isList := val.([]any)
			switch {
			case schemaList[k] && isList:
				for i, sub := range list {
					walk(sub, kp+"/"+strconv.Itoa(i), k)
				}
			case schemaOne[k]:
				walk(val, kp, k)
			case schemaMap[k]:
				sm, ok := val.(map[string]any)
				if !ok {
					continue
				}
				for _, name := range slices.Sorted(maps.Keys(sm)) {
					if _, names := sm[name].([]any); k == "dependencies" && names {
						continue // the property-dependency form lists names
					}
					walk(sm[name], kp+"/"+jsonpointer.Escape(name), k)
				}
			}
		}
	}
	walk(doc, "", "")
}

// Where subschemas sit, and the other keywords, whose values are data.
var (
	schemaOne  = wordSet("items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
	schemaList = wordSet("allOf", "anyOf", "oneOf", "prefixItems", "items")
	schemaMap  = wordSet("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
	keyword    = wordSet("type", "enum", "const", "default", "examples", "required", "dependentRequired",
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format",
		"minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties",
		"$schema", "$id", "id", "$ref", "$dynamicRef", "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
		"$vocabulary", "$comment", "title", "description", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding")
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func (b *builder) at(ptr string) (any, bool) { return At(b.root, ptr) }

// At returns the value at a JSON pointer in a document, and whether there
// is one.
func At(doc any, ptr string) (any, bool) {
	cur := doc
	if ptr == "" {
		return cur, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for rest, more := ptr[1:], true; more; {
		var tok string
		tok, rest, more = strings.Cut(rest, "/")
		tok = jsonpointer.Unescape(tok)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// resolve finds the subschema a reference names, and its pointer.
func (b *builder) resolve(ref string) (any, string, bool) {
	if !b.refs {
		return nil, "", false
	}
	if b.base != "" {
		ref = strings.TrimPrefix(ref, b.base)
	}
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, "", false
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		p, ok := b.anchors[frag]
		if !ok || b.stray[frag] {
			return nil, "", false
		}
		frag = p
	}
	v, ok := b.at(frag)
	return v, frag, ok
}

// build turns the schema at ptr into a Set, approximated in direction d.
func (b *builder) build(node any, ptr string, d dir) *Set {
	switch n := node.(type) {
	case bool:
		if n {
			return all()
		}
		return none()
	case map[string]any:
		k := memoKey{ptr, d.u}
		if ptr != noPtr {
			if s, ok := b.memo[k]; ok {
				return s
			}
			if depth, ok := b.active[ptr]; ok {
				b.cuts++
				if depth == b.depth {
					// The validator refuses a reference cycle that
					// returns to a schema at the same place in the value.
					return none()
				}
				return approx(d)
			}
		}
		if b.depth > maxDepth || !d.spend(1) {
			b.cuts++
			return approx(d)
		}
		cuts := b.cuts
		// An active ptr never gets here: it was answered above.
		b.active[ptr] = b.depth
		s := b.object(n, ptr, d)
		delete(b.active, ptr)
		if ptr != noPtr && b.cuts == cuts {
			b.memo[k] = s
		}
		return s
	}
	return approx(d)
}

// child builds a subschema that applies to a part of the value (a member,
// an item, a name).
func (b *builder) child(node any, ptr string, d dir) *Set {
	b.depth++
	defer func() { b.depth-- }()
	return b.build(node, ptr, d)
}

func (b *builder) ref(ref string, d dir) *Set {
	target, ptr, ok := b.resolve(ref)
	if !ok {
		return approx(d)
	}
	return b.build(target, ptr, d)
}

// recursiveRef builds what a $recursiveRef names. Where its target has
// $recursiveAnchor true and so has the root, the validator goes on from
// the outermost schema of its check instead: the root, but for a member
// name, whose check begins anew at the propertyNames schema (and an enum's
// member checked alone, at its own: see constants). What it builds then
// depends on where it is, so it is kept for no schema around it.
func (b *builder) recursiveRef(ref string, d dir) *Set {
	target, ptr, ok := b.resolve(ref)
	if !ok {
		return approx(d)
	}
	if t, _ := target.(map[string]any); t["$recursiveAnchor"] != true || !b.recursive {
		return b.build(target, ptr, d)
	}
	b.cuts++
	if b.names > 0 {
		return approx(d)
	}
	return b.build(b.root, "", d)
}

func sub(ptr string, keys ...string) string {
	for _, k := range keys {
		ptr += "/" + jsonpointer.Escape(k)
	}
	return ptr
}

// object builds a schema object: the intersection of what its keywords
// accept.
func (b *builder) object(m map[string]any, ptr string, d dir) *Set {
	if !counts(m) {
		// A count the validator may read wrapped: no verdict.
		b.giveUp()
		return approx(d)
	}
	if s := b.constants(m, ptr, d); s != nil {
		return s
	}
	if ref, ok := m["$ref"].(string); ok && b.draft <= draft7 {
		// Siblings of $ref are ignored before 2019-09, but for const,
		// which the validator reads all the same in drafts 6 and 7.
		s := b.ref(ref, d)
		if v, ok := m["const"]; ok && b.draft >= draft6 {
			s = intersect(s, values([]any{v}, d), d)
		}
		return s
	}
	var s *Set // nil: every value, so far
	add := func(x *Set) {
		switch {
		case x == nil:
		case s == nil:
			s = x
		default:
			s = intersect(s, x, d)
		}
	}
	has := func(k string) bool { _, ok := m[k]; return ok }

	if ref, ok := m["$ref"].(string); ok {
		add(b.ref(ref, d))
	}
	if ref, ok := m["$dynamicRef"].(string); ok && b.draft >= draft2020 {
		add(b.ref(ref, d))
	}
	if ref, ok := m["$recursiveRef"].(string); ok && b.draft >= draft2019 {
		add(b.recursiveRef(ref, d))
	}
	if t, ok := m["type"]; ok {
		add(b.types(t, d))
	}
	if list, ok := m["enum"].([]any); ok {
		add(values(list, d))
	}
	if v, ok := m["const"]; ok && b.draft >= draft6 {
		add(values([]any{v}, d))
	}
	add(b.numbers(m, d))
	add(b.strings(m, d))
	add(b.arrays(m, ptr, d))
	add(b.objects(m, ptr, d))

	if list, ok := m["allOf"].([]any); ok {
		for i, x := range list {
			add(b.build(x, sub(ptr, "allOf", strconv.Itoa(i)), d))
		}
	}
	if list, ok := m["anyOf"].([]any); ok {
		u := none()
		for i, x := range list {
			u = union(u, b.build(x, sub(ptr, "anyOf", strconv.Itoa(i)), d), d)
		}
		add(u)
	}
	if list, ok := m["oneOf"].([]any); ok {
		add(b.oneOf(list, sub(ptr, "oneOf"), d))
	}
	if x, ok := m["not"]; ok {
		add(complement(b.build(x, sub(ptr, "not"), d.flip()), d))
	}
	if x, ok := m["if"]; ok && b.draft >= draft7 && (has("then") || has("else")) {
		p := sub(ptr, "if")
		yes := b.build(x, p, d)
		no := complement(b.build(x, p, d.flip()), d)
		then, els := all(), all()
		if t, ok := m["then"]; ok {
			then = b.build(t, sub(ptr, "then"), d)
		}
		if e, ok := m["else"]; ok {
			els = b.build(e, sub(ptr, "else"), d)
		}
		add(union(intersect(yes, then, d), intersect(no, els, d), d))
	}
	return orAll(s)
}

// maxConstants bounds the enum members checked one by one.
const maxConstants = 256

// constants is the exact set of values a schema object with an enum or a
// const in force accepts: the members the validator accepts against the
// whole object, every sibling keyword, reference and unevaluated* with it,
// however the other keywords would be approximated. nil when it cannot
// tell: the object is not at a place in a document of one resource (the
// validator resolves a subschema alone as it does in place only then, and
// only where no $recursiveRef goes on from where its check began), a
// reference cycle may lead it back to itself (see onCycle), the document
// does not compile, or the list is long.
func (b *builder) constants(m map[string]any, ptr string, d dir) *Set {
	if ptr == noPtr || !b.refs || b.recursive {
		return nil
	}
	_, isRef := m["$ref"]
	list, ok := m["enum"].([]any)
	if !ok || isRef && b.draft <= draft7 {
		// Beside a $ref of an older draft only const is read.
		v, has := m["const"]
		if !has || b.draft < draft6 {
			return nil
		}
		list = []any{v}
	}
	if len(list) > maxConstants || !d.spend(len(list)) {
		return nil
	}
	for _, v := range list {
		if !cheap(v) {
			return nil
		}
	}
	if b.onCycle(m, ptr, d) {
		return nil
	}
	if !b.compiled {
		b.compiled = true
		b.validator, _ = plan.CompileSubschemas(b.root, b.budget.patterns)
	}
	if b.validator == nil {
		return nil
	}
	sch, err := b.validator(ptr)
	if err != nil {
		return nil
	}
	var kept []any
	for _, v := range list {
		// As the runtime validates: a match undecided in time rejects
		// the value there, where the validator alone takes it for no
		// match (and a not around it for a pass).
		err := plan.Validate(sch, v)
		var ve *jsonschema.ValidationError
		if err != nil && !errors.As(err, &ve) {
			// Undecided, or not a value the validator reads: no verdict.
			if b.budget.Spent() {
				b.giveUp()
			}
			return nil
		}
		if err == nil {
			kept = append(kept, v)
		}
	}
	return values(kept, d)
}

// onCycle reports whether the schema object m at ptr may come back to
// itself, through keywords that apply to the same value and references.
// The validator cuts a reference cycle where it first meets a schema twice
// for one value: for m alone that is m, in place it may be another schema
// of the cycle around it, and the two answers differ (a not between them
// turns one into the other). The members of an enum are checked alone, so
// only where m is on no such cycle: then no schema it meets can be around
// it, and the answer holds wherever m is reached (and may be kept for it).
// Where it cannot tell, it answers true.
func (b *builder) onCycle(m map[string]any, ptr string, d dir) bool {
	seen := map[string]bool{}
	var reaches func(v any, p string) bool
	reaches = func(v any, p string) bool {
		if p == ptr {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		if !d.spend(1) {
			return true
		}
		return b.inPlaceChildren(v, p, reaches)
	}
	return b.inPlaceChildren(m, ptr, reaches)
}

// inPlaceChildren calls fn for each schema that the schema v at p applies
// to the same value (a reference's target among them), until fn returns
// true; it returns true then, or for a reference it cannot follow.
func (b *builder) inPlaceChildren(v any, p string, fn func(v any, p string) bool) bool {
	x, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range inPlaceKeys {
		switch val := x[k].(type) {
		case string:
			if !strings.HasPrefix(k, "$") {
				continue
			}
			target, tp, ok := b.resolve(val)
			if !ok || fn(target, tp) {
				return true
			}
		case []any:
			for i, y := range val {
				if fn(y, sub(p, k, strconv.Itoa(i))) {
					return true
				}
			}
		case map[string]any:
			if k != "dependentSchemas" && k != "dependencies" {
				if fn(val, sub(p, k)) {
					return true
				}
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(val)) {
				if fn(val[name], sub(p, k, name)) {
					return true
				}
			}
		}
	}
	return false
}

// cheap reports whether the validator reads every number of a value
// cheaply: one with a huge exponent (1e999990) takes it tens of
// milliseconds to parse, each time.
func cheap(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return Number(x) != nil
	case []any:
		for _, e := range x {
			if !cheap(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !cheap(e) {
				return false
			}
		}
	}
	return true
}

func (b *builder) oneOf(list []any, ptr string, d dir) *Set {
	if len(list) > maxBranches {
		return approx(d)
	}
	same := make([]*Set, len(list))
	notOther := make([]*Set, len(list))
	for i, x := range list {
		p := sub(ptr, strconv.Itoa(i))
		same[i] = b.build(x, p, d)
		notOther[i] = complement(b.build(x, p, d.flip()), d)
	}
	u := none()
	for i := range list {
		term := same[i]
		for j := range list {
			if j != i {
				term = intersect(term, notOther[j], d)
			}
		}
		u = union(u, term, d)
	}
	return u
}

func (b *builder) types(t any, d dir) *Set {
	names, ok := t.([]any)
	if !ok {
		names = []any{t}
	}
	u := none()
	for _, n := range names {
		name, _ := n.(string)
		ts := typeSet(name)
		if ts == nil {
			return approx(d)
		}
		u = union(u, ts, d)
	}
	return u
}

// values is the set of the values of an enum (or a const), built in one
// pass.
func values(list []any, d dir) *Set {
	u := none()
	for _, v := range list {
		switch x := v.(type) {
		case nil:
			u.null = true
		case bool:
			if x {
				u.bools |= 2
			} else {
				u.bools |= 1
			}
		case string:
			u.str.put(x, true)
		case []any:
			u.arr = append(u.arr, &arrShape{exact: true, val: x, max: -1})
		case map[string]any:
			u.obj = append(u.obj, &objShape{exact: true, val: x, max: -1})
		default:
			r := Number(v)
			if r == nil {
				return approx(d)
			}
			if r.IsInt() {
				u.num.ints = append(u.num.ints, point(r)...)
			} else {
				u.num.frac = append(u.num.frac, point(r)...)
			}
		}
	}
	u.num.ints, u.num.frac = u.num.ints.normal(), u.num.frac.normal()
	return u
}

// numbers, strings, arrays and objects return nil for a schema without
// keywords of theirs.
func (b *builder) numbers(m map[string]any, d dir) *Set {
	if !hasAny(m, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf") {
		return nil
	}
	s := all()
	restrict := func(iv ivals) { s.num = s.num.restrict(iv) }
	lower := func(k string, open bool) {
		if v, ok := m[k]; ok {
			if r := Number(v); r != nil {
				restrict(atLeast(r, open))
			} else if _, isBool := v.(bool); !isBool {
				s = intersect(s, opaque(d, "number"), d)
			}
		}
	}
	upper := func(k string, open bool) {
		if v, ok := m[k]; ok {
			if r := Number(v); r != nil {
				restrict(atMost(r, open))
			} else if _, isBool := v.(bool); !isBool {
				s = intersect(s, opaque(d, "number"), d)
			}
		}
	}
	if b.draft == draft4 {
		lower("minimum", m["exclusiveMinimum"] == true)
		upper("maximum", m["exclusiveMaximum"] == true)
	} else {
		lower("minimum", false)
		upper("maximum", false)
		lower("exclusiveMinimum", true)
		upper("exclusiveMaximum", true)
	}
	if v, ok := m["multipleOf"]; ok {
		if r := Number(v); r != nil && r.Sign() > 0 {
			s.num = s.num.multiples(r, d)
		} else if d.isUnder() {
			s.num = s.num.restrict(point(new(big.Rat))) // 0 is a multiple of anything
		}
	}
	return s
}

func (b *builder) strings(m map[string]any, d dir) *Set {
	if !hasAny(m, "minLength", "maxLength", "pattern", "format") {
		return nil
	}
	s := all()
	if n, ok := count(m["minLength"]); ok {
		s.str.lens = s.str.lens.intersect(atLeast(big.NewRat(n, 1), false))
	}
	if n, ok := count(m["maxLength"]); ok {
		s.str.lens = s.str.lens.intersect(atMost(big.NewRat(n, 1), false))
	}
	if p, ok := m["pattern"].(string); ok && p != "" {
		s = intersect(s, opaque(d, "string"), d)
	}
	if _, ok := m["format"].(string); ok {
		s = intersect(s, opaque(d, "string"), d)
	}
	return s
}

// CountKeywords are the keywords whose value is a count of characters,
// items, members or matches.
var CountKeywords = []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"}

// MaxCount is the largest count the engine reads: the validator reads a
// count as an int64, wrapping one past 2^63-1 (18446744073709551617 is 1
// to it), so a count is read exactly only below that, and agentc keeps to
// the integers a double holds exactly.
const MaxCount = 1<<53 - 1

// ValidCount reports whether v is a count the engine reads as the
// validator does: an integer from 0 to MaxCount.
func ValidCount(v any) bool {
	_, ok := count(v)
	return ok
}

// count reads a non-negative integer keyword value, at most MaxCount.
func count(v any) (int64, bool) {
	r := Number(v)
	if r == nil || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > MaxCount {
		return 0, false
	}
	return r.Num().Int64(), true
}

// counts reports whether every count keyword of a schema object is one
// the engine reads; where one is not, the object is beyond it.
func counts(m map[string]any) bool {
	for _, k := range CountKeywords {
		v, ok := m[k]
		if !ok {
			continue
		}
		if n, ok := count(v); !ok || n > math.MaxInt32 && k != "minLength" && k != "maxLength" {
			return false // items, members and matches are counted in an int
		}
	}
	return true
}

func smallCount(v any) (int, bool) {
	n, ok := count(v)
	if !ok || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// inPlaceKeys are the keywords whose subschemas the validator applies to
// the value itself (not to a member or an item): one schema, or a list or
// a map of them.
var inPlaceKeys = []string{"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}

// inPlace reports whether a schema object has applicators that evaluate
// members or items of the same value, which unevaluated* then depend on:
// dependencies among them, which the validator reads in every draft and
// whose schemas, where they pass, evaluate members as dependentSchemas
// do.
func (b *builder) inPlace(m map[string]any) bool {
	for _, k := range inPlaceKeys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func (b *builder) arrays(m map[string]any, ptr string, d dir) *Set {
	a := &arrShape{max: -1}
	touched := false
	evaluatedAll := false
	if b.draft >= draft2020 {
		if list, ok := m["prefixItems"].([]any); ok {
			for i, x := range list {
				a.prefix = append(a.prefix, b.child(x, sub(ptr, "prefixItems", strconv.Itoa(i)), d))
			}
			touched = true
		}
		if x, ok := m["items"]; ok {
			a.items = b.child(x, sub(ptr, "items"), d)
			touched, evaluatedAll = true, true
		}
	} else {
		switch x := m["items"].(type) {
		case []any:
			for i, y := range x {
				a.prefix = append(a.prefix, b.child(y, sub(ptr, "items", strconv.Itoa(i)), d))
			}
			if y, ok := m["additionalItems"]; ok {
				a.items = b.child(y, sub(ptr, "additionalItems"), d)
				evaluatedAll = true
			}
			touched = true
		case nil:
		default:
			a.items = b.child(x, sub(ptr, "items"), d)
			touched, evaluatedAll = true, true
		}
	}
	if n, ok := smallCount(m["minItems"]); ok {
		a.min, touched = n, true
	}
	if n, ok := smallCount(m["maxItems"]); ok {
		a.max, touched = n, true
	}
	if m["uniqueItems"] == true {
		if d.isUnder() {
			a.max, touched = minBound(a.max, 1), true // no two items to be equal
		}
	}
	if x, ok := m["contains"]; ok && b.draft >= draft6 {
		p := sub(ptr, "contains")
		mn, mx := 1, -1
		if b.draft >= draft2019 {
			if n, ok := smallCount(m["minContains"]); ok {
				mn = n
			}
			if n, ok := smallCount(m["maxContains"]); ok {
				mx = n
			}
		}
		if mx >= 0 && mn > mx {
			// No count of items is both at least mn and at most mx.
			a.min, a.max = 1, 0
		}
		if mn > 0 {
			a.contains = append(a.contains, containsRule{s: b.child(x, p, d), min: mn, max: -1})
		}
		if mx >= 0 {
			// "at most mx items in S" accepts more the smaller S is.
			a.contains = append(a.contains, containsRule{s: b.child(x, p, d.flip()), max: mx})
		}
		touched = true
	}
	if x, ok := m["unevaluatedItems"]; ok && b.draft >= draft2019 && !evaluatedAll {
		ue := b.child(x, sub(ptr, "unevaluatedItems"), d)
		if !ue.isFull() {
			_, hasContains := m["contains"]
			exact := !b.inPlace(m) && !hasContains
			if d.isUnder() || exact {
				a.items = meet(a.items, ue, d)
				touched = true
			}
		}
	}
	if !touched {
		return nil
	}
	s := all()
	s.arr = []*arrShape{a}
	if a.isEmpty() {
		s.arr = nil
	}
	return s
}

func (b *builder) objects(m map[string]any, ptr string, d dir) *Set {
	o := &objShape{max: -1}
	touched := false
	if props, ok := m["properties"].(map[string]any); ok {
		o.props = map[string]*Set{}
		for k, x := range props {
			o.props[k] = b.child(x, sub(ptr, "properties", k), d)
		}
		touched = true
	}
	var patterns []*Set
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for p, x := range pp {
			// A pattern's schema holds the members it matches even when it
			// accepts anything: additionalProperties does not apply to them.
			ps := b.child(x, sub(ptr, "patternProperties", p), d)
			patterns = append(patterns, ps)
			touched = true
			if ps.isFull() {
				continue
			}
			// The validator's engine decides which declared members a
			// pattern holds; a pattern it cannot read, or a match it
			// cannot decide in time, leaves the object opaque.
			re, err := pattern.CompileIn(p, b.budget.patterns)
			if err != nil || len(p) > maxPattern {
				return opaque(d, "object")
			}
			for k, v := range o.props {
				matched, err := re.Match(k)
				if err != nil {
					if b.budget.Spent() {
						b.giveUp()
					}
					return opaque(d, "object")
				}
				if matched {
					o.props[k] = intersect(v, ps, d)
				}
			}
		}
	}
	if x, ok := m["additionalProperties"]; ok {
		o.additional = b.child(x, sub(ptr, "additionalProperties"), d)
		touched = true
	} else if x, ok := m["unevaluatedProperties"]; ok && b.draft >= draft2019 {
		ue := b.child(x, sub(ptr, "unevaluatedProperties"), d)
		if !ue.isFull() && (d.isUnder() || !b.inPlace(m) && len(patterns) == 0) {
			o.additional = ue
			touched = true
		}
	}
	// A member matching a pattern is held by the pattern's schema, not by
	// additionalProperties; unnamed members are approximated.
	if len(patterns) > 0 {
		if d.isOver() {
			u := orAll(o.additional)
			for _, ps := range patterns {
				u = union(u, ps, d)
			}
			o.additional = u
		} else {
			for _, ps := range patterns {
				o.additional = meet(o.additional, ps, d)
			}
		}
	}
	if list, ok := m["required"].([]any); ok && len(list) > 0 {
		o.required = map[string]bool{}
		for _, x := range list {
			if k, ok := x.(string); ok {
				o.required[k] = true
			}
		}
		touched = true
	}
	if n, ok := smallCount(m["minProperties"]); ok {
		o.min, touched = n, true
	}
	if n, ok := smallCount(m["maxProperties"]); ok {
		o.max, touched = n, true
	}
	if x, ok := m["propertyNames"]; ok && b.draft >= draft6 {
		b.names++
		o.names = b.child(x, sub(ptr, "propertyNames"), d)
		b.names--
		touched = true
	}
	var s *Set
	deps := func(keyword string, val any) {
		dm, ok := val.(map[string]any)
		if !ok {
			return
		}
		for k, x := range dm {
			if list, ok := x.([]any); ok {
				if o.depReq == nil {
					o.depReq = map[string][]string{}
				}
				for _, y := range list {
					if name, ok := y.(string); ok {
						o.depReq[k] = append(o.depReq[k], name)
					}
				}
				touched = true
				continue
			}
			if keyword == "dependentRequired" {
				continue
			}
			// Objects without k, or with k and valid under the schema.
			ds := b.build(x, sub(ptr, keyword, k), d)
			without := all()
			without.obj = []*objShape{{max: -1, props: map[string]*Set{k: none()}}}
			with := except("object")
			with.obj = []*objShape{{max: -1, required: map[string]bool{k: true}}}
			s = meet(s, union(without, intersect(with, ds, d), d), d)
		}
	}
	// The validator reads dependencies in every draft.
	deps("dependencies", m["dependencies"])
	if b.draft >= draft2019 {
		deps("dependentRequired", m["dependentRequired"])
		deps("dependentSchemas", m["dependentSchemas"])
	}
	if touched {
		t := all()
		t.obj = []*objShape{o}
		if o.isEmpty() {
			t.obj = nil
		}
		s = meet(s, t, d)
	}
	return s
}

func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// Number reads a JSON number exactly; nil for anything else, and for a
// number whose exponent is too large to hold cheaply.
func Number(v any) *big.Rat {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		return new(big.Rat).SetFloat64(x)
	case int:
		return big.NewRat(int64(x), 1)
	case int64:
		return big.NewRat(x, 1)
	default:
		return nil
	}
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		e, err := strconv.Atoi(text[i+1:])
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil
		}
	}
	if len(text) > 1000 {
		return nil
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil
	}
	return r
}
