package performancesvc

import (
	"context"
	"math/big"
)

// fibonacciSearch returns the zero-based indices, ascending, at which term
// appears among the first max(n, 2) Fibonacci numbers 0, 1, 1, 2, 3, 5, ...
//
// This is PERF-02: the sequence is generated element by element with
// schoolbook decimal arithmetic, one digit per byte, so the work grows with
// the square of n: about 1.3 s of CPU at n=100000 on the 2-core reference
// machine, where a closed form needs microseconds. Memory stays O(n): only
// three numbers are kept (about 60 KB at the maximum n).
//
// It gives up when ctx ends, returning ctx's error.
func fibonacciSearch(ctx context.Context, n int, term *big.Int) ([]int, error) {
	target, ok := decimalDigits(term)
	var found []int
	// The seeds F(0)=0 and F(1)=1 are always part of the sequence.
	if ok && len(target) == 1 && target[0] <= 1 {
		found = append(found, int(target[0]))
	}
	prev, cur, next := []byte{0}, []byte{1}, []byte(nil) // little-endian digits
	for i := 2; i < n; i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// next = cur + prev; prev is padded to cur's length with a zero.
		if len(prev) < len(cur) {
			prev = append(prev, 0)
		}
		if cap(next) < len(cur)+1 {
			next = make([]byte, len(cur), 2*len(cur)+16)
		}
		next = next[:len(cur)]
		if addDigits(next, prev, cur) != 0 {
			next = append(next, 1)
		}
		prev, cur, next = cur, next, prev
		if ok && len(cur) == len(target) && string(cur) == string(target) {
			found = append(found, i)
		}
	}
	if found == nil {
		found = []int{}
	}
	return found, nil
}

// addDigits sets dst = a + b digit by digit (all of dst's length) and
// returns the carry out. The carry is computed without branches, so the cost
// per digit is steady whatever the digits are. It is kept out of line: the
// cost per digit was calibrated on this loop compiled on its own. It only
// touches request-local slices, so the race detector is told to leave it
// alone (instrumented, it runs twenty times slower and finds nothing).
//
//go:noinline
//go:norace
func addDigits(dst, a, b []byte) uint {
	a = a[:len(dst)]
	b = b[:len(dst)]
	var carry uint
	for j := range dst {
		s := uint(a[j]) + uint(b[j])
		s += carry
		carry = (s + 246) >> 8 // 1 when s >= 10
		dst[j] = byte(s - 10*carry)
	}
	return carry
}

// decimalDigits is v's decimal digits, little-endian, one per byte; false
// for a negative v, which no Fibonacci number equals.
func decimalDigits(v *big.Int) ([]byte, bool) {
	if v.Sign() < 0 {
		return nil, false
	}
	s := v.Text(10)
	d := make([]byte, len(s))
	for i := range s {
		d[len(s)-1-i] = s[i] - '0'
	}
	return d, true
}
