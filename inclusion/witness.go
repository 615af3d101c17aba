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
	return diff.sample(0)
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
// of 1501 bytes to show).
const (
	maxSampleDepth  = 32
	maxSampleLen    = 1000
	maxSampleString = 1 << 16
)

// sample returns a value in s, when a simple one is found; every value it
// returns is checked with has, so a candidate the shapes do not admit is
// never returned.
func (s *Set) sample(depth int) (any, bool) {
	if s == nil {
		return nil, true // every value
	}
	if depth > maxSampleDepth {
		return nil, false
	}
	for _, v := range s.candidates(depth) {
		if s.has(v) {
			return v, true
		}
	}
	return nil, false
}

func (s *Set) candidates(depth int) []any {
	var out []any
	if s.null {
		out = append(out, nil)
	}
	if s.bools&1 != 0 {
		out = append(out, false)
	}
	if s.bools&2 != 0 {
		out = append(out, true)
	}
	for _, iv := range s.num.ints {
		if n, ok := iv.integer(); ok {
			out = append(out, json.Number(n.String()))
		}
	}
	for _, iv := range s.num.frac {
		if r, ok := iv.fraction(); ok {
			out = append(out, json.Number(r.FloatString(20)))
		}
	}
	out = append(out, s.str.candidates()...)
	for _, a := range s.arr {
		if v, ok := a.sample(depth); ok {
			out = append(out, v)
		}
	}
	for _, o := range s.obj {
		if v, ok := o.sample(depth); ok {
			out = append(out, v)
		}
	}
	return out
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

// candidates are strings the part may hold: its listed members, and
// strings of the least lengths it allows.
func (p strPart) candidates() []any {
	var out []any
	for _, s := range slices.Sorted(maps.Keys(p.incl)) {
		out = append(out, s)
	}
	for _, iv := range p.lens {
		n, ok := iv.integer()
		if iv.lo.v == nil || n.Sign() < 0 {
			n, ok = big.NewInt(0), (ivals{iv}).contains(new(big.Rat))
		}
		if !ok || !n.IsInt64() || n.Int64() > maxSampleString {
			continue
		}
		for _, c := range []string{"a", "b", "c", "d"} {
			out = append(out, strings.Repeat(c, int(n.Int64())))
		}
	}
	return out
}

func (a *arrShape) sample(depth int) (any, bool) {
	if a.exact {
		return a.val, true
	}
	if a.min > maxSampleLen {
		return nil, false
	}
	out := make([]any, a.min)
	for i := range out {
		v, ok := a.at(i).sample(depth + 1)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func (o *objShape) sample(depth int) (any, bool) {
	if o.exact {
		return o.val, true
	}
	out := map[string]any{}
	put := func(k string) bool {
		if _, done := out[k]; done || !o.nameOK(k) {
			return false
		}
		v, ok := o.valueFor(k).sample(depth + 1)
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
	for i := 0; len(out) < o.min && i < maxSampleLen; i++ {
		put("p" + strings.Repeat("_", i))
	}
	return out, len(out) >= o.min
}
