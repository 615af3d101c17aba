package inclusion

import (
	"math/big"
	"slices"
)

// A bound is one end of an interval: a value, or infinity when v is nil.
type bound struct {
	v    *big.Rat
	open bool
}

// An interval of the real line; which of its points count (all reals,
// integers only, non-integers only) is up to the set that holds it.
type interval struct{ lo, hi bound }

// ivals is a union of intervals, sorted and disjoint. The empty list is the
// empty set; one interval with both ends infinite is the whole line.
type ivals []interval

// whole is the whole line, shared: interval lists are never changed in
// place.
var whole = ivals{{}}

func fullIvals() ivals { return whole }

func (a ivals) isWhole() bool { return len(a) == 1 && a[0].lo.v == nil && a[0].hi.v == nil }

func point(r *big.Rat) ivals { return ivals{{lo: bound{v: r}, hi: bound{v: r}}} }

func atLeast(r *big.Rat, open bool) ivals { return ivals{{lo: bound{v: r, open: open}}} }

func atMost(r *big.Rat, open bool) ivals { return ivals{{hi: bound{v: r, open: open}}} }

func (iv interval) empty() bool {
	if iv.lo.v == nil || iv.hi.v == nil {
		return false
	}
	c := iv.lo.v.Cmp(iv.hi.v)
	return c > 0 || c == 0 && (iv.lo.open || iv.hi.open)
}

// cmpLo orders lower bounds: -inf first; at one value a closed bound
// first.
func cmpLo(a, b bound) int {
	switch {
	case a.v == nil && b.v == nil:
		return 0
	case a.v == nil:
		return -1
	case b.v == nil:
		return 1
	}
	if c := a.v.Cmp(b.v); c != 0 {
		return c
	}
	switch {
	case a.open == b.open:
		return 0
	case a.open:
		return 1
	}
	return -1
}

// cmpHi orders upper bounds: +inf last; at one value an open bound first.
func cmpHi(a, b bound) int {
	switch {
	case a.v == nil && b.v == nil:
		return 0
	case a.v == nil:
		return 1
	case b.v == nil:
		return -1
	}
	if c := a.v.Cmp(b.v); c != 0 {
		return c
	}
	switch {
	case a.open == b.open:
		return 0
	case a.open:
		return -1
	}
	return 1
}

// intersect is exact. Both lists are made normal (sorted, apart) and
// swept together, so the cost is linear in their lengths past the sort: an
// enum of thousands of numbers on each side of an inclusion costs
// thousands of steps, not millions.
func (a ivals) intersect(b ivals) ivals {
	a, b = a.normal(), b.normal()
	var out ivals
	for i, j := 0, 0; i < len(a) && j < len(b); {
		x, y := a[i], b[j]
		iv := x
		if cmpLo(y.lo, iv.lo) > 0 {
			iv.lo = y.lo
		}
		if cmpHi(y.hi, iv.hi) < 0 {
			iv.hi = y.hi
		}
		if !iv.empty() {
			out = append(out, iv)
		}
		// The interval that ends first meets nothing after the other.
		switch c := cmpHi(x.hi, y.hi); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			i++
			j++
		}
	}
	return out.normal()
}

// complement is exact: the gaps between the intervals.
func (a ivals) complement() ivals {
	a = a.normal()
	var out ivals
	lo := bound{} // -inf
	for _, iv := range a {
		if iv.lo.v != nil {
			gap := interval{lo: lo, hi: bound{v: iv.lo.v, open: !iv.lo.open}}
			if !gap.empty() {
				out = append(out, gap)
			}
		}
		if iv.hi.v == nil {
			return out
		}
		lo = bound{v: iv.hi.v, open: !iv.hi.open}
	}
	return append(out, interval{lo: lo})
}

func (a ivals) union(b ivals) ivals {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	return append(append(make(ivals, 0, len(a)+len(b)), a...), b...).normal()
}

// normal sorts the intervals and merges those that overlap or touch.
func (a ivals) normal() ivals {
	var in ivals
	for _, iv := range a {
		if !iv.empty() {
			in = append(in, iv)
		}
	}
	if len(in) < 2 {
		return in
	}
	slices.SortStableFunc(in, func(x, y interval) int { return cmpLo(x.lo, y.lo) })
	out := ivals{in[0]}
	for _, iv := range in[1:] {
		last := &out[len(out)-1]
		if touches(last.hi, iv.lo) {
			if cmpHi(iv.hi, last.hi) > 0 {
				last.hi = iv.hi
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// touches reports whether an interval ending at hi and one starting at lo
// (not before the first's start) leave no real number between them.
func touches(hi, lo bound) bool {
	if hi.v == nil || lo.v == nil {
		return true
	}
	c := hi.v.Cmp(lo.v)
	return c > 0 || c == 0 && !(hi.open && lo.open)
}

func (a ivals) isFull() bool { return len(a.complement()) == 0 }

// hasInteger reports whether some integer lies in the set.
func (a ivals) hasInteger() bool {
	for _, iv := range a {
		if iv.lo.v == nil || iv.hi.v == nil {
			return true
		}
		if lo, ok := iv.lo.least(); ok {
			if hi, ok := iv.hi.greatest(); ok {
				if lo <= hi {
					return true
				}
				continue
			}
		}
		n := ceil(iv.lo.v)
		if iv.lo.open && isInt(iv.lo.v) {
			n.Add(n, big.NewInt(1))
		}
		c := new(big.Rat).SetInt(n).Cmp(iv.hi.v)
		if c < 0 || c == 0 && !iv.hi.open {
			return true
		}
	}
	return false
}

// hasFraction reports whether some non-integer number lies in the set.
func (a ivals) hasFraction() bool {
	for _, iv := range a {
		if iv.lo.v == nil || iv.hi.v == nil || iv.lo.v.Cmp(iv.hi.v) < 0 {
			return true
		}
		if !isInt(iv.lo.v) {
			return true // a point that is a fraction
		}
	}
	return false
}

// hasNatural reports whether the set holds an integer n >= from (0 or 1).
func (a ivals) hasNatural(from int64) bool {
	for _, iv := range a {
		if iv.hi.v == nil {
			return true
		}
		if hi, ok := iv.hi.greatest(); ok {
			lo, ok := iv.lo.least()
			if iv.lo.v == nil {
				lo, ok = from, true
			}
			if ok {
				if max(lo, from) <= hi {
					return true
				}
				continue
			}
		}
		// the least integer in the interval that is at least from
		n := big.NewInt(from)
		if iv.lo.v != nil {
			c := ceil(iv.lo.v)
			if iv.lo.open && isInt(iv.lo.v) {
				c.Add(c, big.NewInt(1))
			}
			if c.Cmp(n) > 0 {
				n = c
			}
		}
		c := new(big.Rat).SetInt(n).Cmp(iv.hi.v)
		if c < 0 || c == 0 && !iv.hi.open {
			return true
		}
	}
	return false
}

func (a ivals) contains(r *big.Rat) bool {
	for _, iv := range a {
		if iv.lo.v != nil {
			c := r.Cmp(iv.lo.v)
			if c < 0 || c == 0 && iv.lo.open {
				continue
			}
		}
		if iv.hi.v != nil {
			c := r.Cmp(iv.hi.v)
			if c > 0 || c == 0 && iv.hi.open {
				continue
			}
		}
		return true
	}
	return false
}

func isInt(r *big.Rat) bool { return r.IsInt() }

// smallInt is the bound below which least and greatest answer without
// big numbers: far from overflowing when one is added.
const smallInt = 1 << 62

// least returns the least integer a lower bound admits, when the bound is
// a small integer: most bounds are, and big numbers allocate.
func (b bound) least() (int64, bool) {
	n, ok := smallValue(b.v)
	if ok && b.open {
		n++
	}
	return n, ok
}

// greatest returns the greatest integer an upper bound admits, when the
// bound is a small integer.
func (b bound) greatest() (int64, bool) {
	n, ok := smallValue(b.v)
	if ok && b.open {
		n--
	}
	return n, ok
}

func smallValue(r *big.Rat) (int64, bool) {
	if r == nil || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	n := r.Num().Int64()
	return n, n > -smallInt && n < smallInt
}

func ceil(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// maxMultiples bounds the multiples of a multipleOf an interval lists one
// by one.
const maxMultiples = 64

// multiples keeps the numbers of n that are multiples of m (m > 0). An
// integer is a multiple of p/q (in lowest terms) exactly when it is one of
// p, so integers and fractions are kept apart. Where an interval holds at
// most maxMultiples multiples they are listed, exactly; elsewhere the
// interval's ends move in to the multiples nearest inside them, which
// keeps every multiple (over), or one multiple stands for them all (under),
// unless every integer is a multiple.
func (n numPart) multiples(m *big.Rat, d dir) numPart {
	p := new(big.Rat).SetInt(m.Num())
	out := numPart{ints: multiplesIn(n.ints, p, d, true)}
	if !m.IsInt() {
		out.frac = multiplesIn(n.frac, m, d, false)
	}
	return out
}

// multiplesIn is multiples for the integers (ints) or the fractions of a.
func multiplesIn(a ivals, m *big.Rat, d dir, ints bool) ivals {
	everyInt := ints && m.Cmp(big.NewRat(1, 1)) == 0
	var out ivals
	for _, iv := range a {
		// The multiples in iv are k·m for lo <= k <= hi (nil: unbounded).
		var lo, hi *big.Int
		if iv.lo.v != nil {
			q := new(big.Rat).Quo(iv.lo.v, m)
			lo = ceil(q)
			if iv.lo.open && q.IsInt() {
				lo.Add(lo, big.NewInt(1))
			}
		}
		if iv.hi.v != nil {
			q := new(big.Rat).Quo(iv.hi.v, m)
			hi = ceil(q.Neg(q))
			hi.Neg(hi)
			if iv.hi.open && q.IsInt() {
				hi.Sub(hi, big.NewInt(1))
			}
		}
		at := func(k *big.Int) *big.Rat { return new(big.Rat).Mul(new(big.Rat).SetInt(k), m) }
		if lo != nil && hi != nil {
			span := new(big.Int).Sub(hi, lo)
			if span.Sign() < 0 {
				continue // no multiple
			}
			if span.IsInt64() && span.Int64() < maxMultiples {
				for k := new(big.Int).Set(lo); k.Cmp(hi) <= 0; k.Add(k, big.NewInt(1)) {
					if x := at(k); ints || !x.IsInt() {
						out = append(out, point(x)...)
					}
				}
				continue
			}
		}
		if d.isOver() || everyInt {
			var t interval
			if lo != nil {
				t.lo = bound{v: at(lo)}
			}
			if hi != nil {
				t.hi = bound{v: at(hi)}
			}
			out = append(out, t)
			continue
		}
		var one *big.Rat
		switch {
		case lo != nil:
			one = at(lo)
		case hi != nil:
			one = at(hi)
		default:
			one = new(big.Rat)
		}
		if ints || !one.IsInt() {
			out = append(out, point(one)...)
		}
	}
	return out.normal()
}
