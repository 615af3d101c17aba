package testmodel

import (
	"encoding/json"
	"math/big"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// number builds a number within every bound and a multiple of every
// multipleOf: in the simplest value the one nearest a typical value (see
// typical), rather than a bare 0. Arithmetic is exact (big.Rat), as the
// validator's is.
func (g *gen) number(atoms []*jsonschema.Schema, integer bool, v int) (any, error) {
	r := numberRulesOf(atoms)
	if r.lo != nil && r.hi != nil {
		if c := r.lo.Cmp(r.hi); c > 0 || (c == 0 && (r.loX || r.hiX)) {
			return nil, unsat(r.loKw, r.loAt, "no number is both %s %s and %s %s", r.loKw, r.lo.RatString(), r.hiKw, r.hi.RatString())
		}
	}
	one := big.NewRat(1, 1)
	if types, _ := typesOf(atoms); g.simple && v == 0 && types&tNumber != 0 && r.step == nil && r.lo != nil && r.hi != nil {
		// A fraction range such as [0, 1] is typically met inside, not at
		// an end: 0.5 rather than 0.
		if w := new(big.Rat).Sub(r.hi, r.lo); w.Sign() > 0 && w.Cmp(one) <= 0 {
			t, _ := r.typical()
			return ratNumber(t), nil
		}
	}
	intStep := r.step
	if integer {
		intStep = lcm(r.step, one)
	}
	if intStep != nil || !integer {
		s := intStep
		if s == nil {
			s = one // try whole numbers first
		}
		if k, ok := g.multiple(s, &r, v); ok {
			return ratNumber(new(big.Rat).Mul(new(big.Rat).SetInt(k), s)), nil
		}
		if intStep != nil {
			if r.step == nil {
				return nil, unsat("type", firstOr(atoms), "no integer lies between the bounds")
			}
			return nil, unsat("multipleOf", r.stepAt, "no multiple of %s lies between the bounds", r.step.RatString())
		}
	}
	// Numbers between two bounds with no whole number in between.
	if r.lo == nil || r.hi == nil {
		return nil, unsat(r.loKw, r.loAt, "no number found within the bounds")
	}
	return g.fraction(&r, v), nil
}

// numberRules are the numeric keywords of a value's atoms, combined.
type numberRules struct {
	lo, hi       *big.Rat // nil: no bound
	loX, hiX     bool     // the bound is exclusive
	loKw, hiKw   string
	loAt, stepAt *jsonschema.Schema
	step         *big.Rat // the least common multiple of every multipleOf; nil: none
}

// numberRulesOf combines the numeric keywords of atoms: the tightest
// bounds, and a step every multipleOf divides.
func numberRulesOf(atoms []*jsonschema.Schema) numberRules {
	r := numberRules{loKw: "minimum", hiKw: "maximum"}
	for _, a := range atoms {
		if a.Minimum != nil {
			r.raise(a.Minimum, false, "minimum", a)
		}
		if a.ExclusiveMinimum != nil {
			r.raise(a.ExclusiveMinimum, true, "exclusiveMinimum", a)
		}
		if a.Maximum != nil {
			r.lower(a.Maximum, false, "maximum")
		}
		if a.ExclusiveMaximum != nil {
			r.lower(a.ExclusiveMaximum, true, "exclusiveMaximum")
		}
		if a.MultipleOf != nil && a.MultipleOf.Sign() > 0 {
			r.step, r.stepAt = lcm(r.step, a.MultipleOf), a
		}
	}
	return r
}

// raise takes lower bound b (of keyword kw in a) if it is tighter.
func (r *numberRules) raise(b *big.Rat, excl bool, kw string, a *jsonschema.Schema) {
	if r.lo == nil || b.Cmp(r.lo) > 0 || (b.Cmp(r.lo) == 0 && excl) {
		r.lo, r.loX, r.loKw, r.loAt = b, excl, kw, a
	}
}

// lower takes upper bound b (of keyword kw) if it is tighter.
func (r *numberRules) lower(b *big.Rat, excl bool, kw string) {
	if r.hi == nil || b.Cmp(r.hi) < 0 || (b.Cmp(r.hi) == 0 && excl) {
		r.hi, r.hiX, r.hiKw = b, excl, kw
	}
}

// fraction returns a number strictly between the two bounds:
// lo + (hi-lo) * 1/(v+2), distinct for each variant, in the simplest value;
// a random tenth of the way in a varied one.
func (g *gen) fraction(r *numberRules, v int) json.Number {
	width := new(big.Rat).Sub(r.hi, r.lo)
	frac := new(big.Rat).SetFrac64(1, int64(v)+2)
	if !g.simple {
		frac.SetFrac64(int64(g.rng.IntN(8))+1, 10)
	}
	return ratNumber(new(big.Rat).Add(r.lo, new(big.Rat).Mul(width, frac)))
}

// typical is the number a value within the bounds typically takes, as a
// person filling in the field would: the middle of a narrow closed range
// (a rating 1..5 gives 3, a fraction 0..1 gives 0.5), else 1 (a count, a
// price, an amount), which multiple moves into the bounds. mid tells
// which.
func (r *numberRules) typical() (t *big.Rat, mid bool) {
	if r.lo != nil && r.hi != nil {
		if w := new(big.Rat).Sub(r.hi, r.lo); w.Cmp(big.NewRat(narrowRange, 1)) <= 0 {
			m := new(big.Rat).Add(r.lo, r.hi)
			return m.Quo(m, big.NewRat(2, 1)), true
		}
	}
	return big.NewRat(1, 1), false
}

// narrowRange is the widest closed range whose middle is its typical value.
const narrowRange = 10

// multiple returns k such that k*step lies within the bounds: the k nearest
// the typical value, moved v places (alternately up and down) for variant v.
func (g *gen) multiple(step *big.Rat, r *numberRules, v int) (*big.Int, bool) {
	kmin, kmax := multiples(step, r)
	if kmin != nil && kmax != nil && kmin.Cmp(kmax) > 0 {
		return nil, false
	}
	// The multiple nearest the middle of a narrow range (halves round up),
	// else the least multiple not below 1, within the bounds.
	t, mid := r.typical()
	q := new(big.Rat).Quo(t, step)
	base := ceil(q)
	if mid {
		base = floor(q.Add(q, big.NewRat(1, 2)))
	}
	switch {
	case kmin != nil && base.Cmp(kmin) < 0:
		base.Set(kmin)
	case kmax != nil && base.Cmp(kmax) > 0:
		base.Set(kmax)
	}
	if !g.simple {
		base = g.randomBase(base, kmin, kmax)
	}
	return nthMultiple(base, kmin, kmax, v)
}

// multiples returns the least and the greatest k for which k*step lies
// within the bounds; nil where there is no bound.
func multiples(step *big.Rat, r *numberRules) (kmin, kmax *big.Int) {
	if r.lo != nil {
		q := new(big.Rat).Quo(r.lo, step)
		kmin = ceil(q)
		if r.loX && q.IsInt() {
			kmin.Add(kmin, big.NewInt(1))
		}
	}
	if r.hi != nil {
		q := new(big.Rat).Quo(r.hi, step)
		kmax = floor(q)
		if r.hiX && q.IsInt() {
			kmax.Sub(kmax, big.NewInt(1))
		}
	}
	return kmin, kmax
}

// randomBase moves base, the simplest k, to a random one within a hundred
// steps of it (anywhere in a range of at most 200), staying within
// kmin..kmax.
func (g *gen) randomBase(base, kmin, kmax *big.Int) *big.Int {
	var off *big.Int
	switch {
	case kmin != nil && kmax == nil:
		off = big.NewInt(int64(g.rng.IntN(101)))
	case kmax != nil && kmin == nil:
		off = big.NewInt(-int64(g.rng.IntN(101)))
	default:
		off = big.NewInt(int64(g.rng.IntN(201) - 100))
	}
	if kmin != nil && kmax != nil {
		width := new(big.Int).Sub(kmax, kmin)
		if width.Cmp(big.NewInt(200)) <= 0 {
			off = big.NewInt(g.rng.Int64N(width.Int64() + 1))
			base.Set(kmin)
		}
	}
	if c := new(big.Int).Add(base, off); within(c, kmin, kmax) {
		return c
	}
	return base
}

// within tells whether k lies in kmin..kmax (nil: no bound).
func within(k, kmin, kmax *big.Int) bool {
	return (kmin == nil || k.Cmp(kmin) >= 0) && (kmax == nil || k.Cmp(kmax) <= 0)
}

// nthMultiple returns the v-th member of base, base+1, base-1, base+2, ...
// within kmin..kmax: it alternates while both sides have room, then goes
// on along the side that has; false when v runs past both.
func nthMultiple(base, kmin, kmax *big.Int, v int) (*big.Int, bool) {
	vv := big.NewInt(int64(v))
	up, down := new(big.Int).Set(vv), new(big.Int).Set(vv) // room on each side, capped at v
	if kmax != nil {
		if r := new(big.Int).Sub(kmax, base); r.Cmp(up) < 0 {
			up = r
		}
	}
	if kmin != nil {
		if r := new(big.Int).Sub(base, kmin); r.Cmp(down) < 0 {
			down = r
		}
	}
	m := int64(min(up.Int64(), down.Int64()))
	var off int64
	switch rest := int64(v) - 2*m; {
	case rest <= 0:
		off = (int64(v) + 1) / 2
		if v%2 == 0 {
			off = -off
		}
	case up.Int64() > m && rest <= up.Int64()-m:
		off = m + rest
	case down.Int64() > m && rest <= down.Int64()-m:
		off = -(m + rest)
	default:
		return nil, false
	}
	return base.Add(base, big.NewInt(off)), true
}

func floor(q *big.Rat) *big.Int {
	return new(big.Int).Div(q.Num(), q.Denom()) // Euclidean: rounds down for a positive divisor
}

func ceil(q *big.Rat) *big.Int {
	n := new(big.Int).Neg(q.Num())
	f := new(big.Int).Div(n, q.Denom())
	return f.Neg(f)
}

// lcm is the least common multiple of two positive rationals (nil: none).
func lcm(a, b *big.Rat) *big.Rat {
	if a == nil {
		return new(big.Rat).Set(b)
	}
	if b == nil {
		return new(big.Rat).Set(a)
	}
	// lcm(p/q, r/s) = lcm(p, r) / gcd(q, s) for reduced fractions.
	p, q, r, s := a.Num(), a.Denom(), b.Num(), b.Denom()
	g := new(big.Int).GCD(nil, nil, p, r)
	l := new(big.Int).Mul(p, r)
	l.Div(l, g)
	d := new(big.Int).GCD(nil, nil, q, s)
	return new(big.Rat).SetFrac(l, d)
}

func ratOf(n json.Number) (*big.Rat, bool) {
	return new(big.Rat).SetString(string(n))
}

// ratNumber writes r as a JSON number: exact, since bounds and multiples
// written in decimal have finite decimal expansions.
func ratNumber(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	d := new(big.Int).Set(r.Denom())
	digits, twos, fives := 0, 0, 0
	two, five, zero := big.NewInt(2), big.NewInt(5), big.NewInt(0)
	m := new(big.Int)
	for {
		if new(big.Int).DivMod(d, two, m); m.Cmp(zero) != 0 {
			break
		}
		d.Div(d, two)
		twos++
	}
	for {
		if new(big.Int).DivMod(d, five, m); m.Cmp(zero) != 0 {
			break
		}
		d.Div(d, five)
		fives++
	}
	digits = max(twos, fives)
	if d.Cmp(big.NewInt(1)) != 0 {
		digits = 20 // not a finite decimal; the validator will judge
	}
	return json.Number(r.FloatString(digits))
}
