package stats

import (
	"math"
	"testing"
)

// Freireich's leukaemia trial (Gehan 1965; the worked example of Kleinbaum
// and Klein's "Survival Analysis", chapters 2 and 3, and R's MASS::gehan):
// weeks of remission under 6-MP, nine relapses and twelve censored, and
// under placebo, 21 relapses.
var (
	mp6       = []float64{6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35}
	mp6Event  = []bool{true, true, true, false, true, false, true, false, false, true, true, false, false, false, true, true, false, false, false, false, false}
	placebo   = []float64{1, 1, 2, 2, 3, 4, 4, 5, 5, 8, 8, 8, 8, 11, 11, 12, 12, 15, 17, 22, 23}
	allEvents = func(n int) []bool {
		e := make([]bool, n)
		for i := range e {
			e[i] = true
		}
		return e
	}
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The Kaplan-Meier estimate of the 6-MP group, step by step as the book
// gives it (0.857, 0.807, 0.753, 0.690, 0.627, 0.538, 0.448), its median
// 23 weeks with the interval from 16 weeks to not reached, and the
// placebo's 8 weeks (4 to 12): R's survfit, conf.type "log".
func TestKaplanMeierGehan(t *testing.T) {
	t.Parallel()
	s := KaplanMeier(mp6, mp6Event)
	wantT := []float64{6, 7, 10, 13, 16, 22, 23}
	wantS := []float64{0.857, 0.807, 0.753, 0.690, 0.627, 0.538, 0.448}
	if len(s.Times) != len(wantT) || s.Events != 9 || s.N != 21 {
		t.Fatalf("steps at %v, %d events of %d", s.Times, s.Events, s.N)
	}
	for i := range wantT {
		if s.Times[i] != wantT[i] || !near(s.S[i], wantS[i], 0.0005) {
			t.Errorf("step %d: S(%v) = %.4f, want S(%v) = %v", i, s.Times[i], s.S[i], wantT[i], wantS[i])
		}
	}
	// Greenwood at 6 weeks: 3/(21·18); the band 0.857·exp(∓1.96·0.0891).
	if se := math.Sqrt(3.0 / (21 * 18)); !near(s.Lower[0], s.S[0]*math.Exp(-1.959964*se), 1e-6) {
		t.Errorf("lower band at 6 weeks %v", s.Lower[0])
	}
	m := s.Median()
	if m.Time != 23 || m.Lower != 16 || !math.IsNaN(m.Upper) {
		t.Errorf("6-MP median %v (%v, %v); want 23 (16, not reached)", m.Time, m.Lower, m.Upper)
	}
	if m := KaplanMeier(placebo, allEvents(21)).Median(); m.Time != 8 || m.Lower != 4 || m.Upper != 12 {
		t.Errorf("placebo median %v (%v, %v); want 8 (4, 12)", m.Time, m.Lower, m.Upper)
	}
	// Fewer than half see it: not reached. Exactly half at a step: the
	// middle of that step and the next (R's rule).
	if m := KaplanMeier([]float64{1, 5, 5, 5}, []bool{true, false, false, false}).Median(); !math.IsNaN(m.Time) {
		t.Errorf("one event of four: median %v, want not reached", m.Time)
	}
	if m := KaplanMeier([]float64{1, 2, 3, 4}, allEvents(4)).Median(); m.Time != 2.5 {
		t.Errorf("1, 2, 3, 4: median %v, want 2.5", m.Time)
	}
}

// The log-rank test of 6-MP against placebo: chi-square 16.79 (Kleinbaum
// and Klein, chapter 2), the same whichever group comes first; 6-MP
// observed 9 relapses where 19.25 were expected.
func TestLogRankGehan(t *testing.T) {
	t.Parallel()
	chi, p, o, e := LogRank(mp6, mp6Event, placebo, allEvents(21))
	chi2, p2, o2, e2 := LogRank(placebo, allEvents(21), mp6, mp6Event)
	if !near(chi, 16.79, 0.005) || !near(chi, chi2, 1e-9) || !near(p, p2, 1e-15) || o != 9 || !near(e, 19.25, 0.005) || o2 != 21 || !near(e2, 10.75, 0.005) {
		t.Errorf("chi² %v and %v, p %v and %v, observed %v expected %v, other order %v %v", chi, chi2, p, p2, o, e, o2, e2)
	}
	if want := math.Erfc(math.Sqrt(chi / 2)); !near(p, want, 1e-12) || p > 1e-4 {
		t.Errorf("p %v, want %v", p, want)
	}
	if _, p, _, _ := LogRank([]float64{5, 5}, []bool{false, false}, []float64{5}, []bool{false}); p != 1 {
		t.Errorf("no events: p %v, want 1", p)
	}
}

// Fisher's exact test of the lady tasting tea (Fisher 1935): 3 of 4 cups
// right each way: the tables as or less likely than it are 1+16+16+1 of
// 70, p = 34/70. Ten of ten against none of ten: 2/C(20,10). Both orders.
func TestFisher(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x1, n1, x2, n2 int
		p              float64
	}{
		{3, 4, 1, 4, 34.0 / 70},
		{10, 10, 0, 10, 2 / 184756.0},
		{10, 10, 10, 10, 1},
		{8, 10, 10, 10, 90.0 / 190 * 1.0 / 1},
	} {
		p1, p2 := Fisher(c.x1, c.n1, c.x2, c.n2), Fisher(c.x2, c.n2, c.x1, c.n1)
		if !near(p1, c.p, 1e-9) || !near(p2, c.p, 1e-9) {
			t.Errorf("%d/%d against %d/%d: p %v and %v, want %v", c.x1, c.n1, c.x2, c.n2, p1, p2, c.p)
		}
	}
}

// Holm by hand: 0.01, 0.04, 0.03, 0.005 sorted are 0.005, 0.01, 0.03,
// 0.04; times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04, the last raised to 0.06.
func TestHolm(t *testing.T) {
	t.Parallel()
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("Holm: %v, want %v", got, want)
			break
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("at most 1: %v", got)
	}
}

// Friedman by hand: seven blocks of three, ranked within each block
// (1,3,2 2,3,1 1,3,2 1,3,2 1,3,2 2,3,1 2,3,1): rank sums 10, 21, 11;
// 12/(7·3·4)·(100+441+121) − 3·7·4 = 10.571; with two degrees of freedom
// p = exp(−χ²/2). With ties: blocks (1,1,2) ×3 and (1,2,3): rank sums
// 1.5·3+1, 1.5·3+2, 3·3+3 = 5.5, 6.5, 12; uncorrected 12/48·(30.25+42.25+
// 144) − 48 = 6.125, Σ(t³−t) = 18, corrected by 1 − 18/(4·24) = 0.8125:
// 7.538.
func TestFriedman(t *testing.T) {
	t.Parallel()
	blocks := [][]float64{{72, 120, 76}, {96, 120, 95}, {88, 132, 104}, {92, 120, 96}, {74, 101, 84}, {76, 96, 72}, {82, 112, 76}}
	chi, p, ranks, err := Friedman(blocks)
	if err != nil || !near(chi, 12.0/84*662-84, 1e-9) || !near(p, math.Exp(-chi/2), 1e-12) || !near(ranks[1], 3, 1e-12) || !near(ranks[0], 10.0/7, 1e-12) {
		t.Errorf("χ² %v p %v ranks %v %v", chi, p, ranks, err)
	}
	tied := [][]float64{{1, 1, 2}, {1, 1, 2}, {1, 1, 2}, {1, 2, 3}}
	chi, _, ranks, _ = Friedman(tied)
	if !near(chi, 6.125/0.8125, 1e-9) || !near(ranks[2], 3, 1e-12) || !near(ranks[0], 5.5/4, 1e-12) {
		t.Errorf("with ties: χ² %v ranks %v; want %v", chi, ranks, 6.125/0.8125)
	}
}

// The studentized range's quantiles against Demšar's Table 5(a) (q_0.05
// for 2 to 10 classifiers, the range over √2), and a critical difference.
func TestNemenyi(t *testing.T) {
	t.Parallel()
	table := []float64{1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164}
	for i, want := range table {
		k := i + 2
		if q := StudentizedRange(k, 0.05) / math.Sqrt2; !near(q, want, 0.0015) {
			t.Errorf("q_0.05 for %d: %.4f, Demšar's table %.3f", k, q, want)
		}
	}
	// k = 4, N = 14 (Demšar's example, section 3.2.2): CD = 2.569·√(20/84) = 1.25.
	if cd := NemenyiCD(4, 14, 0.05); !near(cd, 1.25, 0.005) {
		t.Errorf("CD for 4 over 14: %v, want 1.25", cd)
	}
}

// The restricted mean is the area under the Kaplan-Meier steps, worked by
// hand. Four trials, detected at 2, 4 and 7 s and one ended at 4 s
// without it: the estimate is 1 until 2 s, 3/4 until 4 s (the event at 4
// counts before the censoring: 3 at risk, 1 event), 1/2 until 7 s, then
// 0. To 6 s: 2·1 + 2·3/4 + 2·1/2 = 4.5; to 10 s: 2 + 1.5 + 3·1/2 = 5;
// to 1 s: 1. The order the trials come in does not matter.
func TestRestrictedMean(t *testing.T) {
	t.Parallel()
	times, events := []float64{2, 4, 4, 7}, []bool{true, true, false, true}
	for _, c := range []struct{ tau, want float64 }{{6, 4.5}, {10, 5}, {1, 1}, {2, 2}, {4, 3.5}} {
		if got := KaplanMeier(times, events).RestrictedMean(c.tau); !near(got, c.want, 1e-12) {
			t.Errorf("to %v: %v, want %v", c.tau, got, c.want)
		}
	}
	rev := KaplanMeier([]float64{7, 4, 4, 2}, []bool{true, false, true, true})
	if got := rev.RestrictedMean(6); !near(got, 4.5, 1e-12) {
		t.Errorf("in the other order: %v, want 4.5", got)
	}
	// Nothing detected: every trial counts the whole budget.
	if got := KaplanMeier([]float64{60, 60}, []bool{false, false}).RestrictedMean(60); got != 60 {
		t.Errorf("never detected: %v, want 60", got)
	}
	// The 6-MP group to 23 weeks, the steps of the book's table (0.857,
	// 0.807, 0.753, 0.690, 0.627, 0.538 after 6, 7, 10, 13, 16 and 22
	// weeks) summed by hand: 6 + 1·0.857 + 3·0.807 + 3·0.753 + 3·0.690
	// + 6·0.627 + 1·0.538 = 17.91 weeks, here with the exact fractions.
	s6 := 18.0 / 21
	s7 := s6 * 16 / 17
	s10 := s7 * 14 / 15
	s13 := s10 * 11 / 12
	s16 := s13 * 10 / 11
	s22 := s16 * 6 / 7
	want := 6 + 1*s6 + 3*s7 + 3*s10 + 3*s13 + 6*s16 + 1*s22
	if got := KaplanMeier(mp6, mp6Event).RestrictedMean(23); !near(got, want, 1e-9) || !near(got, 17.91, 0.01) {
		t.Errorf("6-MP to 23 weeks: %v, want %v", got, want)
	}
}
