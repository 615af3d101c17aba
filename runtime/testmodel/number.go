package testmodel

import (
	"encoding/json"
	"math/big"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// number builds a number within every bound and a multiple of every
// multipleOf: the one nearest zero in the simplest value. Arithmetic is
// exact (big.Rat), as the validator's is.
func (g *gen) number(atoms []*jsonschema.Schema, integer bool, v int) (any, error) {
	at := firstOr(atoms)
	var (
		lo, hi       *big.Rat
		loX, hiX     bool
		loKw, hiKw   = "minimum", "maximum"
		loAt, stepAt *jsonschema.Schema
		step         *big.Rat
	)
	raise := func(r *big.Rat, excl bool, kw string, a *jsonschema.Schema) {
		if lo == nil || r.Cmp(lo) > 0 || (r.Cmp(lo) == 0 && excl) {
			lo, loX, loKw, loAt = r, excl, kw, a
		}
	}
	lower := func(r *big.Rat, excl bool, kw string) {
		if hi == nil || r.Cmp(hi) < 0 || (r.Cmp(hi) == 0 && excl) {
			hi, hiX, hiKw = r, excl, kw
		}
	}
	for _, a := range atoms {
		if a.Minimum != nil {
			raise(a.Minimum, false, "minimum", a)
		}
		if a.ExclusiveMinimum != nil {
			raise(a.ExclusiveMinimum, true, "exclusiveMinimum", a)
		}
		if a.Maximum != nil {
			lower(a.Maximum, false, "maximum")
		}
		if a.ExclusiveMaximum != nil {
			lower(a.ExclusiveMaximum, true, "exclusiveMaximum")
		}
		if a.MultipleOf != nil && a.MultipleOf.Sign() > 0 {
			step, stepAt = lcm(step, a.MultipleOf), a
		}
	}
	if lo != nil && hi != nil {
		if c := lo.Cmp(hi); c > 0 || (c == 0 && (loX || hiX)) {
			return nil, unsat(loKw, loAt, "no number is both %s %s and %s %s", loKw, lo.RatString(), hiKw, hi.RatString())
		}
	}
	one := big.NewRat(1, 1)
	intStep := step
	if integer {
		intStep = lcm(step, one)
	}
	if intStep != nil || !integer {
		s := intStep
		if s == nil {
			s = one // try whole numbers first
		}
		if k, ok := g.multiple(s, lo, hi, loX, hiX, v); ok {
			return ratNumber(new(big.Rat).Mul(new(big.Rat).SetInt(k), s)), nil
		}
		if intStep != nil {
			if step == nil {
				return nil, unsat("type", at, "no integer lies between the bounds")
			}
			return nil, unsat("multipleOf", stepAt, "no multiple of %s lies between the bounds", step.RatString())
		}
	}
	// Numbers between two bounds with no whole number in between.
	if lo == nil || hi == nil {
		return nil, unsat(loKw, loAt, "no number found within the bounds")
	}
	// lo + (hi-lo) * 1/(v+2): distinct for each variant, strictly inside.
	width := new(big.Rat).Sub(hi, lo)
	frac := new(big.Rat).SetFrac64(1, int64(v)+2)
	if !g.simple {
		frac.SetFrac64(int64(g.rng.IntN(8))+1, 10)
	}
	r := new(big.Rat).Add(lo, new(big.Rat).Mul(width, frac))
	return ratNumber(r), nil
}

// multiple returns k such that k*step lies within the bounds: the k nearest
// zero, moved v places (alternately up and down) for variant v.
func (g *gen) multiple(step, lo, hi *big.Rat, loX, hiX bool, v int) (*big.Int, bool) {
	var kmin, kmax *big.Int
	if lo != nil {
		q := new(big.Rat).Quo(lo, step)
		kmin = ceil(q)
		if loX && q.IsInt() {
			kmin.Add(kmin, big.NewInt(1))
		}
	}
	if hi != nil {
		q := new(big.Rat).Quo(hi, step)
		kmax = floor(q)
		if hiX && q.IsInt() {
			kmax.Sub(kmax, big.NewInt(1))
		}
	}
	if kmin != nil && kmax != nil && kmin.Cmp(kmax) > 0 {
		return nil, false
	}
	in := func(k *big.Int) bool {
		return (kmin == nil || k.Cmp(kmin) >= 0) && (kmax == nil || k.Cmp(kmax) <= 0)
	}
	base := big.NewInt(0)
	switch {
	case kmin != nil && kmin.Sign() > 0:
		base.Set(kmin)
	case kmax != nil && kmax.Sign() < 0:
		base.Set(kmax)
	}
	if !g.simple {
		// A random start within a hundred steps of the simplest one.
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
		if c := new(big.Int).Add(base, off); in(c) {
			base = c
		}
	}
	// The v-th member of base, base+1, base-1, base+2, ... within bounds:
	// alternate while both sides have room, then go on along the side that
	// has.
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
