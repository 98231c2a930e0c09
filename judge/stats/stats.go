// Package stats compares tools over repeated trials the way the guidelines
// for randomized algorithms ask (Arcuri and Briand): the Mann-Whitney U
// test for whether two samples differ, and Vargha and Delaney's Â12 for by
// how much, with medians and interquartile ranges to describe each sample.
// The U test is go-moremath's (the one Go's benchstat uses): exact for
// small samples, ties included.
package stats

import (
	"errors"
	"math"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
)

// Comparison is the two-sided Mann-Whitney U test of samples A and B, and
// Â12: the probability that a value drawn from A is larger than one drawn
// from B, ties counting half (0.5: no difference; 1: A always larger).
type Comparison struct {
	N1, N2 int
	U      float64 // A's U: the pairs where A's value is larger, ties half
	P      float64 // two-sided
	A12    float64
}

// Compare compares a and b. Samples that are all one and the same value
// do not differ: P is 1 and Â12 0.5.
func Compare(a, b []float64) (Comparison, error) {
	if len(a) == 0 || len(b) == 0 {
		return Comparison{}, errors.New("stats: an empty sample")
	}
	c := Comparison{N1: len(a), N2: len(b), A12: A12(a, b)}
	c.U = c.A12 * float64(len(a)*len(b))
	r, err := moremath.MannWhitneyUTest(a, b, moremath.LocationDiffers)
	switch {
	case errors.Is(err, moremath.ErrSamplesEqual):
		c.P = 1
	case err != nil:
		return Comparison{}, err
	default:
		c.P = math.Min(r.P, 1)
	}
	return c, nil
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
