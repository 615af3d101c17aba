package inclusion

import (
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strings"
)

// Witness returns a JSON value that sub accepts and super rejects, when the
// engine can name one: the proof that sub is not included in super, which
// Includes cannot give. The value lies in a subset of sub's values less a
// superset of super's, so it is a counterexample whenever the engine is
// sound; ok is false when the engine finds none, which proves nothing.
func Witness(sub, super any) (v any, ok bool) { return WitnessIn(sub, super, nil) }

// WitnessIn is Witness with the time its value checks take spent from bud
// (nil for a budget of its own).
func WitnessIn(sub, super any, bud *Budget) (v any, ok bool) {
	if bud == nil {
		bud = NewBudget()
	}
	ab, bb := newBuilder(sub, bud), newBuilder(super, bud)
	ab.work.names = memberNames(sub)
	a := ab.build(sub, "", ab.under())
	b := bb.build(super, "", bb.over())
	d := ab.under()
	diff := intersect(a, complement(b, d), d)
	sp := &sampler{bud: bud, failed: map[*Set]int{}, runs: map[strRun]string{}}
	return sp.sample(diff, 0)
}

// maxNames bounds the member names a counterexample may add to an object
// its super closes: each is a shape of the complement.
const maxNames = 8

// memberNames lists the member names a schema document declares, and one
// it does not: the ones a counterexample to a closed object can use.
func memberNames(doc any) []string {
	seen := map[string]bool{}
	Walk(doc, func(_, _ string, sub any) {
		m, _ := sub.(map[string]any)
		props, _ := m["properties"].(map[string]any)
		for k := range props {
			seen[k] = true
		}
	})
	names := slices.Sorted(maps.Keys(seen))
	names = names[:min(len(names), maxNames-1)]
	// and one the document does not declare
	fresh := "x"
	for seen[fresh] {
		fresh += "x"
	}
	return append(names, fresh)
}

// maxSampleDepth bounds how deep sample goes into nested arrays and
// objects; maxSampleLen how long an array it builds, maxSampleString how
// long a string (a bound such as maxLength 1500 raised to 3000 needs one
// of 1501 bytes to show). What it builds in all is bounded by the Budget
// (MaxSampleValues, MaxSampleBytes).
const (
	maxSampleDepth  = 32
	maxSampleLen    = 1000
	maxSampleString = 1 << 16
)

// sampler builds the values of one Witness: every value and every byte of
// a string it makes is taken from bud, and the sets that held no sample
// are remembered, so that a set reached again, through the branches of
// an anyOf that all lead to it, is not searched again.
type sampler struct {
	bud    *Budget
	built  int               // the values built so far
	failed map[*Set]int      // the least depth at which the set gave no sample
	runs   map[strRun]string // the strings of one letter built so far
}

type strRun struct {
	c byte
	n int
}

// sample returns a value in s, when a simple one is found; every value it
// returns is checked with has, so a candidate the shapes do not admit is
// never returned. The candidates are built one at a time, the first that
// s has returned: an array or an object is built only when no simpler
// value will do.
func (sp *sampler) sample(s *Set, depth int) (any, bool) {
	if s == nil {
		return nil, true // every value
	}
	if depth > maxSampleDepth {
		return nil, false
	}
	if d, ok := sp.failed[s]; ok && depth >= d {
		return nil, false // less room below than where it failed
	}
	v, ok := sp.first(s, depth)
	if !ok && !sp.bud.Spent() {
		sp.failed[s] = depth
	}
	return v, ok
}

// build takes n values and size bytes of strings from the budget.
func (sp *sampler) build(n, size int) bool {
	sp.built += n
	return sp.bud.build(n, size)
}

// checked is whether s has v, an array or an object built from sp.built
// on: the check visits what was built, and costs it again.
func (sp *sampler) checked(s *Set, v any, from int) bool {
	return sp.bud.build(sp.built-from, 0) && s.has(v)
}

// first returns the first candidate of s that s has: null, the booleans,
// numbers, strings, then arrays and objects.
func (sp *sampler) first(s *Set, depth int) (any, bool) {
	var scalars []any
	if s.null {
		scalars = append(scalars, nil)
	}
	if s.bools&1 != 0 {
		scalars = append(scalars, false)
	}
	if s.bools&2 != 0 {
		scalars = append(scalars, true)
	}
	for _, iv := range s.num.ints {
		if n, ok := iv.integer(); ok {
			scalars = append(scalars, json.Number(n.String()))
		}
	}
	for _, iv := range s.num.frac {
		if r, ok := iv.fraction(); ok {
			scalars = append(scalars, json.Number(r.FloatString(20)))
		}
	}
	for _, v := range scalars {
		if !sp.build(1, 0) {
			return nil, false
		}
		if s.has(v) {
			return v, true
		}
	}
	if v, ok := sp.str(s); ok {
		return v, true
	}
	for _, a := range s.arr {
		from := sp.built
		if v, ok := sp.arr(a, depth); ok && sp.checked(s, v, from) {
			return v, true
		}
		if sp.bud.Spent() {
			return nil, false
		}
	}
	for _, o := range s.obj {
		from := sp.built
		if v, ok := sp.obj(o, depth); ok && sp.checked(s, v, from) {
			return v, true
		}
		if sp.bud.Spent() {
			return nil, false
		}
	}
	return nil, false
}

// str returns the first string s has of the ones its string part may
// hold: its listed members, and strings of the least lengths it allows.
func (sp *sampler) str(s *Set) (any, bool) {
	p := s.str
	for _, m := range slices.Sorted(maps.Keys(p.incl)) {
		if !sp.build(1, len(m)) {
			return nil, false
		}
		if s.has(m) {
			return m, true
		}
	}
	for _, iv := range p.lens {
		n, ok := iv.integer()
		if iv.lo.v == nil || n.Sign() < 0 {
			n, ok = big.NewInt(0), (ivals{iv}).contains(new(big.Rat))
		}
		if !ok || !n.IsInt64() || n.Int64() > maxSampleString {
			continue
		}
		for _, c := range []byte("abcd") {
			if !sp.build(1, int(n.Int64())) {
				return nil, false
			}
			if v := sp.run(c, int(n.Int64())); s.has(v) {
				return v, true
			}
		}
	}
	return nil, false
}

// run returns n letters c, built once for every use.
func (sp *sampler) run(c byte, n int) string {
	k := strRun{c, n}
	r, ok := sp.runs[k]
	if !ok {
		r = strings.Repeat(string(c), n)
		sp.runs[k] = r
	}
	return r
}

// exact charges for a value a schema lists, as for one built: it is
// printed and checked as often as it is used.
func (sp *sampler) exact(v any) bool {
	n, size := 0, 0
	var walk func(x any)
	walk = func(x any) {
		n++
		switch x := x.(type) {
		case string:
			size += len(x)
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for k, y := range x {
				size += len(k)
				walk(y)
			}
		}
	}
	walk(v)
	return sp.build(n, size)
}

// integer returns an integer in the interval, nearest zero where it is
// unbounded.
func (iv interval) integer() (*big.Int, bool) {
	var n *big.Int
	switch {
	case iv.lo.v == nil && iv.hi.v == nil:
		n = new(big.Int)
	case iv.lo.v != nil:
		n = ceil(iv.lo.v)
		if iv.lo.open && isInt(iv.lo.v) {
			n.Add(n, big.NewInt(1))
		}
	default:
		n = ceil(iv.hi.v)
		for iv.hi.v.Cmp(new(big.Rat).SetInt(n)) < 0 || iv.hi.open && iv.hi.v.Cmp(new(big.Rat).SetInt(n)) == 0 {
			n.Sub(n, big.NewInt(1))
		}
	}
	return n, (ivals{iv}).contains(new(big.Rat).SetInt(n))
}

// fraction returns a number in the interval that is not an integer, with
// a short decimal form where there is one.
func (iv interval) fraction() (*big.Rat, bool) {
	half := big.NewRat(1, 2)
	var r *big.Rat
	switch {
	case iv.lo.v == nil && iv.hi.v == nil:
		r = half
	case iv.lo.v == nil:
		r = new(big.Rat).Sub(iv.hi.v, half)
	case iv.hi.v == nil:
		r = new(big.Rat).Add(iv.lo.v, half)
	default:
		r = new(big.Rat).Add(iv.lo.v, iv.hi.v)
		r.Mul(r, half)
	}
	if r.IsInt() {
		r.Add(r, big.NewRat(1, 1<<20))
	}
	return r, (ivals{iv}).contains(r) && !r.IsInt()
}

func (sp *sampler) arr(a *arrShape, depth int) (any, bool) {
	if a.exact {
		return a.val, sp.exact(a.val)
	}
	if a.min > maxSampleLen || !sp.build(1, 0) {
		return nil, false
	}
	out := make([]any, a.min)
	for i := range out {
		v, ok := sp.sample(a.at(i), depth+1)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func (sp *sampler) obj(o *objShape, depth int) (any, bool) {
	if o.exact {
		return o.val, sp.exact(o.val)
	}
	if !sp.build(1, 0) {
		return nil, false
	}
	out := map[string]any{}
	put := func(k string) bool {
		if _, done := out[k]; done || !o.nameOK(k) || !sp.build(0, len(k)) {
			return false
		}
		v, ok := sp.sample(o.valueFor(k), depth+1)
		if ok {
			out[k] = v
		}
		return ok
	}
	for _, k := range slices.Sorted(maps.Keys(o.closure())) {
		if !put(k) {
			return nil, false
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.props)) {
		if len(out) >= o.min {
			break
		}
		put(k)
	}
	for i := 0; len(out) < o.min && i < maxSampleLen && !sp.bud.Spent(); i++ {
		put("p" + strings.Repeat("_", i))
	}
	return out, len(out) >= o.min
}
