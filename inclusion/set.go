package inclusion

import (
	"maps"
	"math/big"
	"slices"
	"unicode/utf8"
)

// A Set is a set of JSON values, split by type. Every Set the package
// builds is exact for what it holds; approximation happens only where a
// schema is turned into Sets (see dir), never inside the operations below
// except where they say so.
type Set struct {
	null  bool
	bools uint8 // bit 0: false, bit 1: true
	num   numPart
	str   strPart
	arr   []*arrShape // a union; none is the empty set
	obj   []*objShape
}

// numPart holds numbers: ints are the integers in one union of intervals,
// frac the non-integers in another, so that "integer" and its complement
// stay exact.
type numPart struct{ ints, frac ivals }

// strPart holds the strings whose length (in code points) is in lens,
// less excl, plus incl. excl only holds strings whose length is in lens,
// incl only strings whose length is not.
type strPart struct {
	lens       ivals
	excl, incl map[string]bool
}

type arrShape struct {
	exact    bool // the shape is the one value val
	val      []any
	prefix   []*Set // the item at each position
	items    *Set   // every item past prefix; nil is every value
	min, max int    // max < 0 is no bound
	contains []containsRule
}

type containsRule struct {
	s        *Set
	min, max int // how many items are in s; max < 0 is no bound
}

type objShape struct {
	exact      bool
	val        map[string]any
	props      map[string]*Set // the value of a named member, when present
	additional *Set            // the value of every other member; nil is every value
	required   map[string]bool
	min, max   int
	names      *Set // every member name is in it; nil is every name
	depReq     map[string][]string
}

// maxShapes bounds a union of shapes; past it operations approximate.
const maxShapes = 32

func fullStr() strPart { return strPart{lens: fullIvals()} }

func fullNum() numPart { return numPart{ints: fullIvals(), frac: fullIvals()} }

// Shapes and lists of shapes are never changed in place once built, so
// the ones of every array and every object are shared.
var (
	everyArray  = []*arrShape{{max: -1}}
	everyObject = []*objShape{{max: -1}}
)

// all is the set of every JSON value.
func all() *Set {
	return &Set{null: true, bools: 3, num: fullNum(), str: fullStr(), arr: everyArray, obj: everyObject}
}

// universal is a cheap test for the set all() makes, before anything is
// taken from it.
func (s *Set) universal() bool {
	return s.null && s.bools == 3 && s.num.ints.isWhole() && s.num.frac.isWhole() &&
		s.str.lens.isWhole() && len(s.str.excl) == 0 && len(s.str.incl) == 0 &&
		len(s.arr) == 1 && s.arr[0] == everyArray[0] && len(s.obj) == 1 && s.obj[0] == everyObject[0]
}

func none() *Set { return &Set{} }

func (s *Set) clone() *Set {
	c := *s
	return &c
}

func typeSet(t string) *Set {
	s := none()
	switch t {
	case "null":
		s.null = true
	case "boolean":
		s.bools = 3
	case "number":
		s.num = fullNum()
	case "integer":
		s.num = numPart{ints: fullIvals()}
	case "string":
		s.str = fullStr()
	case "array":
		s.arr = []*arrShape{{max: -1}}
	case "object":
		s.obj = []*objShape{{max: -1}}
	default:
		return nil
	}
	return s
}

// valueSet is the set holding one JSON value; nil when v is not JSON.
func valueSet(v any) *Set {
	s := none()
	switch x := v.(type) {
	case nil:
		s.null = true
	case bool:
		if x {
			s.bools = 2
		} else {
			s.bools = 1
		}
	case string:
		s.str = strPart{incl: map[string]bool{x: true}}
	case []any:
		s.arr = []*arrShape{{exact: true, val: x, max: -1}}
	case map[string]any:
		s.obj = []*objShape{{exact: true, val: x, max: -1}}
	default:
		r := Number(v)
		if r == nil {
			return nil
		}
		if r.IsInt() {
			s.num.ints = point(r)
		} else {
			s.num.frac = point(r)
		}
	}
	return s
}

// --- set operations ---

func intersect(a, b *Set, d dir) *Set {
	switch {
	case a.universal():
		return b
	case b.universal():
		return a
	case !d.spend(1):
		if d.isOver() {
			return a
		}
		return none()
	}
	return &Set{
		null:  a.null && b.null,
		bools: a.bools & b.bools,
		num:   numPart{ints: a.num.ints.intersect(b.num.ints), frac: a.num.frac.intersect(b.num.frac)},
		str:   a.str.combine(b.str, func(x, y bool) bool { return x && y }),
		arr:   intersectShapes(a.arr, b.arr, d, intersectArr),
		obj:   intersectShapes(a.obj, b.obj, d, intersectObj),
	}
}

func union(a, b *Set, d dir) *Set {
	switch {
	case a.universal():
		return a
	case b.universal():
		return b
	case !d.spend(1):
		if d.isOver() {
			return all()
		}
		return a
	}
	return &Set{
		null:  a.null || b.null,
		bools: a.bools | b.bools,
		num:   numPart{ints: a.num.ints.union(b.num.ints), frac: a.num.frac.union(b.num.frac)},
		str:   a.str.combine(b.str, func(x, y bool) bool { return x || y }),
		arr:   unionShapes(a.arr, b.arr, d, (*arrShape).isAll, func() *arrShape { return &arrShape{max: -1} }),
		obj:   unionShapes(a.obj, b.obj, d, (*objShape).isAll, func() *objShape { return &objShape{max: -1} }),
	}
}

// complement is exact for null, booleans, numbers and strings; for arrays
// and objects it is exact where each shape's constraints can be negated one
// by one, and approximated in direction d elsewhere.
func complement(a *Set, d dir) *Set {
	if !d.spend(1) {
		return approx(d)
	}
	return &Set{
		null:  !a.null,
		bools: 3 &^ a.bools,
		num:   numPart{ints: a.num.ints.complement(), frac: a.num.frac.complement()},
		str:   a.str.complement(),
		arr:   complementShapes(a.arr, d, (*arrShape).negate, func() *arrShape { return &arrShape{max: -1} }, intersectArr),
		obj:   complementShapes(a.obj, d, (*objShape).negate, func() *objShape { return &objShape{max: -1} }, intersectObj),
	}
}

func intersectShapes[S any](a, b []S, d dir, meet func(x, y S, d dir) []S) []S {
	var out []S
	for _, x := range a {
		for _, y := range b {
			out = append(out, meet(x, y, d)...)
			if len(out) > maxShapes || !d.spend(1) {
				if d.isOver() {
					return a // a superset of the intersection
				}
				return nil
			}
		}
	}
	return out
}

func unionShapes[S any](a, b []S, d dir, isAll func(S) bool, allShape func() S) []S {
	out := append(slices.Clip(a), b...)
	for _, s := range out {
		if isAll(s) {
			return []S{s}
		}
	}
	if len(out) > maxShapes {
		if d.isOver() {
			return []S{allShape()}
		}
		return out[:maxShapes]
	}
	return out
}

func complementShapes[S any](a []S, d dir, negate func(S, dir) []S, allShape func() S, meet func(x, y S, d dir) []S) []S {
	acc := []S{allShape()}
	for _, s := range a {
		acc = intersectShapes(acc, negate(s, d), d, meet)
	}
	return acc
}

// --- strings ---

func (p strPart) has(s string) bool {
	return p.incl[s] || !p.excl[s] && p.lens.contains(big.NewRat(int64(utf8.RuneCountInString(s)), 1))
}

func (p strPart) combine(q strPart, op func(x, y bool) bool) strPart {
	var lens ivals
	if op(true, false) { // union
		lens = p.lens.union(q.lens)
	} else {
		lens = p.lens.intersect(q.lens)
	}
	out := strPart{lens: lens}
	for _, m := range []map[string]bool{p.excl, p.incl, q.excl, q.incl} {
		for s := range m {
			out.put(s, op(p.has(s), q.has(s)))
		}
	}
	return out
}

// put records whether s is in the part, given that lens decides every
// string not listed.
func (p *strPart) put(s string, in bool) {
	byLen := p.lens.contains(big.NewRat(int64(utf8.RuneCountInString(s)), 1))
	switch {
	case byLen && !in:
		if p.excl == nil {
			p.excl = map[string]bool{}
		}
		p.excl[s] = true
	case !byLen && in:
		if p.incl == nil {
			p.incl = map[string]bool{}
		}
		p.incl[s] = true
	}
}

func (p strPart) complement() strPart {
	out := strPart{lens: p.lens.complement()}
	for _, m := range []map[string]bool{p.excl, p.incl} {
		for s := range m {
			out.put(s, !p.has(s))
		}
	}
	return out
}

func (p strPart) isEmpty() bool {
	if len(p.incl) > 0 || p.lens.hasNatural(1) {
		return false
	}
	return !p.lens.hasNatural(0) || p.excl[""]
}

func (p strPart) isFull() bool { return p.complement().isEmpty() }

// --- numbers ---

func (n numPart) isEmpty() bool { return !n.ints.hasInteger() && !n.frac.hasFraction() }

func (n numPart) isFull() bool {
	return !n.ints.complement().hasInteger() && !n.frac.complement().hasFraction()
}

func (n numPart) has(r *big.Rat) bool {
	if r.IsInt() {
		return n.ints.contains(r)
	}
	return n.frac.contains(r)
}

// restrict keeps the numbers in iv.
func (n numPart) restrict(iv ivals) numPart {
	return numPart{ints: n.ints.intersect(iv), frac: n.frac.intersect(iv)}
}

// --- the whole set ---

func (s *Set) isFull() bool {
	return s.null && s.bools == 3 && s.num.isFull() && s.str.isFull() &&
		slices.ContainsFunc(s.arr, (*arrShape).isAll) && slices.ContainsFunc(s.obj, (*objShape).isAll)
}

// isEmpty is sound, not complete: true only when no value is in s.
func (s *Set) isEmpty() bool {
	if s.null || s.bools != 0 || !s.num.isEmpty() || !s.str.isEmpty() {
		return false
	}
	for _, a := range s.arr {
		if !a.isEmpty() {
			return false
		}
	}
	for _, o := range s.obj {
		if !o.isEmpty() {
			return false
		}
	}
	return true
}

// has reports whether the JSON value v is in s.
func (s *Set) has(v any) bool {
	switch x := v.(type) {
	case nil:
		return s.null
	case bool:
		if x {
			return s.bools&2 != 0
		}
		return s.bools&1 != 0
	case string:
		return s.str.has(x)
	case []any:
		return slices.ContainsFunc(s.arr, func(a *arrShape) bool { return a.has(x) })
	case map[string]any:
		return slices.ContainsFunc(s.obj, func(o *objShape) bool { return o.has(x) })
	}
	if r := Number(v); r != nil {
		return s.num.has(r)
	}
	return false
}

// subset reports whether every value of a is in b: sound, not complete.
// It spends w, and answers false once w is spent.
func subset(a, b *Set, w *work) bool {
	if !(dir{w: w}).spend(1) {
		return false
	}
	if a.null && !b.null || a.bools&^b.bools != 0 {
		return false
	}
	if !(numPart{ints: a.num.ints.intersect(b.num.ints.complement()), frac: a.num.frac.intersect(b.num.frac.complement())}).isEmpty() {
		return false
	}
	if !a.str.combine(b.str.complement(), func(x, y bool) bool { return x && y }).isEmpty() {
		return false
	}
	for _, x := range a.arr {
		if !x.isEmpty() && !slices.ContainsFunc(b.arr, func(y *arrShape) bool { return arrSubset(x, y, w) }) {
			return false
		}
	}
	for _, x := range a.obj {
		if !x.isEmpty() && !slices.ContainsFunc(b.obj, func(y *objShape) bool { return objSubset(x, y, w) }) {
			return false
		}
	}
	return true
}

func full(s *Set) bool { return s == nil || s.isFull() }

func orAll(s *Set) *Set {
	if s == nil {
		return all()
	}
	return s
}

// --- arrays ---

func (a *arrShape) at(i int) *Set {
	if i < len(a.prefix) {
		return a.prefix[i]
	}
	return a.items
}

func (a *arrShape) isAll() bool {
	if a.exact || a.min > 0 || a.max >= 0 || !full(a.items) {
		return false
	}
	for _, p := range a.prefix {
		if !full(p) {
			return false
		}
	}
	for _, c := range a.contains {
		if c.min > 0 || c.max >= 0 {
			return false
		}
	}
	return true
}

// maxLen is the longest array the positions allow, or -1 for no bound.
func (a *arrShape) maxLen() int {
	n := a.max
	for i, p := range a.prefix {
		if p != nil && p.isEmpty() && (n < 0 || i < n) {
			n = i
		}
	}
	if a.items != nil && a.items.isEmpty() && (n < 0 || len(a.prefix) < n) {
		n = len(a.prefix)
	}
	return n
}

func (a *arrShape) isEmpty() bool {
	if a.exact {
		return false
	}
	mx := a.maxLen()
	if mx >= 0 && a.min > mx {
		return true
	}
	for _, c := range a.contains {
		if c.max >= 0 && c.min > c.max || mx >= 0 && c.min > mx {
			return true
		}
		if c.min > 0 && c.s.isEmpty() {
			return true
		}
	}
	return len(a.contains) > 0 && a.countsConflict(mx)
}

// maxCounted bounds the contains rules whose counts are weighed together.
const maxCounted = 8

// countsConflict reports whether the contains rules ask for more items
// than an array of the shape can have. Rules whose sets are disjoint count
// different items, so their minimums add up, and each item must sit at a
// position whose schema lets such an item be; a rule that allows at most n
// items of its set is broken by the minimums of disjoint rules whose sets
// lie within it, and by the positions every array has whose schema lies
// within it.
func (a *arrShape) countsConflict(mx int) bool {
	var need []containsRule
	for _, c := range a.contains {
		if c.min > 0 && len(need) < maxCounted {
			need = append(need, c)
		}
	}
	apart := make([][]bool, len(need))
	for i := range need {
		apart[i] = make([]bool, len(need))
		for j := range i {
			apart[i][j] = disjoint(need[i].s, need[j].s)
			apart[j][i] = apart[i][j]
		}
	}
	// sets lists the rules of a group of pairwise disjoint sets, or nil.
	group := func(mask int) []int {
		var out []int
		for i := range need {
			if mask&(1<<i) == 0 {
				continue
			}
			for _, j := range out {
				if !apart[i][j] {
					return nil
				}
			}
			out = append(out, i)
		}
		return out
	}
	var within [][]int // for each at-most rule, the at-least rules it counts
	for _, c := range a.contains {
		if c.max < 0 {
			continue
		}
		var in []int
		for i, n := range need {
			if within1(n.s, c.s) {
				in = append(in, i)
			}
		}
		within = append(within, in)
		// The positions every array has, filled by items c counts.
		forced := 0
		for i := range a.min {
			if i > len(a.prefix) {
				break // every later position is the one of items
			}
			if within1(orAll(a.at(i)), c.s) {
				if i == len(a.prefix) {
					forced += a.min - i
				} else {
					forced++
				}
			}
		}
		if forced > c.max {
			return true
		}
	}
	for mask := 1; mask < 1<<len(need); mask++ {
		g := group(mask)
		if g == nil {
			continue
		}
		sum := 0
		for _, i := range g {
			sum += need[i].min
		}
		if room := a.room(need, g, mx); room >= 0 && sum > room {
			return true
		}
		j := 0
		for _, c := range a.contains {
			if c.max < 0 {
				continue
			}
			if sum > c.max && allIn(g, within[j]) {
				return true
			}
			j++
		}
	}
	return false
}

func allIn(g, in []int) bool {
	for _, i := range g {
		if !slices.Contains(in, i) {
			return false
		}
	}
	return true
}

// room is how many positions of an array of the shape may hold an item of
// one of the sets of the rules g, or -1 for no bound; mx is the longest
// array the shape allows (-1: no bound).
func (a *arrShape) room(need []containsRule, g []int, mx int) int {
	meets := func(s *Set) bool {
		for _, i := range g {
			if !disjoint(s, need[i].s) {
				return true
			}
		}
		return false
	}
	n := 0
	for i, p := range a.prefix {
		if mx >= 0 && i >= mx {
			return n
		}
		if meets(p) {
			n++
		}
	}
	if !meets(a.items) {
		return n
	}
	if mx < 0 {
		return -1
	}
	return n + max(0, mx-len(a.prefix))
}

// within1 reports whether every value of a is in b: sound, not complete,
// and cheap, as disjoint is: arrays and objects of a must be single values
// b holds, or b must hold every array (object).
func within1(a, b *Set) bool {
	if a.null && !b.null || a.bools&^b.bools != 0 {
		return false
	}
	if !(numPart{ints: a.num.ints.intersect(b.num.ints.complement()), frac: a.num.frac.intersect(b.num.frac.complement())}).isEmpty() {
		return false
	}
	if !a.str.combine(b.str.complement(), func(x, y bool) bool { return x && y }).isEmpty() {
		return false
	}
	allArr := slices.ContainsFunc(b.arr, (*arrShape).isAll)
	for _, x := range a.arr {
		if !allArr && !(x.exact && slices.ContainsFunc(b.arr, func(y *arrShape) bool { return y.has(x.val) })) {
			return false
		}
	}
	allObj := slices.ContainsFunc(b.obj, (*objShape).isAll)
	for _, x := range a.obj {
		if !allObj && !(x.exact && slices.ContainsFunc(b.obj, func(y *objShape) bool { return y.has(x.val) })) {
			return false
		}
	}
	return true
}

// disjoint reports whether no value is in both sets (nil is every value).
// It is sound, not complete, and cheap: two sets that hold arrays (or
// objects) are taken to share one unless one is a single value the other
// does not hold.
func disjoint(a, b *Set) bool {
	a, b = orAll(a), orAll(b)
	if a.null && b.null || a.bools&b.bools != 0 {
		return false
	}
	if !(numPart{ints: a.num.ints.intersect(b.num.ints), frac: a.num.frac.intersect(b.num.frac)}).isEmpty() {
		return false
	}
	if !a.str.combine(b.str, func(x, y bool) bool { return x && y }).isEmpty() {
		return false
	}
	for _, x := range a.arr {
		for _, y := range b.arr {
			switch {
			case x.exact && y.exact:
				if Equal(x.val, y.val) {
					return false
				}
			case x.exact:
				if y.has(x.val) {
					return false
				}
			case y.exact:
				if x.has(y.val) {
					return false
				}
			default:
				return false
			}
		}
	}
	for _, x := range a.obj {
		for _, y := range b.obj {
			switch {
			case x.exact && y.exact:
				if Equal(x.val, y.val) {
					return false
				}
			case x.exact:
				if y.has(x.val) {
					return false
				}
			case y.exact:
				if x.has(y.val) {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

func (a *arrShape) has(v []any) bool {
	if a.exact {
		return Equal(a.val, v)
	}
	if len(v) < a.min || a.max >= 0 && len(v) > a.max {
		return false
	}
	for i, x := range v {
		if s := a.at(i); s != nil && !s.has(x) {
			return false
		}
	}
	for _, c := range a.contains {
		n := 0
		for _, x := range v {
			if c.s.has(x) {
				n++
			}
		}
		if n < c.min || c.max >= 0 && n > c.max {
			return false
		}
	}
	return true
}

func intersectArr(x, y *arrShape, d dir) []*arrShape {
	if x.exact {
		if y.has(x.val) {
			return []*arrShape{x}
		}
		return nil
	}
	if y.exact {
		return intersectArr(y, x, d)
	}
	out := &arrShape{min: max(x.min, y.min), max: minBound(x.max, y.max)}
	for i := range max(len(x.prefix), len(y.prefix)) {
		out.prefix = append(out.prefix, meet(x.at(i), y.at(i), d))
	}
	out.items = meet(x.items, y.items, d)
	out.contains = append(slices.Clip(x.contains), y.contains...)
	if out.isEmpty() {
		return nil
	}
	return []*arrShape{out}
}

// negate returns shapes whose union is every array not in a.
func (a *arrShape) negate(d dir) []*arrShape {
	if a.exact {
		if d.isOver() {
			return []*arrShape{{max: -1}}
		}
		return nil
	}
	var out []*arrShape
	if a.min > 0 {
		out = append(out, &arrShape{max: a.min - 1})
	}
	if a.max >= 0 {
		out = append(out, &arrShape{min: a.max + 1, max: -1})
	}
	for i, p := range a.prefix {
		if full(p) {
			continue
		}
		s := &arrShape{min: i + 1, max: -1, prefix: make([]*Set, i+1)}
		s.prefix[i] = complement(p, d)
		out = append(out, s)
	}
	if !full(a.items) {
		if len(a.prefix) == 0 {
			out = append(out, &arrShape{max: -1, contains: []containsRule{{s: complement(a.items, d), min: 1, max: -1}}})
		} else if d.isOver() {
			return []*arrShape{{max: -1}}
		}
	}
	for _, c := range a.contains {
		if c.min > 0 {
			out = append(out, &arrShape{max: -1, contains: []containsRule{{s: c.s, min: 0, max: c.min - 1}}})
		}
		if c.max >= 0 {
			out = append(out, &arrShape{max: -1, contains: []containsRule{{s: c.s, min: c.max + 1, max: -1}}})
		}
	}
	return out
}

func arrSubset(x, y *arrShape, w *work) bool {
	if y.isAll() || x.isEmpty() {
		return true
	}
	if x.exact {
		return y.has(x.val)
	}
	if y.exact {
		return false
	}
	if x.min < y.min || y.max >= 0 && (x.max < 0 || x.max > y.max) {
		return false
	}
	for i := range max(len(x.prefix), len(y.prefix)) {
		if !subset(orAll(x.at(i)), orAll(y.at(i)), w) {
			return false
		}
	}
	if !subset(orAll(x.items), orAll(y.items), w) {
		return false
	}
	for _, c := range y.contains {
		if c.min == 0 && c.max < 0 {
			continue
		}
		if !slices.ContainsFunc(x.contains, func(k containsRule) bool {
			lowOK := c.min == 0 || k.min >= c.min && subset(k.s, c.s, w)
			highOK := c.max < 0 || k.max >= 0 && k.max <= c.max && subset(c.s, k.s, w)
			return lowOK && highOK
		}) {
			return false
		}
	}
	return true
}

// --- objects ---

// valueFor is the set a member named k must be in.
func (o *objShape) valueFor(k string) *Set {
	if s, ok := o.props[k]; ok {
		return orAll(s)
	}
	return orAll(o.additional)
}

// nameOK reports whether a member named k may be present at all.
func (o *objShape) nameOK(k string) bool {
	return (o.names == nil || o.names.str.has(k)) && !o.valueFor(k).isEmpty()
}

func (o *objShape) isAll() bool {
	if o.exact || o.min > 0 || o.max >= 0 || len(o.required) > 0 || !full(o.additional) || o.names != nil && !o.names.str.isFull() {
		return false
	}
	for _, s := range o.props {
		if !full(s) {
			return false
		}
	}
	for _, deps := range o.depReq {
		if len(deps) > 0 {
			return false
		}
	}
	return true
}

// closure is the members every object of the shape has.
func (o *objShape) closure() map[string]bool {
	req := maps.Clone(o.required)
	for changed := true; changed; {
		changed = false
		for k, deps := range o.depReq {
			if !req[k] {
				continue
			}
			for _, d := range deps {
				if !req[d] {
					if req == nil {
						req = map[string]bool{}
					}
					req[d] = true
					changed = true
				}
			}
		}
	}
	return req
}

func (o *objShape) isEmpty() bool {
	if o.exact {
		return false
	}
	if o.max >= 0 && o.min > o.max {
		return true
	}
	req := o.closure()
	if o.max >= 0 && len(req) > o.max {
		return true
	}
	for k := range req {
		if !o.nameOK(k) {
			return true
		}
	}
	// With no other member allowed, the named ones are all there is.
	if o.additional != nil && o.additional.isEmpty() || o.names != nil && o.names.str.isEmpty() {
		n := 0
		for k := range o.props {
			if o.nameOK(k) {
				n++
			}
		}
		if o.names != nil && o.names.str.isEmpty() {
			n = 0
		}
		if o.min > n {
			return true
		}
	}
	return false
}

func (o *objShape) has(v map[string]any) bool {
	if o.exact {
		return Equal(o.val, v)
	}
	if len(v) < o.min || o.max >= 0 && len(v) > o.max {
		return false
	}
	for k := range o.required {
		if _, ok := v[k]; !ok {
			return false
		}
	}
	for k, x := range v {
		if o.names != nil && !o.names.str.has(k) || !o.valueFor(k).has(x) {
			return false
		}
	}
	for k, deps := range o.depReq {
		if _, ok := v[k]; !ok {
			continue
		}
		for _, dep := range deps {
			if _, ok := v[dep]; !ok {
				return false
			}
		}
	}
	return true
}

func intersectObj(x, y *objShape, d dir) []*objShape {
	if x.exact {
		if y.has(x.val) {
			return []*objShape{x}
		}
		return nil
	}
	if y.exact {
		return intersectObj(y, x, d)
	}
	out := &objShape{min: max(x.min, y.min), max: minBound(x.max, y.max), props: map[string]*Set{}}
	for k := range x.props {
		out.props[k] = intersect(x.valueFor(k), y.valueFor(k), d)
	}
	for k := range y.props {
		out.props[k] = intersect(x.valueFor(k), y.valueFor(k), d)
	}
	out.additional = meet(x.additional, y.additional, d)
	out.names = meet(x.names, y.names, d)
	if len(x.required)+len(y.required) > 0 {
		out.required = maps.Clone(x.required)
		if out.required == nil {
			out.required = map[string]bool{}
		}
		maps.Copy(out.required, y.required)
	}
	if len(x.depReq)+len(y.depReq) > 0 {
		out.depReq = map[string][]string{}
		for _, m := range []map[string][]string{x.depReq, y.depReq} {
			for k, deps := range m {
				out.depReq[k] = append(slices.Clip(out.depReq[k]), deps...)
			}
		}
	}
	if out.isEmpty() {
		return nil
	}
	return []*objShape{out}
}

func (o *objShape) negate(d dir) []*objShape {
	if o.exact || !full(o.additional) || o.names != nil && !o.names.str.isFull() {
		if d.isOver() {
			return []*objShape{{max: -1}}
		}
		if o.exact {
			return nil
		}
	}
	var out []*objShape
	for _, k := range slices.Sorted(maps.Keys(o.required)) {
		out = append(out, &objShape{max: -1, props: map[string]*Set{k: none()}})
	}
	for _, k := range slices.Sorted(maps.Keys(o.props)) {
		if s := o.props[k]; !full(s) {
			out = append(out, &objShape{max: -1, required: map[string]bool{k: true}, props: map[string]*Set{k: complement(s, d)}})
		}
	}
	if o.min > 0 {
		out = append(out, &objShape{max: o.min - 1})
	}
	if o.max >= 0 {
		out = append(out, &objShape{min: o.max + 1, max: -1})
	}
	// An object with a member the shape does not name, whose value
	// additional rejects: one shape per name the search tries.
	if d.isUnder() && d.w != nil && !full(o.additional) {
		for _, k := range d.w.names {
			if _, named := o.props[k]; !named {
				out = append(out, &objShape{max: -1, required: map[string]bool{k: true}, props: map[string]*Set{k: complement(o.additional, d)}})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.depReq)) {
		for _, dep := range o.depReq[k] {
			out = append(out, &objShape{max: -1, required: map[string]bool{k: true}, props: map[string]*Set{dep: none()}})
		}
	}
	return out
}

func objSubset(x, y *objShape, w *work) bool {
	if y.isAll() || x.isEmpty() {
		return true
	}
	if x.exact {
		return y.has(x.val)
	}
	if y.exact {
		return false
	}
	if x.min < y.min || y.max >= 0 && (x.max < 0 || x.max > y.max) {
		return false
	}
	req := x.closure()
	for k := range y.required {
		if !req[k] {
			return false
		}
	}
	for _, m := range []map[string]*Set{x.props, y.props} {
		for k := range m {
			if x.nameOK(k) && !subset(x.valueFor(k), y.valueFor(k), w) {
				return false
			}
		}
	}
	if !subset(orAll(x.additional), orAll(y.additional), w) {
		return false
	}
	if y.names != nil && (x.names == nil || !subset(x.names, y.names, w)) {
		return false
	}
	for k, deps := range y.depReq {
		if !x.nameOK(k) {
			continue
		}
		for _, dep := range deps {
			if !req[dep] && !slices.Contains(x.depReq[k], dep) {
				return false
			}
		}
	}
	return true
}

func meet(a, b *Set, d dir) *Set {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return intersect(a, b, d)
}

func minBound(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// Equal is JSON Schema's equality of two JSON values (as encoding/json
// decodes them, with UseNumber or without): numbers by value, arrays item
// by item, objects member by member.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	r, s := Number(a), Number(b)
	return r != nil && s != nil && r.Cmp(s) == 0
}
