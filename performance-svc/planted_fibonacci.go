package performancesvc

import (
	"context"
	"math"
	"math/big"
	"slices"
	"time"
)

// The cost model of endpoint 10 as planted. The planted slowness is a property of the
// service, not of the CPU it happens to run on: the first n numbers take
// plantedCost(n) of wall-clock time, spent in real CPU work of the slow
// method, on a fast laptop as on a slow CI box. The curve is quadratic, like
// the schoolbook method's work (the i-th number has about 0.21·i digits), and
// passes 1.2 s at the maximum n, so that the usual one-second response-time
// check catches it every time; it stays at least 2.4 times as slow as the
// original demo (0.03 s at 30000, 0.15 s at 60000, 0.5 s at 100000).
const plantedCostAtMaxN = 1200 * time.Millisecond

// plantedCost is the time the first n Fibonacci numbers take:
// 1.2 s · (n/100000)².
func plantedCost(n int) time.Duration {
	x := float64(n) / maxN
	return time.Duration(float64(plantedCostAtMaxN) * x * x)
}

// slowFibonacci is the planted algorithm of endpoint 10.
//
// DEFECT(PERF-02): to search the first n Fibonacci numbers it generates all
// of them, number by number, with schoolbook decimal arithmetic on limbs of
// limbDigits digits, paced to a cost model that grows with the square of n
// (1.2 s at n=100000 on any machine). Each addition is done again, on the same numbers, until the cost model's
// time for that number has passed, so the request keeps a core busy for
// exactly the modelled time. The bare arithmetic is well inside the model
// (about an eighth of it at 8 digits a limb on the 2-core reference machine),
// so only a machine several times slower would fall behind the curve.
type slowFibonacci struct {
	// limbDigits is the decimal digits per limb (1 to 18): the service uses
	// 8; the speed-factor benchmark uses 4 and 16 to make every addition
	// twice as dear or half as dear, as on a slower or faster machine.
	limbDigits int
	// cost is the time the first n numbers must take; nil paces nothing
	// (the bare arithmetic, for the benchmark).
	cost func(n int) time.Duration
}

// plantedFibonacci is the algorithm endpoint 10 runs with its defect active.
var plantedFibonacci = slowFibonacci{limbDigits: 8, cost: plantedCost}

// search returns the zero-based indices, ascending, at which term appears
// among the first max(n, 2) Fibonacci numbers 0, 1, 1, 2, 3, 5, ...
// Memory is O(n) digits: four numbers of at most 20,899 digits (about 84 KB
// at the maximum n with 8-digit limbs). It gives up when ctx ends, returning
// ctx's error.
func (f slowFibonacci) search(ctx context.Context, n int, term *big.Int) ([]int, error) {
	base := uint64(math.Pow10(f.limbDigits))
	target, ok := limbsOf(term, f.limbDigits)
	var found []int
	// The seeds F(0)=0 and F(1)=1 are always part of the sequence.
	if ok && len(target) == 1 && target[0] <= 1 {
		found = append(found, int(target[0]))
	}
	// F(k) has at most k·log10(φ)+1 digits; one limb more holds a carry.
	size := int(float64(n)*math.Log10(math.Phi))/f.limbDigits + 2
	prev, cur := make([]uint64, 1, size), make([]uint64, 1, size) // little-endian limbs
	next, scratch := make([]uint64, 0, size), make([]uint64, size)
	cur[0] = 1
	start := time.Now()
	done := ctx.Done()
	for i := 2; i < n; i++ {
		// next = cur + prev; prev is padded to cur's length with a zero.
		if len(prev) < len(cur) {
			prev = append(prev, 0)
		}
		next = next[:len(cur)]
		if addLimbs(next, prev, cur, base) != 0 {
			next = append(next, 1)
		}
		if f.cost != nil {
			// Ahead of the model: the same addition again, until the
			// time for the first i+1 numbers has passed.
			due := f.cost(i + 1)
			for time.Since(start) < due {
				select {
				case <-done:
					return nil, ctx.Err()
				default:
				}
				addLimbs(scratch[:len(cur)], prev, cur, base)
			}
		}
		if i&255 == 0 {
			select {
			case <-done:
				return nil, ctx.Err()
			default:
			}
		}
		prev, cur, next = cur, next, prev
		if ok && slices.Equal(cur, target) {
			found = append(found, i)
		}
	}
	if found == nil {
		found = []int{}
	}
	return found, nil
}

// addLimbs sets dst = a + b limb by limb in the given base (all of dst's
// length) and returns the carry out. The carry is computed without
// branches, so the cost per limb is steady whatever the digits are. It only
// touches request-local slices, so the race detector is told to leave it
// alone: instrumented, it runs about nine times slower (1.37 s of bare work
// at n=100000 instead of 0.16 s, over the curve) and finds nothing.
//
//go:norace
func addLimbs(dst, a, b []uint64, base uint64) uint64 {
	a = a[:len(dst)]
	b = b[:len(dst)]
	var carry uint64
	for j := range dst {
		s := a[j] + b[j] + carry
		// 1 when s >= base: s-base borrows (top bit set) exactly when s < base.
		carry = ((s - base) >> 63) ^ 1
		dst[j] = s - base*carry
	}
	return carry
}

// limbsOf is v's decimal digits in little-endian limbs of digits digits
// each; false for a negative v, which no Fibonacci number equals.
func limbsOf(v *big.Int, digits int) ([]uint64, bool) {
	if v.Sign() < 0 {
		return nil, false
	}
	s := v.Text(10)
	limbs := make([]uint64, 0, len(s)/digits+1)
	for end := len(s); end > 0; end -= digits {
		var limb uint64
		for _, c := range s[max(0, end-digits):end] {
			limb = limb*10 + uint64(c-'0')
		}
		limbs = append(limbs, limb)
	}
	return limbs, true
}
