package performancesvc

import (
	"math"
	"math/big"
)

// fibonacciIndices returns the zero-based indices, ascending, at which term
// appears among the first n Fibonacci numbers F(0)=0, F(1)=1, F(2)=1, ...,
// without generating them: F(k) ≈ φ^k/√5 gives the only candidate k, which
// fast doubling checks exactly in O(log k) multiplications. This is
// endpoint 10 with its defect switched off.
func fibonacciIndices(n int, term *big.Int) []int {
	found := []int{}
	var candidates []int
	switch {
	case term.Sign() < 0:
		return found
	case term.Sign() == 0:
		candidates = []int{0}
	case term.IsInt64() && term.Int64() == 1:
		candidates = []int{1, 2}
	default:
		// log2(term) from its mantissa and exponent: exact enough for any
		// size, since the candidates around the estimate are all checked.
		mant := new(big.Float)
		exp := new(big.Float).SetInt(term).MantExp(mant)
		m, _ := mant.Float64()
		log2 := float64(exp) + math.Log2(m)
		k := int(math.Round((log2 + math.Log2(math.Sqrt(5))) / math.Log2(math.Phi)))
		for c := max(3, k-1); c <= k+1; c++ {
			if fibonacci(c).Cmp(term) == 0 {
				candidates = []int{c}
				break
			}
		}
	}
	for _, c := range candidates {
		if c < n {
			found = append(found, c)
		}
	}
	return found
}

// fibonacci is F(k) by fast doubling: F(2j) = F(j)(2F(j+1) − F(j)),
// F(2j+1) = F(j)² + F(j+1)².
func fibonacci(k int) *big.Int {
	a, b := big.NewInt(0), big.NewInt(1) // F(j), F(j+1), from j = 0
	t := new(big.Int)
	for bit := bitsLen(k) - 1; bit >= 0; bit-- {
		// (a, b) = (F(2j), F(2j+1))
		t.Lsh(b, 1).Sub(t, a).Mul(t, a) // F(2j)
		b.Mul(b, b).Add(b, a.Mul(a, a)) // F(2j+1)
		a.Set(t)
		if k>>bit&1 == 1 {
			a.Add(a, b) // (F(2j+1), F(2j+2))
			a, b = b, a
		}
	}
	return a
}

func bitsLen(k int) int {
	n := 0
	for ; k > 0; k >>= 1 {
		n++
	}
	return n
}
