package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// A tool's mutation score is a proportion: mutants detected of mutants
// planted. Its interval is Wilson's score interval (Wilson 1927), which
// Newcombe (1998) and Brown, Cai and DasGupta (2001) recommend over the
// Wald interval, which collapses at 0 and 1, and over Clopper and
// Pearson's, which is conservative; Clopper-Pearson is here too, for a
// reader who wants the exact bound.

// Interval is a confidence interval of a proportion.
type Interval struct {
	Lower, Upper float64
}

// z95 is the standard normal's 97.5th percentile.
var z95 = distuv.UnitNormal.Quantile(0.975)

// Wilson is the 95 % Wilson score interval of k successes in n trials; for
// n = 0, the whole of [0, 1].
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z95*z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	in := Interval{math.Max(0, centre-half), math.Min(1, centre+half)}
	// At k = 0 and k = n one bound is exactly 0 or 1 (the square root is
	// z/2n there); rounding leaves it a hair inside.
	switch k {
	case 0:
		in.Lower = 0
	case n:
		in.Upper = 1
	}
	return in
}

// ClopperPearson is the exact 95 % interval of k successes in n trials
// (the Beta quantiles of Clopper and Pearson, 1934); for n = 0, [0, 1].
func ClopperPearson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	iv := Interval{0, 1}
	if k > 0 {
		iv.Lower = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(0.025)
	}
	if k < n {
		iv.Upper = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(0.975)
	}
	return iv
}

// McNemar is the two-sided p-value of McNemar's exact test of paired
// binary outcomes, from the discordant pairs alone: b where the first
// detected and the second did not, c the other way. Under the null each
// discordant pair goes either way with probability ½, so the p-value is
// twice the smaller binomial tail, at most 1; with no discordant pair it
// is 1.
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	tail := 0.0
	for i := 0; i <= min(b, c); i++ {
		tail += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*tail)
}
