package inclusion

import (
	"fmt"
	"math/big"
	"testing"
)

// TestIntervalIntegers checks hasInteger and hasNatural against counting:
// every interval whose ends are halves from -3 to 3, open, closed or
// infinite, and ends too large for the small-integer path.
func TestIntervalIntegers(t *testing.T) {
	var ends []*big.Rat
	for i := -6; i <= 6; i++ {
		ends = append(ends, big.NewRat(int64(i), 2))
	}
	bounds := []bound{{}}
	for _, r := range ends {
		bounds = append(bounds, bound{v: r}, bound{v: r, open: true})
	}
	huge := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 70))
	// Past the ends, an infinite side is as good as a huge one, and the
	// count only needs to reach a little beyond the halves.
	in := func(iv interval, n int64) bool {
		r := big.NewRat(n, 1)
		if iv.lo.v != nil {
			if c := r.Cmp(iv.lo.v); c < 0 || c == 0 && iv.lo.open {
				return false
			}
		}
		if iv.hi.v != nil {
			if c := r.Cmp(iv.hi.v); c > 0 || c == 0 && iv.hi.open {
				return false
			}
		}
		return true
	}
	count := func(iv interval, from int64) bool {
		for n := from; n <= 5; n++ {
			if in(iv, n) {
				return true
			}
		}
		return false
	}
	for _, lo := range bounds {
		for _, hi := range bounds {
			iv := interval{lo: lo, hi: hi}
			name := fmt.Sprintf("[%v,%v]", lo, hi)
			if got, want := (ivals{iv}).hasInteger(), count(iv, -5); got != want {
				t.Errorf("%s: hasInteger %v, want %v", name, got, want)
			}
			for _, from := range []int64{0, 1} {
				if got, want := (ivals{iv}).hasNatural(from), count(iv, from); got != want {
					t.Errorf("%s: hasNatural(%d) %v, want %v", name, from, got, want)
				}
			}
			// A huge end on the other side: the big-number path.
			if hi.v == nil && lo.v != nil {
				wide := interval{lo: lo, hi: bound{v: huge}}
				if got, want := (ivals{wide}).hasNatural(1), true; got != want {
					t.Errorf("%s up to 2^70: hasNatural(1) %v, want %v", name, got, want)
				}
			}
		}
	}
}
