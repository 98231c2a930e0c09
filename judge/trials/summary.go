package trials

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/stats"
)

// Alpha is the level at which a difference is shown.
const Alpha = 0.05

// Spread is a sample's median and interquartile range, and its size.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
}

func spreadOf(xs []float64) *Spread {
	if len(xs) == 0 {
		return nil
	}
	q1, m, q3 := stats.Quartiles(xs)
	return &Spread{N: len(xs), Median: m, Q1: q1, Q3: q3}
}

// Censored is a time to an event over a tool's trials, each trial's time
// the event's or, where it never happened, its budget's (censored), with
// the Kaplan-Meier median and its 95 % interval; a nil median or bound is
// "not reached". RestrictedMean is the mean time over the budget (Magma's
// measure: a trial without the event counts the whole budget), Budget
// that budget.
type Censored struct {
	Trials         int       `json:"trials"`
	Events         int       `json:"events"`
	Median         *float64  `json:"median"`
	Lower          *float64  `json:"lower"`
	Upper          *float64  `json:"upper"`
	RestrictedMean float64   `json:"restricted_mean"`
	Budget         float64   `json:"budget"`
	times          []float64 // each trial's time
	events         []bool    // whether it is the event's
}

// censoredOf is the time to an event, restricted to the budget tau.
func censoredOf(times []float64, events []bool, tau float64) *Censored {
	km := stats.KaplanMeier(times, events)
	m := km.Median()
	ptr := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return &Censored{Trials: len(times), Events: km.Events, Median: ptr(m.Time), Lower: ptr(m.Lower), Upper: ptr(m.Upper),
		RestrictedMean: km.RestrictedMean(tau), Budget: tau, times: times, events: events}
}

// DefectSummary is one defect over one tool's trials: in how many each
// stage happened, and the time to trigger and to detect it.
type DefectSummary struct {
	ID        catalogue.ID `json:"id"`
	Reached   int          `json:"reached"`
	Triggered int          `json:"triggered"`
	Detected  int          `json:"detected"`
	// Untimed counts the detections whose report carries no time: when
	// there are any, the time to detect is not known (nil).
	Untimed int `json:"detected_untimed"`
	// Spurious counts the findings of it that were spurious (false
	// positives the ground truth proves: see Stage.Spurious), over all the
	// trials; SpuriousTrials in how many trials there were any. None of
	// them is in Detected or a time.
	Spurious       int       `json:"spurious"`
	SpuriousTrials int       `json:"spurious_trials"`
	TimeToTrigger  *Censored `json:"time_to_trigger"`
	TimeToDetect   *Censored `json:"time_to_detect"`
}

// ToolSummary is one tool over its trials.
type ToolSummary struct {
	Tool   string `json:"tool"`
	Trials int    `json:"trials"`
	// Budget is its trials' budget (seconds): a defect never detected is
	// censored there.
	Budget float64 `json:"budget_seconds"`
	// Outcomes counts how the trials ended ("finished", "exit 1",
	// "stopped at the budget", …). TestedNothing are the trials whose
	// requests reached no operation (the scorecard's definition); NoReport
	// those that left no report the scorer reads; Truncated those whose
	// report was cut short and scored for what it held. Every one of them
	// counts, as detecting what its report shows (nothing, without one).
	Outcomes map[string]int `json:"outcomes"`
	// NotRun are the trials that could not run (Trials does not count
	// them): left out of every figure below.
	NotRun []NotRun `json:"not_run,omitempty"`
	// Lost are the attempts lost on a cluster (their Pods evicted or gone
	// with their nodes): never scored, each trial scored from its attempt
	// that ran (or counted in NotRun when none did).
	Lost          []LostAttempt `json:"lost,omitempty"`
	TestedNothing []int         `json:"tested_nothing"`
	NoReport      []int         `json:"no_report"`
	Truncated     []int         `json:"truncated"`
	// Detected is each trial's count of defects detected, in trial order.
	Detected       []int   `json:"detected"`
	DetectedSpread *Spread `json:"detected_spread"`
	// Timed: every detection of its reports carries a time.
	Timed   bool            `json:"timed"`
	Defects []DefectSummary `json:"defects"`
	// Coverage is the tool's coverage over its trials that recorded one;
	// absent when none did.
	Coverage *ToolCoverage `json:"coverage,omitempty"`
}

// Verdict is one test of two tools on one measure, with the verdict in
// words, which is given by the Holm-adjusted p.
type Verdict struct {
	Measure string  `json:"measure"` // "defects detected per trial", "detects ID", "time to detect ID"
	Test    string  `json:"test"`
	P       float64 `json:"p"`
	// Adjusted is P adjusted by Holm's method over the pair's tests.
	Adjusted float64 `json:"p_holm"`
	// Â12: the probability that a trial of A does better than one of B,
	// ties half (defects found; detected or not). U is A's.
	A12  *float64 `json:"a12,omitempty"`
	U    *float64 `json:"u,omitempty"`
	Chi2 *float64 `json:"chi2,omitempty"`
	// Better is the tool that does better at the adjusted p < Alpha; "".
	Better string `json:"better"`
	Words  string `json:"words"`
}

// PairSummary compares two tools: every test of the pair, adjusted
// together, and what could not be tested.
type PairSummary struct {
	A        string    `json:"a"`
	B        string    `json:"b"`
	Verdicts []Verdict `json:"verdicts"`
	// Coverage are the verdicts on their final coverage, a family of tests
	// of its own (Holm over them alone), absent unless both recorded it.
	Coverage []Verdict `json:"coverage,omitempty"`
	Notes    []string  `json:"notes"`
}

// Ranking ranks three or more tools as FuzzBench ranks fuzzers: by each
// tool's median time to detect each defect (censored: not reached ranks
// last), the Friedman test over the defects, and the Nemenyi critical
// difference of the mean ranks (1: fastest).
type Ranking struct {
	Tools     []string   `json:"tools"`
	MeanRanks []float64  `json:"mean_ranks"`
	Blocks    int        `json:"defects"`
	Chi2      float64    `json:"chi2"`
	P         float64    `json:"p"`
	CD        float64    `json:"critical_difference"`
	Groups    [][]string `json:"groups"` // tools whose mean ranks differ by less than CD
	Left      []string   `json:"left_out"`
	Words     string     `json:"words"`
}

// Summary is a run of trials, summarized.
type Summary struct {
	Tools   []ToolSummary `json:"tools"`
	Pairs   []PairSummary `json:"pairs"`
	Ranking *Ranking      `json:"ranking,omitempty"`
	// Mutation is the trials of mutant sets, kept apart from the ten's
	// (Tools, Pairs and Ranking are theirs): each tool's mutation score,
	// its survivors and the pairs' tests. Absent when none ran.
	Mutation *MutationSummary `json:"mutation,omitempty"`
	Trials   []Trial          `json:"trials"`
	// Provenance is the run's (run.json), where it has one.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Summarize summarizes trials (of one or more tools); a trial without its
// budget on record (an older record) has fallback.
func Summarize(trials []Trial, fallback float64) Summary {
	s := Summary{Trials: trials, Pairs: []PairSummary{}}
	var names []string
	byTool := map[string][]Trial{}
	// Trials that could not run and lost attempts, by tool, of the ten's
	// trials [0] and of mutant sets' [1]: each named where its kind is.
	notRun := [2]map[string][]NotRun{{}, {}}
	lost := [2]map[string][]LostAttempt{{}, {}}
	mutantTools := map[string]bool{}
	for _, t := range trials {
		if _, ok := byTool[t.Tool]; !ok {
			names = append(names, t.Tool)
			byTool[t.Tool] = nil
		}
		kind := b2i(t.Mutants())
		mutantTools[t.Tool] = mutantTools[t.Tool] || t.Mutants()
		for _, a := range t.Attempts {
			if a.Ended == AttemptLost {
				lost[kind][t.Tool] = append(lost[kind][t.Tool], LostAttempt{Trial: t.Number, Attempt: a.Number, Node: a.Node, Why: a.Why})
			}
		}
		// A trial that could not run is named and counted, and left out
		// of every statistic: it is neither a trial that tested nothing
		// nor one that detected nothing.
		if !t.Ran() {
			notRun[kind][t.Tool] = append(notRun[kind][t.Tool], NotRun{Trial: t.Number, Why: t.NotRun})
			continue
		}
		byTool[t.Tool] = append(byTool[t.Tool], t)
	}
	s.Mutation = summarizeMutants(names, byTool, mutantTools)
	if m := s.Mutation; m != nil {
		for i := range m.Tools {
			m.Tools[i].NotRun, m.Tools[i].Lost = notRun[1][m.Tools[i].Tool], lost[1][m.Tools[i].Tool]
		}
	}
	// The ten's figures are of the trials that planted them; a run of
	// mutant sets alone has none.
	ten := map[string][]Trial{}
	anyTen := false
	for _, name := range names {
		for _, t := range byTool[name] {
			if !t.Mutants() {
				ten[name] = append(ten[name], t)
				anyTen = true
			}
		}
	}
	for _, t := range trials {
		anyTen = anyTen || !t.Mutants()
	}
	if !anyTen && s.Mutation != nil {
		s.Tools = []ToolSummary{}
		return s
	}
	var ran []ToolSummary
	for _, name := range names {
		ts := summarizeTool(name, ten[name], fallback)
		ts.NotRun, ts.Lost = notRun[0][name], lost[0][name]
		s.Tools = append(s.Tools, ts)
		if ts.Trials > 0 {
			ran = append(ran, ts)
		}
	}
	for i := range ran {
		for j := i + 1; j < len(ran); j++ {
			s.Pairs = append(s.Pairs, compare(ran[i], ran[j]))
		}
	}
	if len(ran) >= 3 {
		s.Ranking = rank(ran)
	}
	return s
}

// LostAttempt is one attempt of a trial lost on a cluster: where, and
// why in Kubernetes' words.
type LostAttempt struct {
	Trial   int    `json:"trial"`
	Attempt int    `json:"attempt"`
	Node    string `json:"node,omitempty"`
	Why     string `json:"why"`
}

// NotRun is a trial that could not run, and why.
type NotRun struct {
	Trial int    `json:"trial"`
	Why   string `json:"why"`
}

func summarizeTool(name string, trials []Trial, fallback float64) ToolSummary {
	ts := ToolSummary{Tool: name, Trials: len(trials), Outcomes: map[string]int{}, TestedNothing: []int{}, NoReport: []int{}, Truncated: []int{}, Timed: true}
	var counts []float64
	for _, t := range trials {
		ts.Budget = max(ts.Budget, t.budget(fallback))
		ts.Outcomes[t.Outcome]++
		if t.TestedNothing() {
			ts.TestedNothing = append(ts.TestedNothing, t.Number)
		}
		if t.Report == "" {
			ts.NoReport = append(ts.NoReport, t.Number)
		}
		if t.Truncated != "" {
			ts.Truncated = append(ts.Truncated, t.Number)
		}
		ts.Detected = append(ts.Detected, t.Detected())
		counts = append(counts, float64(t.Detected()))
	}
	ts.DetectedSpread = spreadOf(counts)
	for _, d := range catalogue.Defects {
		ds := DefectSummary{ID: d.ID}
		var trig, det []float64
		var trigEv, detEv []bool
		for _, t := range trials {
			st := stageOf(t, d.ID)
			budget := t.budget(fallback)
			ds.Reached += b2i(st.Reached)
			ds.Triggered += b2i(st.Triggered)
			ds.Detected += b2i(st.Detected)
			ds.Spurious += st.Spurious
			ds.SpuriousTrials += b2i(st.Spurious > 0)
			if st.Triggered && st.TriggeredAfter != nil {
				trig, trigEv = append(trig, *st.TriggeredAfter), append(trigEv, true)
			} else {
				trig, trigEv = append(trig, budget), append(trigEv, false)
			}
			switch {
			case st.Detected && st.DetectedAfter != nil:
				det, detEv = append(det, *st.DetectedAfter), append(detEv, true)
			case st.Detected:
				ds.Untimed++
			default:
				det, detEv = append(det, budget), append(detEv, false)
			}
		}
		ds.TimeToTrigger = censoredOf(trig, trigEv, ts.Budget)
		if ds.Untimed == 0 {
			ds.TimeToDetect = censoredOf(det, detEv, ts.Budget)
		} else {
			ts.Timed = false
		}
		ts.Defects = append(ts.Defects, ds)
	}
	ts.Coverage = coverageOf(trials, ts.Budget)
	return ts
}

func stageOf(t Trial, id catalogue.ID) Stage {
	for _, s := range t.Stages {
		if s.ID == id {
			return s
		}
	}
	return Stage{ID: id}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compare tests a pair of tools: defects found per trial (Mann-Whitney U,
// exact), and for each defect either detected, whether (Fisher's exact
// test on detected or not) and, where both tools' reports time it, when
// (the log-rank test); then adjusts every p of the pair by Holm's method
// and words each verdict by the adjusted p.
func compare(a, b ToolSummary) PairSummary {
	p := PairSummary{A: a.Tool, B: b.Tool, Notes: []string{}}
	type pending struct {
		v     Verdict
		words func(adjusted float64) (better, words string)
	}
	var tests []pending

	ca, cb := floats(a.Detected), floats(b.Detected)
	if c, err := stats.Compare(ca, cb); err == nil {
		u, e := c.U, c.A12
		test := "Mann-Whitney U, exact"
		if !c.Exact {
			test = "Mann-Whitney U, normal approximation"
		}
		more, fewer, n := 0, 0, min(len(ca), len(cb))
		for i := 0; i < n; i++ {
			switch {
			case ca[i] > cb[i]:
				more++
			case ca[i] < cb[i]:
				fewer++
			}
		}
		ma, mb := stats.Median(ca), stats.Median(cb)
		tests = append(tests, pending{Verdict{Measure: "defects detected per trial", Test: test, P: c.P, A12: &e, U: &u}, func(adj float64) (string, string) {
			switch {
			case adj < Alpha && e > 0.5:
				return a.Tool, fmt.Sprintf("%s finds more defects per trial than %s: median %s against %s, more in %d of %d trials by number, Â12 %.2f, %s", a.Tool, b.Tool, num(ma), num(mb), more, n, e, pText(adj, c.P))
			case adj < Alpha:
				return b.Tool, fmt.Sprintf("%s finds more defects per trial than %s: median %s against %s, more in %d of %d trials by number, Â12 %.2f, %s", b.Tool, a.Tool, num(mb), num(ma), fewer, n, 1-e, pText(adj, c.P))
			}
			return "", fmt.Sprintf("no difference shown in defects found per trial: %s median %s, %s %s, Â12 %.2f, %s", a.Tool, num(ma), b.Tool, num(mb), e, pText(adj, c.P))
		}})
	}
	for i, da := range a.Defects {
		db := b.Defects[i]
		id := da.ID
		if da.Detected == 0 && db.Detected == 0 {
			continue
		}
		// Whether: Fisher's test, unless every trial of both detected it:
		// then only one table has those margins, its p is 1 whatever
		// happened, and it would only weaken the pair's other tests
		// (Tarone's rule for discrete tests).
		if da.Detected < a.Trials || db.Detected < b.Trials {
			pf := stats.Fisher(da.Detected, a.Trials, db.Detected, b.Trials)
			e := stats.A12(indicator(da.Detected, a.Trials), indicator(db.Detected, b.Trials))
			ra, rb := fmt.Sprintf("%d/%d", da.Detected, a.Trials), fmt.Sprintf("%d/%d", db.Detected, b.Trials)
			tests = append(tests, pending{Verdict{Measure: "detects " + string(id), Test: "Fisher's exact", P: pf, A12: &e}, func(adj float64) (string, string) {
				switch {
				case adj < Alpha && e > 0.5:
					return a.Tool, fmt.Sprintf("%s detects %s more often than %s: in %s trials against %s, %s", a.Tool, id, b.Tool, ra, rb, pText(adj, pf))
				case adj < Alpha:
					return b.Tool, fmt.Sprintf("%s detects %s more often than %s: in %s trials against %s, %s", b.Tool, id, a.Tool, rb, ra, pText(adj, pf))
				}
				return "", fmt.Sprintf("no difference shown in whether %s is detected: %s in %s trials, %s in %s, %s", id, a.Tool, ra, b.Tool, rb, pText(adj, pf))
			}})
		}
		if da.TimeToDetect == nil || db.TimeToDetect == nil {
			continue
		}
		x := da.TimeToDetect
		y := db.TimeToDetect
		chi, pl, obs, exp := stats.LogRank(x.times, x.events, y.times, y.events)
		tests = append(tests, pending{Verdict{Measure: "time to detect " + string(id), Test: "log-rank", P: pl, Chi2: &chi}, func(adj float64) (string, string) {
			ka, kb := kmText(x), kmText(y)
			switch {
			case adj < Alpha && obs > exp:
				return a.Tool, fmt.Sprintf("%s detects %s sooner than %s: median %s against %s, %s", a.Tool, id, b.Tool, ka, kb, pText(adj, pl))
			case adj < Alpha:
				return b.Tool, fmt.Sprintf("%s detects %s sooner than %s: median %s against %s, %s", b.Tool, id, a.Tool, kb, ka, pText(adj, pl))
			}
			return "", fmt.Sprintf("no difference shown in when %s is detected: %s median %s, %s %s, %s", id, a.Tool, ka, b.Tool, kb, pText(adj, pl))
		}})
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.v.P
	}
	for i, adj := range stats.Holm(ps) {
		v := tests[i].v
		v.Adjusted = adj
		v.Better, v.Words = tests[i].words(adj)
		v.Words += fmt.Sprintf(" (p %s alone; %s; Holm over the pair's %d tests)", pShort(v.P), v.Test, len(tests))
		p.Verdicts = append(p.Verdicts, v)
	}
	for _, t := range []ToolSummary{a, b} {
		if !t.Timed {
			p.Notes = append(p.Notes, fmt.Sprintf("No time verdicts where %s detected a defect: its reports carry no time for it (JUnit, SARIF and WFC give none), so only whether it detects is compared.", t.Tool))
		}
	}
	p.Coverage = compareCoverage(a, b)
	if a.Budget != b.Budget {
		p.Notes = append(p.Notes, fmt.Sprintf("Their budgets differ (%s has %s, %s %s): each trial that did not detect a defect is censored at its own budget.", a.Tool, duration(a.Budget), b.Tool, duration(b.Budget)))
	}
	return p
}

func floats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// indicator is n trials of which k detected: k ones and n-k zeros.
func indicator(k, n int) []float64 {
	out := make([]float64, n)
	for i := range k {
		out[i] = 1
	}
	return out
}

// rank ranks the tools whose reports carry times, over every defect, by
// their median time to detect it (not reached ranks last, ties share).
func rank(tools []ToolSummary) *Ranking {
	r := &Ranking{Left: []string{}, Groups: [][]string{}}
	var timed []ToolSummary
	for _, t := range tools {
		if t.Timed {
			timed = append(timed, t)
			r.Tools = append(r.Tools, t.Tool)
		} else {
			r.Left = append(r.Left, t.Tool)
		}
	}
	if len(timed) < 3 {
		r.Words = fmt.Sprintf("Not ranked: %d of the tools have reports with times, and a ranking takes three.", len(timed))
		return r
	}
	var blocks [][]float64
	for i := range catalogue.Defects {
		row := make([]float64, len(timed))
		for j, t := range timed {
			row[j] = math.Inf(1)
			if m := t.Defects[i].TimeToDetect.Median; m != nil {
				row[j] = *m
			}
		}
		blocks = append(blocks, row)
	}
	chi, p, ranks, err := stats.Friedman(blocks)
	if err != nil {
		r.Words = "Not ranked: " + err.Error()
		return r
	}
	r.MeanRanks, r.Blocks, r.Chi2, r.P = ranks, len(blocks), chi, p
	r.CD = stats.NemenyiCD(len(timed), len(blocks), Alpha)
	order := make([]int, len(timed))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return ranks[order[i]] < ranks[order[j]] })
	// Groups: each maximal run of tools, in rank order, within CD of its first.
	last := -1
	for i := range order {
		j := i
		for j+1 < len(order) && ranks[order[j+1]]-ranks[order[i]] <= r.CD {
			j++
		}
		if j > i && j > last {
			var g []string
			for _, k := range order[i : j+1] {
				g = append(g, timed[k].Tool)
			}
			r.Groups = append(r.Groups, g)
			last = j
		}
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %.2f", timed[k].Tool, ranks[k]))
	}
	r.Words = fmt.Sprintf("Mean rank over the %d defects by median time to detect (1: fastest; not detected by the median trial ranks last): %s. Friedman χ² = %.2f, p %s", len(blocks), strings.Join(parts, ", "), chi, pShort(p))
	if p >= Alpha {
		r.Words += ": no difference shown among them."
	} else {
		var differ []string
		for x := range order {
			for y := x + 1; y < len(order); y++ {
				if ranks[order[y]]-ranks[order[x]] > r.CD {
					differ = append(differ, timed[order[x]].Tool+" before "+timed[order[y]].Tool)
				}
			}
		}
		if len(differ) == 0 {
			r.Words += fmt.Sprintf("; the Nemenyi critical difference (%.2f) separates no two.", r.CD)
		} else {
			r.Words += fmt.Sprintf("; beyond the Nemenyi critical difference (%.2f): %s.", r.CD, strings.Join(differ, ", "))
		}
	}
	if len(r.Left) > 0 {
		r.Words += " Left out, their reports carrying no times: " + strings.Join(r.Left, ", ") + "."
	}
	return r
}

func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// duration is a time in seconds as a person reads it: milliseconds under
// a second.
func duration(x float64) string {
	if x < 1 {
		return fmt.Sprintf("%.0f ms", x*1000)
	}
	return fmt.Sprintf("%.1f s", x)
}

func pShort(p float64) string {
	switch {
	case p < 0.001:
		return "< 0.001"
	case p < 0.01:
		return fmt.Sprintf("= %.3f", p)
	}
	return fmt.Sprintf("= %.2f", p)
}

// pText is an adjusted p.
func pText(adjusted, _ float64) string {
	return "adjusted p " + pShort(adjusted)
}

// MedianToDetect is the Kaplan-Meier median time to detect the defect as
// the pages show it beside "k/n": "12.4 s", "median beyond the budget"
// (fewer than half the trials detected it: the median is past the time
// the trials ran, not to be read as the operation not reached), "3 untimed" (its reports carry no time),
// "—" (no trial has ended).
func (d DefectSummary) MedianToDetect() string {
	switch {
	case d.Untimed > 0:
		return fmt.Sprintf("%d untimed", d.Untimed)
	case d.TimeToDetect == nil || d.TimeToDetect.Trials == 0:
		return "—"
	case d.TimeToDetect.Median == nil:
		return "median beyond the budget"
	}
	return duration(*d.TimeToDetect.Median)
}

// spurious is how many of the tool's findings were spurious, over its
// trials.
func (t ToolSummary) spurious() int {
	n := 0
	for _, d := range t.Defects {
		n += d.Spurious
	}
	return n
}

// DetectedText is the tool's i-th defect as report.html's "Detected, per
// defect" and the live page's tile say it: "k/n · median", "0/0 · —"
// while none of its trials has run, with " · m spurious" when m of its
// findings were spurious.
func (t ToolSummary) DetectedText(i int) string {
	if t.Trials == 0 {
		return "0/0 · —"
	}
	d := t.Defects[i]
	s := fmt.Sprintf("%d/%d · %s", d.Detected, t.Trials, d.MedianToDetect())
	if d.Spurious > 0 {
		s += fmt.Sprintf(" · %d spurious", d.Spurious)
	}
	return s
}

// kmText is a Kaplan-Meier median with its interval: "2.5 s (95 % CI
// 1.9 s–3.1 s)", "beyond the budget" (fewer than half the trials got
// there: the median, or a bound, lies past the time they ran).
func kmText(c *Censored) string {
	if c == nil {
		return "—"
	}
	bound := func(x *float64) string {
		if x == nil {
			return "beyond the budget"
		}
		return duration(*x)
	}
	if c.Median == nil {
		return "beyond the budget"
	}
	return fmt.Sprintf("%s (95 %% CI %s–%s)", duration(*c.Median), bound(c.Lower), bound(c.Upper))
}

// sortedOutcomes are the outcomes, "name ×n", in order.
func sortedOutcomes(o map[string]int) []string {
	var out []string
	for k, n := range o {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	slices.Sort(out)
	return out
}
