package stats

import (
	"math"
	"math/bits"
	"testing"
)

// Wilson's and Clopper-Pearson's intervals against Newcombe's worked
// examples (Statistics in Medicine 17, 1998, Table I: methods 3 and 5),
// to the four places printed there.
func TestIntervalsNewcombe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k, n   int
		wilson [2]float64
		exact  [2]float64
	}{
		{81, 263, [2]float64{0.2553, 0.3662}, [2]float64{0.2527, 0.3676}},
		{15, 148, [2]float64{0.0624, 0.1605}, [2]float64{0.0578, 0.1617}},
		{0, 20, [2]float64{0, 0.1611}, [2]float64{0, 0.1684}},
		{1, 29, [2]float64{0.0061, 0.1718}, [2]float64{0.0009, 0.1776}},
	} {
		w, e := Wilson(c.k, c.n), ClopperPearson(c.k, c.n)
		if round4(w.Lower) != c.wilson[0] || round4(w.Upper) != c.wilson[1] {
			t.Errorf("Wilson(%d, %d) = %.4f-%.4f, want %.4f-%.4f", c.k, c.n, w.Lower, w.Upper, c.wilson[0], c.wilson[1])
		}
		if round4(e.Lower) != c.exact[0] || round4(e.Upper) != c.exact[1] {
			t.Errorf("ClopperPearson(%d, %d) = %.4f-%.4f, want %.4f-%.4f", c.k, c.n, e.Lower, e.Upper, c.exact[0], c.exact[1])
		}
		// Both orders: the failures' interval is the mirror image.
		wm, em := Wilson(c.n-c.k, c.n), ClopperPearson(c.n-c.k, c.n)
		if math.Abs(wm.Lower-(1-w.Upper)) > 1e-12 || math.Abs(em.Upper-(1-e.Lower)) > 1e-9 {
			t.Errorf("(%d, %d): the failures' intervals %v %v do not mirror %v %v", c.k, c.n, wm, em, w, e)
		}
	}
}

// At 0 of n and n of n the Wilson bound is exactly 0 or 1, as a
// reader of "100 % (98-100 %)" expects, for every n up to 500.
func TestWilsonEdges(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 500; n++ {
		if w := Wilson(n, n); w.Upper != 1 || w.Lower >= 1 {
			t.Fatalf("Wilson(%d, %d) = %v", n, n, w)
		}
		if w := Wilson(0, n); w.Lower != 0 || w.Upper <= 0 {
			t.Fatalf("Wilson(0, %d) = %v", n, w)
		}
	}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Clopper-Pearson's bounds are where the binomial tails, summed term by
// term, reach 2.5 %: checked against that sum for every k of n = 12.
func TestClopperPearsonByEnumeration(t *testing.T) {
	t.Parallel()
	const n = 12
	cdf := func(k int, p float64) float64 { // P(X ≤ k)
		s := 0.0
		for i := 0; i <= k; i++ {
			s += math.Exp(lchoose(n, i)) * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
		}
		return s
	}
	for k := 0; k <= n; k++ {
		iv := ClopperPearson(k, n)
		if k > 0 && math.Abs((1-cdf(k-1, iv.Lower))-0.025) > 1e-9 {
			t.Errorf("k=%d: P(X ≥ k | %.6f) = %.9f, want 0.025", k, iv.Lower, 1-cdf(k-1, iv.Lower))
		}
		if k < n && math.Abs(cdf(k, iv.Upper)-0.025) > 1e-9 {
			t.Errorf("k=%d: P(X ≤ k | %.6f) = %.9f, want 0.025", k, iv.Upper, cdf(k, iv.Upper))
		}
	}
}

// McNemar's exact p-value is the share of the 2^n ways the n discordant
// pairs could have gone, each equally likely under the null, that are at
// least as lopsided as the one seen: counted one by one, in both orders.
func TestMcNemarByEnumeration(t *testing.T) {
	t.Parallel()
	for b := 0; b <= 9; b++ {
		for c := 0; c <= 9; c++ {
			n := b + c
			lopsided := 0
			for mask := uint32(0); mask < 1<<n; mask++ {
				ones := bits.OnesCount32(mask)
				if min(ones, n-ones) <= min(b, c) {
					lopsided++
				}
			}
			want := float64(lopsided) / float64(uint32(1)<<n)
			if got := McNemar(b, c); math.Abs(got-want) > 1e-12 || McNemar(c, b) != got {
				t.Errorf("McNemar(%d, %d) = %v (reversed %v), want %v", b, c, got, McNemar(c, b), want)
			}
		}
	}
	// A textbook case: 10 discordant pairs, all one way: 2 × 2^-10.
	if got := McNemar(10, 0); math.Abs(got-2.0/1024) > 1e-15 {
		t.Errorf("McNemar(10, 0) = %v, want %v", got, 2.0/1024)
	}
}
