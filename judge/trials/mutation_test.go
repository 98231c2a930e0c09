package trials

import (
	"html/template"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
)

// mutantTrial is a trial of tool on set whose i-th mutant went as far as
// stage[i]: 0 not reached, 1 reached, 2 triggered, 3 detected.
func mutantTrial(tool string, n int, set catalogue.Set, stage []int) Trial {
	t := Trial{Tool: tool, Number: n, Seed: set.String(), Defects: set.String(), Outcome: "finished"}
	for i, m := range set.Mutants() {
		d := m.Depth()
		t.Stages = append(t.Stages, Stage{ID: m.ID(), Operator: m.Operator.Name, Depth: &d,
			Reached: stage[i] >= 1, Triggered: stage[i] >= 2, Detected: stage[i] >= 3})
	}
	return t
}

// mcNemarByHand is the two-sided exact p of b against c discordant pairs,
// summed term by term: twice the smaller binomial(b+c, 1/2) tail, at most 1.
func mcNemarByHand(b, c int) float64 {
	n, k := b+c, min(b, c)
	tail := 0.0
	for i := 0; i <= k; i++ {
		tail += math.Exp(lgamma(n+1)-lgamma(i+1)-lgamma(n-i+1)) / math.Pow(2, float64(n))
	}
	return math.Min(1, 2*tail)
}

func lgamma(x int) float64 { v, _ := math.Lgamma(float64(x)); return v }

// Two tools over two sets of ten: each survivor in its group, the score
// and its Wilson interval, McNemar's test on the pairs by seed (its p
// summed by hand, and the same with the tools the other way round), and
// the mutants neither detected listed with a trigger and each tool's
// group.
func TestMutationSummary(t *testing.T) {
	s1, s2 := catalogue.Mutants(1, 10), catalogue.Mutants(2, 10)
	a1 := []int{3, 3, 3, 3, 3, 3, 3, 3, 2, 0}
	b1 := []int{3, 1, 1, 0, 0, 2, 3, 1, 2, 0}
	a2 := []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
	b2 := []int{3, 3, 0, 0, 1, 1, 2, 2, 3, 3}
	ts := []Trial{mutantTrial("a", 1, s1, a1), mutantTrial("a", 2, s2, a2), mutantTrial("b", 1, s1, b1), mutantTrial("b", 2, s2, b2)}
	// b's third trial could not run, and a's second lost an attempt
	// first: each named under the mutation score, neither counted.
	ts = append(ts, Trial{Tool: "b", Number: 3, Defects: catalogue.Mutants(3, 10).String(), NotRun: "unschedulable"})
	ts[1].Attempts = []Attempt{{Number: 1, Node: "n2", Ended: AttemptLost, Why: "DeletionByTaintManager"}, {Number: 2, Ended: AttemptRan}}
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		var in []Trial
		for _, name := range order {
			for _, tr := range ts {
				if tr.Tool == name {
					in = append(in, tr)
				}
			}
		}
		s := Summarize(in, 60)
		m := s.Mutation
		if m == nil || len(s.Tools) != 0 || len(m.Tools) != 2 || len(m.Pairs) != 1 || strings.Join(m.Sets, " ") != "mutants:1 mutants:2" {
			t.Fatalf("%v: %+v", order, m)
		}
		by := map[string]ToolMutation{}
		for _, tm := range m.Tools {
			by[tm.Tool] = tm
		}
		a, b := by["a"], by["b"]
		if len(b.NotRun) != 1 || b.Trials != 2 || len(a.Lost) != 1 || len(a.NotRun)+len(b.Lost) != 0 {
			t.Errorf("not run and lost: a %+v %+v, b %+v %+v", a.NotRun, a.Lost, b.NotRun, b.Lost)
		}
		var md strings.Builder
		if err := s.WriteMarkdown(&md, "", ""); err != nil {
			t.Fatal(err)
		}
		var page strings.Builder
		if err := s.WriteHTML(&page, ""); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"**Trial 3 could not run**, and is left out of every figure: unschedulable", "Trial 2's attempt 1 was lost on node n2, and is not scored: DeletionByTaintManager"} {
			if !strings.Contains(md.String(), want) {
				t.Errorf("report.md lacks %q:\n%s", want, md.String())
			}
			if html := template.HTMLEscapeString(strings.ReplaceAll(want, "**", "")); !strings.Contains(page.String(), html) {
				t.Errorf("report.html lacks %q", html)
			}
		}
		if a.Score.Detected != 18 || a.Score.Planted != 20 || b.Score.Detected != 6 || b.Score.Planted != 20 {
			t.Errorf("scores: a %+v, b %+v", a.Score, b.Score)
		}
		// Wilson, 18 of 20: (0.699, 0.972) by the formula by hand.
		if math.Abs(a.Score.Lower-0.6990) > 5e-4 || math.Abs(a.Score.Upper-0.9721) > 5e-4 {
			t.Errorf("a's interval %.4f-%.4f", a.Score.Lower, a.Score.Upper)
		}
		if sv := a.Total(); sv.NotReached != 1 || sv.NotTriggered != 0 || sv.NotReported != 1 {
			t.Errorf("a's survivors %+v", sv)
		}
		if sv := b.Total(); sv.NotReached != 5 || sv.NotTriggered != 5 || sv.NotReported != 4 {
			t.Errorf("b's survivors %+v", sv)
		}
		// By seed: a alone detected 12, b alone 0, both 6, neither 2.
		p := m.Pairs[0]
		onlyA, onlyB := p.All.OnlyA, p.All.OnlyB
		if p.A == "b" {
			onlyA, onlyB = onlyB, onlyA
		}
		if p.All.Pairs != 20 || p.All.Both != 6 || onlyA != 12 || onlyB != 0 || p.All.Neither != 2 || p.All.Better != "a" {
			t.Errorf("%v: %+v", order, p.All)
		}
		if want := mcNemarByHand(12, 0); math.Abs(p.All.P-want) > 1e-12 || math.Abs(want-2.0/4096) > 1e-15 {
			t.Errorf("McNemar's p %g, by hand %g", p.All.P, want)
		}
		holm := 0.0
		for _, op := range p.ByOperator {
			holm = max(holm, op.Adjusted)
			if op.Adjusted < op.P || op.Adjusted > 1 {
				t.Errorf("%s: adjusted %g below its p %g", op.Operator, op.Adjusted, op.P)
			}
		}
		if len(p.ByOperator) == 0 || holm == 0 {
			t.Errorf("no test by operator: %+v", p.ByOperator)
		}
		// Neither detected: s1's ninth (a triggered it, b too) and tenth
		// (neither reached it).
		if len(m.Undetected) != 2 {
			t.Fatalf("undetected %+v", m.Undetected)
		}
		ms := s1.Mutants()
		for _, u := range m.Undetected {
			var want [2]string
			switch u.ID {
			case ms[8].ID():
				want = [2]string{NotReported, NotReported}
			case ms[9].ID():
				want = [2]string{NotReached, NotReached}
			default:
				t.Errorf("listed %s, detected by a", u.ID)
			}
			if u.Set != "mutants:1" || u.Groups["a"] != want[0] || u.Groups["b"] != want[1] || !strings.HasPrefix(u.Trigger, mutantOf(t, u.ID).Endpoint().Method+" "+mutantOf(t, u.ID).Endpoint().Path) {
				t.Errorf("%+v", u)
			}
		}
	}
}

func mutantOf(t *testing.T, id catalogue.ID) catalogue.Mutant {
	t.Helper()
	m, err := catalogue.MutantOf(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// One fixed set in every trial (mutants:7:5, three trials of each tool):
// the trials pair by seed, so the test has every trial's pairs (15, not
// the set's 5), and a mutant one tool detected in any trial is not
// listed as detected by none.
func TestMutationFixedSet(t *testing.T) {
	set := catalogue.Mutants(7, 5)
	var ts []Trial
	for i, stages := range [][2][]int{
		{{3, 3, 3, 3, 2}, {3, 0, 0, 0, 2}},
		{{3, 3, 3, 3, 3}, {3, 1, 0, 0, 2}},
		{{3, 3, 3, 3, 2}, {3, 0, 0, 0, 2}},
	} {
		a, b := mutantTrial("a", i+1, set, stages[0]), mutantTrial("b", i+1, set, stages[1])
		a.Seed, b.Seed = strconv.Itoa(i+1), strconv.Itoa(i+1)
		ts = append(ts, a, b)
	}
	m := Summarize(ts, 60).Mutation
	if m == nil || len(m.Pairs) != 1 || len(m.Sets) != 1 {
		t.Fatalf("%+v", m)
	}
	if p := m.Pairs[0].All; p.Pairs != 15 || p.Both != 3 || p.OnlyA != 10 || p.OnlyB != 0 || p.Neither != 2 {
		t.Errorf("pairs %+v", p)
	}
	if len(m.Undetected) != 0 {
		t.Errorf("a detected the fifth mutant in trial 2, yet: %+v", m.Undetected)
	}
}
