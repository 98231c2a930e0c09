package stats

import (
	"math"
	"testing"
)

// The statistics against values computed by hand.
func TestByHand(t *testing.T) {
	t.Parallel()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, c := range []struct {
		name    string
		a, b    []float64
		u, p, e float64
	}{
		// No overlap, 3 and 3: A's U is 0; of the C(6,3) = 20 equally
		// likely rank sets, one has U = 0: two-sided p = 2/20.
		{"apart, 3 and 3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, 0},
		// The mirror: U = 9, Â12 = 1, the same p.
		{"apart, mirrored", []float64{4, 5, 6}, []float64{1, 2, 3}, 9, 0.1, 1},
		// A = {1, 2, 4}, B = {3, 5, 6}: A's ranks 1, 2, 4 sum to 7, U =
		// 7 - 6 = 1; rank sets with U <= 1: {1,2,3} and {1,2,4}, 2 of
		// 20: p = 2 × 2/20.
		{"one inversion", []float64{1, 2, 4}, []float64{3, 5, 6}, 1, 0.2, 1.0 / 9},
		// Ten and ten apart: p = 2 / C(20,10) = 2/184756.
		{"apart, 10 and 10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 0, 2.0 / 184756, 0},
		// Interleaved evenly: U = n1 n2 / 2, p = 1.
		{"interleaved", []float64{1, 4}, []float64{2, 3}, 2, 1, 0.5},
		// Every value the same: no difference.
		{"all equal", []float64{10, 10, 10}, []float64{10, 10}, 3, 1, 0.5},
	} {
		got, err := Compare(c.a, c.b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !near(got.U, c.u) || !near(got.P, c.p) || !near(got.A12, c.e) || got.N1 != len(c.a) || got.N2 != len(c.b) {
			t.Errorf("%s: U %v p %v Â12 %v; want %v, %v, %v", c.name, got.U, got.P, got.A12, c.u, c.p, c.e)
		}
	}
	// Ties count half: A = {2, 2}, B = {2, 1}: of four pairs, two ties
	// and two wins: (2 + 1)/4.
	if e := A12([]float64{2, 2}, []float64{2, 1}); !near(e, 0.75) {
		t.Errorf("Â12 with ties: %v, want 0.75", e)
	}
	if _, err := Compare(nil, []float64{1}); err == nil {
		t.Error("an empty sample compared")
	}
	// Quartiles by Hyndman and Fan's method 8 of 1..9: position 1/3 +
	// q(9 + 1/3): 2.6667, 5 and 7.3333.
	q1, m, q3 := Quartiles([]float64{9, 1, 8, 2, 7, 3, 6, 4, 5})
	if !near(q1, 2+2.0/3) || !near(m, 5) || !near(q3, 7+1.0/3) {
		t.Errorf("quartiles of 1..9: %v %v %v", q1, m, q3)
	}
	if !math.IsNaN(Median(nil)) || Median([]float64{3, 1}) != 2 {
		t.Errorf("median: %v, %v", Median(nil), Median([]float64{3, 1}))
	}
}
