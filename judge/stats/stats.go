// Package stats compares tools over repeated trials the way fuzzing
// research compares fuzzers (Klees et al., "Evaluating Fuzz Testing", CCS
// 2018; Arcuri and Briand's guidelines; FuzzBench; Magma):
//
//   - how many defects a trial finds: the two-sided Mann-Whitney U test,
//     exact, and Vargha and Delaney's Â12 for by how much;
//   - whether a tool finds a defect at all: Fisher's exact test over the
//     trials, detected or not;
//   - when: the time to detection is censored (a trial that never detected
//     it stopped at its budget), summarized by the Kaplan-Meier estimate
//     with its median and the median's confidence interval, and compared by
//     the log-rank test;
//   - Holm's adjustment over a family of tests;
//   - three or more tools: the Friedman test over the defects and the
//     Nemenyi critical difference of the mean ranks (Demšar 2006).
//
// The distributions are gonum's; quartiles are go-moremath's.
package stats

import (
	"errors"
	"math"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// ExactUpTo is the largest number of values, both samples together, whose
// Mann-Whitney p-value is computed exactly (its null distribution counted,
// ties and all); above it, the normal approximation with the tie
// correction and the continuity correction is used.
const ExactUpTo = 20

// Comparison is the two-sided Mann-Whitney U test of samples A and B, and
// Â12: the probability that a value drawn from A is larger than one drawn
// from B, ties counting half (0.5: no difference; 1: A always larger).
type Comparison struct {
	N1, N2 int     `json:"-"`
	U      float64 `json:"u"` // A's U: the pairs where A's value is larger, ties half
	// P is two-sided: twice the smaller one-sided tail, at most 1 (the
	// convention of SciPy's permutation_test), so that it is the same
	// whichever sample comes first.
	P     float64 `json:"p"`
	A12   float64 `json:"a12"`
	Exact bool    `json:"exact"`
}

// Compare compares a and b: exactly up to ExactUpTo values in all, by the
// normal approximation beyond. Samples that are all one and the same value
// do not differ: P is 1 and Â12 0.5.
func Compare(a, b []float64) (Comparison, error) {
	if len(a) == 0 || len(b) == 0 {
		return Comparison{}, errors.New("stats: an empty sample")
	}
	c := Comparison{N1: len(a), N2: len(b), A12: A12(a, b)}
	c.U = c.A12 * float64(len(a)*len(b))
	if len(a)+len(b) <= ExactUpTo {
		c.P, c.Exact = exactP(a, b, c.U), true
	} else {
		c.P = normalP(a, b, c.U)
	}
	return c, nil
}

// ties are the sizes of the groups of equal values of a and b pooled, in
// increasing order of the value.
func ties(a, b []float64) []int {
	pooled := append(append([]float64(nil), a...), b...)
	sort.Float64s(pooled)
	var t []int
	for i := 0; i < len(pooled); {
		j := i
		for j < len(pooled) && pooled[j] == pooled[i] {
			j++
		}
		t = append(t, j-i)
		i = j
	}
	return t
}

// exactP counts, over every way of choosing which len(a) of the pooled
// values are A's (each equally likely when A and B do not differ), how
// many give A a U at most u and at least u. Equal values are taken a group
// at a time: choosing k of a group of t for A adds k times the B values
// below the group to U, and half of k times t-k for the ties within it.
// The counts are kept by 2U, an integer.
func exactP(a, b []float64, u float64) float64 {
	n1, n2 := len(a), len(b)
	width := 2*n1*n2 + 1
	// ways[c][v]: the ways to choose c values for A from the groups so
	// far, giving A a 2U of v.
	ways := make([][]float64, n1+1)
	for c := range ways {
		ways[c] = make([]float64, width)
	}
	ways[0][0] = 1
	seen := 0 // values in the groups so far
	for _, t := range ties(a, b) {
		next := make([][]float64, n1+1)
		for c := range next {
			next[c] = make([]float64, width)
		}
		for c := 0; c <= n1; c++ {
			for v, w := range ways[c] {
				if w == 0 {
					continue
				}
				below := seen - c // B's values below this group
				for k := 0; k <= t && c+k <= n1; k++ {
					if seen+t-(c+k) > n2 {
						continue // more values for B than it has
					}
					next[c+k][v+2*k*below+k*(t-k)] += w * binomial(t, k)
				}
			}
		}
		ways, seen = next, seen+t
	}
	total := binomial(n1+n2, n1)
	obs := int(math.Round(2 * u))
	var lower, upper float64
	for v, w := range ways[n1] {
		if v <= obs {
			lower += w
		}
		if v >= obs {
			upper += w
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

// normalP is the two-sided p of U by the normal approximation, its
// variance corrected for ties and U corrected by a half for continuity
// (SciPy's mannwhitneyu, method "asymptotic").
func normalP(a, b []float64, u float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	n := n1 + n2
	var tie float64
	for _, t := range ties(a, b) {
		tie += float64(t*t*t - t)
	}
	variance := n1 * n2 / 12 * ((n + 1) - tie/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-n1*n2/2) - 0.5) / math.Sqrt(variance)
	return math.Min(1, 2*distuv.UnitNormal.Survival(z))
}

// binomial is n choose k, as a float64 (exact up to 2^53).
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// A12 is Vargha and Delaney's effect size: over every pair of a value of
// a and a value of b, the share where a's is larger, a tie counting half.
func A12(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				wins++
			case x == y:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(a)*len(b))
}

// Fisher is the two-sided p-value of Fisher's exact test of the 2×2 table
// of successes and trials of two samples (x1 of n1, x2 of n2): the
// probability, with the margins fixed, of every table no more likely than
// the one seen (R's fisher.test, with its relative tolerance of 1e-7).
func Fisher(x1, n1, x2, n2 int) float64 {
	k, n := x1+x2, n1+n2 // successes in all, trials in all
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// P(X = x) for X hypergeometric: x of A's n1 among the k successes.
	prob := func(x int) float64 {
		return math.Exp(lchoose(n1, x) + lchoose(n2, k-x) - lchoose(n, k))
	}
	obs := prob(x1)
	var p float64
	for x := max(0, k-n2); x <= min(k, n1); x++ {
		if q := prob(x); q <= obs*(1+1e-7) {
			p += q
		}
	}
	return math.Min(1, p)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Survival is the Kaplan-Meier estimate of the share of trials still
// without the event (here: not yet detected) over time, with its 95 %
// confidence band (Greenwood's variance, on the log of the estimate: R's
// survfit default).
type Survival struct {
	N, Events int
	// At each time an event happened: the estimate just after it, and its
	// band.
	Times, S, Lower, Upper []float64
}

// KaplanMeier estimates the survival from times, each an event's (event
// true) or a censoring's (the trial ended without the event, at its
// budget). At a time with both, the events count first.
func KaplanMeier(times []float64, event []bool) Survival {
	type obs struct {
		t float64
		e bool
	}
	o := make([]obs, len(times))
	for i := range times {
		o[i] = obs{times[i], event[i]}
	}
	sort.Slice(o, func(i, j int) bool { return o[i].t < o[j].t || (o[i].t == o[j].t && o[i].e && !o[j].e) })
	s := Survival{N: len(o)}
	z := distuv.UnitNormal.Quantile(0.975)
	atRisk, surv, green := len(o), 1.0, 0.0
	for i := 0; i < len(o); {
		j, d := i, 0
		for j < len(o) && o[j].t == o[i].t {
			if o[j].e {
				d++
			}
			j++
		}
		if d > 0 {
			surv *= float64(atRisk-d) / float64(atRisk)
			if atRisk > d {
				green += float64(d) / float64(atRisk*(atRisk-d))
			}
			lo, hi := 0.0, 0.0
			if surv > 0 {
				se := math.Sqrt(green)
				lo, hi = surv*math.Exp(-z*se), math.Min(1, surv*math.Exp(z*se))
			}
			s.Times, s.S, s.Lower, s.Upper = append(s.Times, o[i].t), append(s.S, surv), append(s.Lower, lo), append(s.Upper, hi)
			s.Events += d
		}
		atRisk -= j - i
		i = j
	}
	return s
}

// MedianTime is a median time to the event with its 95 % confidence interval;
// a bound the estimate never reaches is NaN ("not reached"): the median
// itself when fewer than half the trials saw the event by the end.
type MedianTime struct {
	Time, Lower, Upper float64
}

// Median is the first time the estimate falls below one half (where it
// rests at exactly one half, the middle of that step and the next), and
// the interval the same of the band's upper and lower curves (R's
// quantile.survfit).
func (s Survival) Median() MedianTime {
	return MedianTime{Time: s.below(s.S), Lower: s.below(s.Lower), Upper: s.below(s.Upper)}
}

func (s Survival) below(curve []float64) float64 {
	const eps = 1e-10
	for i, v := range curve {
		if math.Abs(v-0.5) < eps {
			if i+1 < len(s.Times) {
				return (s.Times[i] + s.Times[i+1]) / 2
			}
			return s.Times[i]
		}
		if v < 0.5 {
			return s.Times[i]
		}
	}
	return math.NaN()
}

// RestrictedMean is the restricted mean time to the event up to tau: the
// area under the estimate from 0 to tau, the mean of min(T, tau) (Royston
// and Parmar 2013). Magma reports its bugs' times so, over the campaign's
// length: a trial that never saw the event counts tau, not nothing.
func (s Survival) RestrictedMean(tau float64) float64 {
	area, at, surv := 0.0, 0.0, 1.0
	for i, t := range s.Times {
		if t >= tau {
			break
		}
		area += surv * (t - at)
		at, surv = t, s.S[i]
	}
	return area + surv*(tau-at)
}

// LogRank compares two samples of censored times (the Mantel-Haenszel
// log-rank test): its chi-square statistic with one degree of freedom, its
// p-value, and the events A saw against those expected of it were both
// alike (fewer than expected: A's events come later).
func LogRank(ta []float64, ea []bool, tb []float64, eb []bool) (chi2, p, observedA, expectedA float64) {
	type obs struct {
		t    float64
		e, a bool
	}
	var o []obs
	for i := range ta {
		o = append(o, obs{ta[i], ea[i], true})
	}
	for i := range tb {
		o = append(o, obs{tb[i], eb[i], false})
	}
	sort.Slice(o, func(i, j int) bool { return o[i].t < o[j].t })
	nA, n := len(ta), len(ta)+len(tb)
	var variance float64
	for i := 0; i < len(o); {
		j, d, dA, leftA := i, 0, 0, 0
		for j < len(o) && o[j].t == o[i].t {
			if o[j].e {
				d++
				if o[j].a {
					dA++
				}
			}
			if o[j].a {
				leftA++
			}
			j++
		}
		if d > 0 {
			share := float64(nA) / float64(n)
			observedA += float64(dA)
			expectedA += float64(d) * share
			if n > 1 {
				variance += float64(d) * share * (1 - share) * float64(n-d) / float64(n-1)
			}
		}
		nA, n = nA-leftA, n-(j-i)
		i = j
	}
	if variance <= 0 {
		return 0, 1, observedA, expectedA
	}
	chi2 = (observedA - expectedA) * (observedA - expectedA) / variance
	return chi2, distuv.ChiSquared{K: 1}.Survival(chi2), observedA, expectedA
}

// Holm adjusts a family's p-values for the number of tests (Holm's
// step-down method): the i-th smallest of m is multiplied by m-i+1, and no
// adjusted value is smaller than that of a smaller p. Each is at most 1.
func Holm(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return ps[idx[i]] < ps[idx[j]] })
	out := make([]float64, len(ps))
	m, running := len(ps), 0.0
	for rank, i := range idx {
		running = math.Max(running, math.Min(1, float64(m-rank)*ps[i]))
		out[i] = running
	}
	return out
}

// Friedman is the Friedman test of k treatments over n blocks (blocks[i][j]:
// treatment j in block i; smaller is better, rank 1): its statistic,
// corrected for ties, its p-value (chi-square, k-1 degrees of freedom), and
// each treatment's mean rank.
func Friedman(blocks [][]float64) (chi2, p float64, meanRanks []float64, err error) {
	n := len(blocks)
	if n == 0 || len(blocks[0]) < 2 {
		return 0, 1, nil, errors.New("stats: Friedman needs blocks of two or more treatments")
	}
	k := len(blocks[0])
	sums := make([]float64, k)
	var tie float64
	for _, b := range blocks {
		if len(b) != k {
			return 0, 1, nil, errors.New("stats: Friedman's blocks differ in size")
		}
		r, t := ranks(b)
		for j := range r {
			sums[j] += r[j]
		}
		tie += t
	}
	meanRanks = make([]float64, k)
	var ss float64
	for j, s := range sums {
		meanRanks[j] = s / float64(n)
		ss += s * s
	}
	nf, kf := float64(n), float64(k)
	chi2 = 12/(nf*kf*(kf+1))*ss - 3*nf*(kf+1)
	if c := 1 - tie/(nf*(kf*kf*kf-kf)); c > 0 {
		chi2 /= c
	} else {
		return 0, 1, meanRanks, nil // every block all ties: nothing differs
	}
	return chi2, distuv.ChiSquared{K: kf - 1}.Survival(chi2), meanRanks, nil
}

// ranks are xs's ranks from 1 (the smallest), ties sharing their mean
// rank, and the ties' Σ(t³-t).
func ranks(xs []float64) (r []float64, tie float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return xs[idx[i]] < xs[idx[j]] })
	r = make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for m := i; m < j; m++ {
			r[idx[m]] = float64(i+j+1) / 2
		}
		t := float64(j - i)
		tie += t*t*t - t
		i = j
	}
	return r, tie
}

// NemenyiCD is the critical difference of the Nemenyi test: two of k
// treatments ranked over n blocks differ at level alpha when their mean
// ranks differ by more than q_alpha √(k(k+1)/(6n)), q_alpha the studentized
// range's upper alpha quantile for k means and infinite degrees of freedom,
// over √2 (Demšar 2006, its Table 5).
func NemenyiCD(k, n int, alpha float64) float64 {
	return StudentizedRange(k, alpha) / math.Sqrt2 * math.Sqrt(float64(k*(k+1))/(6*float64(n)))
}

// StudentizedRange is the upper alpha quantile of the range of k
// independent standard normal values (the studentized range with infinite
// degrees of freedom): the w for which P(range ≤ w) = 1-alpha, where
// P(range ≤ w) = k ∫ φ(x) (Φ(x+w) - Φ(x))^(k-1) dx, integrated by
// Gauss-Legendre and solved by bisection.
func StudentizedRange(k int, alpha float64) float64 {
	cdf := func(w float64) float64 {
		f := func(x float64) float64 {
			return distuv.UnitNormal.Prob(x) * math.Pow(distuv.UnitNormal.CDF(x+w)-distuv.UnitNormal.CDF(x), float64(k-1))
		}
		return float64(k) * quad.Fixed(f, -12, 12, 400, quad.Legendre{}, 0)
	}
	lo, hi := 0.0, 20.0
	for range 100 {
		mid := (lo + hi) / 2
		if cdf(mid) < 1-alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Quartiles are a sample's first quartile, median and third quartile
// (Hyndman and Fan's method 8, as go-moremath computes them); NaN for an
// empty sample.
func Quartiles(xs []float64) (q1, median, q3 float64) {
	s := moremath.Sample{Xs: append([]float64(nil), xs...)}
	sort.Float64s(s.Xs)
	s.Sorted = true
	return s.Quantile(0.25), s.Quantile(0.5), s.Quantile(0.75)
}

// Median is the sample's median; NaN when it is empty.
func Median(xs []float64) float64 {
	_, m, _ := Quartiles(xs)
	return m
}
