package trials

import (
	"fmt"
	"sort"

	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/stats"
)

// ToolCoverage is a tool's coverage over its trials that recorded one:
// each criterion's final covered targets per trial with their spread, the
// TCL and the criteria's sum the same way, the statements covered where
// the code coverage was recorded, and the growth of both over time as
// FuzzBench draws it (the median and the quartiles across trials at each
// time, a trial's coverage at a time being its last sample then).
type ToolCoverage struct {
	Trials     []int             `json:"trials"` // the trials' numbers, in order
	Criteria   []CriterionSpread `json:"criteria"`
	TCL        CountSpread       `json:"tcl"`
	Targets    CountSpread       `json:"targets"`
	Statements *CountSpread      `json:"statements,omitempty"`
	Growth     []GrowthPoint     `json:"growth"`
	CodeGrowth []GrowthPoint     `json:"code_growth,omitempty"`
	// Undocumented are the statuses answered undocumented, each with the
	// number of trials that got it.
	Undocumented map[string]int `json:"undocumented"`
}

// CriterionSpread is one criterion's final coverage over the trials.
type CriterionSpread struct {
	Name  string `json:"name"`
	Level int    `json:"level"`
	CountSpread
}

// CountSpread is a count per trial, its total (0: none known) and its
// spread.
type CountSpread struct {
	Values []int   `json:"values"`
	Of     int     `json:"of,omitempty"`
	Spread *Spread `json:"spread"`
}

// GrowthPoint is the coverage across trials at a time.
type GrowthPoint struct {
	At     float64 `json:"at"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
}

func countSpread(values []int, of int) CountSpread {
	return CountSpread{Values: values, Of: of, Spread: spreadOf(floats(values))}
}

// GrowthSteps is how many points a growth curve has over the budget.
const GrowthSteps = 60

// coverageOf is the tool's coverage over its trials; nil when none
// recorded any.
func coverageOf(trials []Trial, budget float64) *ToolCoverage {
	var with []Trial
	for _, t := range trials {
		if t.Coverage != nil {
			with = append(with, t)
		}
	}
	if len(with) == 0 {
		return nil
	}
	tc := &ToolCoverage{Undocumented: map[string]int{}}
	var tcl, targets, statements []int
	byName := map[string][]int{}
	var names []string
	levels := map[string]int{}
	totals := map[string]int{}
	of, stmtOf := 0, 0
	code := true
	for _, t := range with {
		c := t.Coverage
		tc.Trials = append(tc.Trials, t.Number)
		tcl = append(tcl, c.TCL)
		targets = append(targets, c.Targets)
		of = max(of, c.Of)
		for _, cr := range c.Criteria {
			if _, ok := byName[cr.Name]; !ok {
				names = append(names, cr.Name)
			}
			byName[cr.Name] = append(byName[cr.Name], cr.Covered)
			levels[cr.Name], totals[cr.Name] = cr.Level, max(totals[cr.Name], cr.Total)
		}
		for _, u := range c.Undocumented {
			tc.Undocumented[u]++
		}
		if c.Code != nil && c.Code.Statements.Total > 0 {
			statements = append(statements, c.Code.Statements.Covered)
			stmtOf = max(stmtOf, c.Code.Statements.Total)
		} else {
			code = false
		}
	}
	for _, n := range names {
		tc.Criteria = append(tc.Criteria, CriterionSpread{Name: n, Level: levels[n], CountSpread: countSpread(byName[n], totals[n])})
	}
	tc.TCL, tc.Targets = countSpread(tcl, coverage.MaxTCL), countSpread(targets, of)
	tc.Growth = growth(with, budget, func(p CoveragePoint) (float64, bool) { return float64(p.Targets), true })
	if code {
		s := countSpread(statements, stmtOf)
		tc.Statements = &s
		tc.CodeGrowth = growth(with, budget, func(p CoveragePoint) (float64, bool) {
			if p.Statements == nil {
				return 0, false
			}
			return float64(*p.Statements), true
		})
	}
	return tc
}

// growth is a measure's median and quartiles across the trials at
// GrowthSteps+1 times from 0 to the budget: each trial's value at a time
// is its last sample then (0 before its first), and a trial that ended
// before the time keeps its last value, as FuzzBench's curves do.
func growth(trials []Trial, budget float64, value func(CoveragePoint) (float64, bool)) []GrowthPoint {
	end := budget
	for _, t := range trials {
		for _, p := range t.Coverage.Series {
			end = max(end, p.After)
		}
	}
	if end <= 0 {
		return []GrowthPoint{}
	}
	out := make([]GrowthPoint, 0, GrowthSteps+1)
	for i := 0; i <= GrowthSteps; i++ {
		at := end * float64(i) / GrowthSteps
		var xs []float64
		for _, t := range trials {
			x := 0.0
			for _, p := range t.Coverage.Series {
				if p.After > at {
					break
				}
				if v, ok := value(p); ok {
					x = v
				}
			}
			xs = append(xs, x)
		}
		q1, m, q3 := stats.Quartiles(xs)
		out = append(out, GrowthPoint{At: at, Median: m, Q1: q1, Q3: q3})
	}
	return out
}

// compareCoverage is the pair's verdicts on their final coverage: for each
// criterion, and the criteria's sum, the TCL and the statements where both
// recorded them, the exact Mann-Whitney U test and Â12, Holm-adjusted over
// these tests of the pair (a family apart from the defects').
func compareCoverage(a, b ToolSummary) []Verdict {
	ca, cb := a.Coverage, b.Coverage
	if ca == nil || cb == nil {
		return nil
	}
	type measure struct {
		name   string
		xa, xb []int
	}
	var ms []measure
	for _, cr := range ca.Criteria {
		for _, other := range cb.Criteria {
			if other.Name == cr.Name && (cr.Of > 0 || other.Of > 0) {
				ms = append(ms, measure{"API " + coverage.Title(cr.Name), cr.Values, other.Values})
			}
		}
	}
	ms = append(ms, measure{"API coverage targets", ca.Targets.Values, cb.Targets.Values}, measure{"TCL", ca.TCL.Values, cb.TCL.Values})
	if ca.Statements != nil && cb.Statements != nil {
		ms = append(ms, measure{"statements covered", ca.Statements.Values, cb.Statements.Values})
	}
	type pending struct {
		v      Verdict
		ma, mb float64
		e      float64
	}
	var tests []pending
	for _, m := range ms {
		xa, xb := floats(m.xa), floats(m.xb)
		if allEqual(xa, xb) {
			continue // every trial of both the same: no test can tell them apart
		}
		c, err := stats.Compare(xa, xb)
		if err != nil {
			continue
		}
		test := "Mann-Whitney U, exact"
		if !c.Exact {
			test = "Mann-Whitney U, normal approximation"
		}
		u, e := c.U, c.A12
		tests = append(tests, pending{v: Verdict{Measure: "final " + m.name, Test: test, P: c.P, A12: &e, U: &u}, ma: stats.Median(xa), mb: stats.Median(xb), e: e})
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.v.P
	}
	var out []Verdict
	for i, adj := range stats.Holm(ps) {
		t := tests[i]
		v := t.v
		v.Adjusted = adj
		switch {
		case adj < Alpha && t.e > 0.5:
			v.Better = a.Tool
			v.Words = fmt.Sprintf("%s covers more (%s) than %s: median %s against %s, Â12 %.2f, %s", a.Tool, v.Measure, b.Tool, num(t.ma), num(t.mb), t.e, pText(adj, v.P))
		case adj < Alpha:
			v.Better = b.Tool
			v.Words = fmt.Sprintf("%s covers more (%s) than %s: median %s against %s, Â12 %.2f, %s", b.Tool, v.Measure, a.Tool, num(t.mb), num(t.ma), 1-t.e, pText(adj, v.P))
		default:
			v.Words = fmt.Sprintf("no difference shown in %s: %s median %s, %s %s, Â12 %.2f, %s", v.Measure, a.Tool, num(t.ma), b.Tool, num(t.mb), t.e, pText(adj, v.P))
		}
		v.Words += fmt.Sprintf(" (p %s alone; %s; Holm over the pair's %d coverage tests)", pShort(v.P), v.Test, len(tests))
		out = append(out, v)
	}
	return out
}

func allEqual(a, b []float64) bool {
	for _, x := range append(append([]float64{}, a...), b...) {
		if x != a[0] {
			return false
		}
	}
	return true
}

// medianText is a count spread's median, as text: "7", "7.5", "—".
func (c CountSpread) medianText() string {
	if c.Spread == nil {
		return "—"
	}
	s := num(c.Spread.Median)
	if c.Spread.Q1 != c.Spread.Q3 {
		s += fmt.Sprintf(" [%s–%s]", num(c.Spread.Q1), num(c.Spread.Q3))
	}
	if c.Of > 0 {
		s += fmt.Sprintf(" of %d", c.Of)
	}
	return s
}

// sortedUndocumented are the statuses answered undocumented, each with
// its number of trials, most first.
func (tc *ToolCoverage) sortedUndocumented() []string {
	type kv struct {
		k string
		n int
	}
	var l []kv
	for k, n := range tc.Undocumented {
		l = append(l, kv{k, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].k < l[j].k })
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprintf("%s (%d of %d trials)", x.k, x.n, len(tc.Trials)))
	}
	return out
}

// CoverageText is the tool's API coverage over its ended trials, as the
// live page's header says it: "API coverage: median 65 of 119 targets, TCL
// 2 (3 trials)"; "" where none recorded coverage.
func (t ToolSummary) CoverageText() string {
	c := t.Coverage
	if c == nil || c.Targets.Spread == nil {
		return ""
	}
	s := fmt.Sprintf("API coverage: median %s of %d targets, TCL %s", num(c.Targets.Spread.Median), c.Targets.Of, num(c.TCL.Spread.Median))
	if c.Statements != nil && c.Statements.Spread != nil {
		s += fmt.Sprintf(", %s of %d statements", num(c.Statements.Spread.Median), c.Statements.Of)
	}
	return s + fmt.Sprintf(" (%d trials)", len(c.Trials))
}
