package trials

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/stats"
)

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

// DefectSummary is one defect over one tool's trials: in how many each
// stage happened, and the times to trigger and to detect.
type DefectSummary struct {
	ID        catalogue.ID `json:"id"`
	Reached   int          `json:"reached"`
	Triggered int          `json:"triggered"`
	Detected  int          `json:"detected"`
	// Untimed counts the detections whose report carries no time.
	Untimed       int     `json:"detected_untimed"`
	TimeToTrigger *Spread `json:"time_to_trigger,omitempty"` // seconds
	TimeToDetect  *Spread `json:"time_to_detect,omitempty"`  // seconds
}

// ToolSummary is one tool over its trials.
type ToolSummary struct {
	Tool   string `json:"tool"`
	Trials int    `json:"trials"`
	// Outcomes counts how the trials ended ("finished", "exit 1",
	// "stopped at the budget", …); Invalid those that tested nothing a
	// report shows (no report, no request, no start): they count as
	// detecting nothing, and are named, never taken for clean runs.
	Outcomes map[string]int `json:"outcomes"`
	Invalid  []int          `json:"invalid_trials"`
	// Detected is each trial's count of defects detected, in trial order.
	Detected       []int           `json:"detected"`
	DetectedSpread *Spread         `json:"detected_spread"`
	Defects        []DefectSummary `json:"defects"`
}

// Verdict is one comparison of two tools on one measure, with the verdict
// in words.
type Verdict struct {
	Measure string `json:"measure"` // "defects detected", or "time to detect DEFECT"
	stats.Comparison
	// Better is the tool that does better ("" when the test shows no
	// difference at p < 0.05); Â12 is the probability that A does better
	// than B, ties half.
	Better string `json:"better"`
	Words  string `json:"words"`
}

// PairSummary compares two tools.
type PairSummary struct {
	A        string    `json:"a"`
	B        string    `json:"b"`
	Verdicts []Verdict `json:"verdicts"`
}

// Summary is a run of trials, summarized.
type Summary struct {
	Budget float64       `json:"budget_seconds"` // the longest budget
	Tools  []ToolSummary `json:"tools"`
	Pairs  []PairSummary `json:"pairs"`
	Trials []Trial       `json:"trials"`
}

// Summarize summarizes trials (of one or more tools); budget is the
// longest trial's budget, the time a defect never detected counts as.
func Summarize(trials []Trial, budget float64) Summary {
	s := Summary{Budget: budget, Trials: trials}
	var names []string
	byTool := map[string][]Trial{}
	for _, t := range trials {
		if _, ok := byTool[t.Tool]; !ok {
			names = append(names, t.Tool)
		}
		byTool[t.Tool] = append(byTool[t.Tool], t)
	}
	for _, name := range names {
		s.Tools = append(s.Tools, summarizeTool(name, byTool[name]))
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			s.Pairs = append(s.Pairs, compare(names[i], names[j], byTool[names[i]], byTool[names[j]], budget))
		}
	}
	return s
}

func summarizeTool(name string, trials []Trial) ToolSummary {
	ts := ToolSummary{Tool: name, Trials: len(trials), Outcomes: map[string]int{}, Invalid: []int{}}
	var counts []float64
	for _, t := range trials {
		ts.Outcomes[t.Outcome]++
		if !t.Valid() {
			ts.Invalid = append(ts.Invalid, t.Number)
		}
		ts.Detected = append(ts.Detected, t.Detected())
		counts = append(counts, float64(t.Detected()))
	}
	ts.DetectedSpread = spreadOf(counts)
	for _, d := range catalogue.Defects {
		ds := DefectSummary{ID: d.ID}
		var trig, det []float64
		for _, t := range trials {
			for _, st := range t.Stages {
				if st.ID != d.ID {
					continue
				}
				ds.Reached += b2i(st.Reached)
				ds.Triggered += b2i(st.Triggered)
				ds.Detected += b2i(st.Detected)
				if st.Triggered && st.TriggeredAfter != nil {
					trig = append(trig, *st.TriggeredAfter)
				}
				if st.Detected {
					if st.DetectedAfter != nil {
						det = append(det, *st.DetectedAfter)
					} else {
						ds.Untimed++
					}
				}
			}
		}
		ds.TimeToTrigger, ds.TimeToDetect = spreadOf(trig), spreadOf(det)
		ts.Defects = append(ts.Defects, ds)
	}
	return ts
}

// detectTimes is each trial's time to detect the defect; a trial that did
// not detect it (or whose report carries no time) counts as the budget
// plus one second: last, whatever the budget.
func detectTimes(trials []Trial, id catalogue.ID, budget float64) (times []float64, any bool) {
	for _, t := range trials {
		x := budget + 1
		for _, st := range t.Stages {
			if st.ID == id && st.Detected && st.DetectedAfter != nil {
				x, any = *st.DetectedAfter, true
			}
		}
		times = append(times, x)
	}
	return times, any
}

func compare(a, b string, ta, tb []Trial, budget float64) PairSummary {
	p := PairSummary{A: a, B: b}
	var ca, cb []float64
	for _, t := range ta {
		ca = append(ca, float64(t.Detected()))
	}
	for _, t := range tb {
		cb = append(cb, float64(t.Detected()))
	}
	if c, err := stats.Compare(ca, cb); err == nil {
		v := Verdict{Measure: "defects detected", Comparison: c}
		// Paired by trial number (the same seed, when seeds are the
		// trial's number): in how many did A find more, and B.
		more, fewer := 0, 0
		for i := 0; i < len(ca) && i < len(cb); i++ {
			switch {
			case ca[i] > cb[i]:
				more++
			case ca[i] < cb[i]:
				fewer++
			}
		}
		n := min(len(ca), len(cb))
		ma, mb := stats.Median(ca), stats.Median(cb)
		switch {
		case c.P < 0.05 && c.A12 > 0.5:
			v.Better = a
			v.Words = fmt.Sprintf("%s finds more than %s: in %d/%d trials, median %s against %s, Â12 %.2f, %s", a, b, more, n, num(ma), num(mb), c.A12, pText(c.P))
		case c.P < 0.05:
			v.Better = b
			v.Words = fmt.Sprintf("%s finds more than %s: in %d/%d trials, median %s against %s, Â12 %.2f, %s", b, a, fewer, n, num(mb), num(ma), 1-c.A12, pText(c.P))
		default:
			v.Words = fmt.Sprintf("no difference shown in defects found: %s finds more in %d/%d trials, %s in %d, median %s against %s, Â12 %.2f, %s", a, more, n, b, fewer, num(ma), num(mb), c.A12, pText(c.P))
		}
		p.Verdicts = append(p.Verdicts, v)
	}
	for _, d := range catalogue.Defects {
		xa, anyA := detectTimes(ta, d.ID, budget)
		xb, anyB := detectTimes(tb, d.ID, budget)
		if !anyA && !anyB {
			continue
		}
		// Sooner is better: compare the negated times, so that Â12 is
		// the probability that A detects it sooner.
		na, nb := negate(xa), negate(xb)
		c, err := stats.Compare(na, nb)
		if err != nil {
			continue
		}
		v := Verdict{Measure: "time to detect " + string(d.ID), Comparison: c}
		sa, sb := detections(xa, budget), detections(xb, budget)
		switch {
		case c.P < 0.05 && c.A12 > 0.5:
			v.Better = a
			v.Words = fmt.Sprintf("%s detects %s sooner than %s (detected %s, against %s), Â12 %.2f, %s", a, d.ID, b, sa, sb, c.A12, pText(c.P))
		case c.P < 0.05:
			v.Better = b
			v.Words = fmt.Sprintf("%s detects %s sooner than %s (detected %s, against %s), Â12 %.2f, %s", b, d.ID, a, sb, sa, 1-c.A12, pText(c.P))
		default:
			v.Words = fmt.Sprintf("no difference shown in the time to detect %s (%s detected it %s, %s %s), Â12 %.2f, %s", d.ID, a, sa, b, sb, c.A12, pText(c.P))
		}
		p.Verdicts = append(p.Verdicts, v)
	}
	return p
}

func negate(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = -x
	}
	return out
}

func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// detections says in how many trials a defect was detected, and the
// median time of those: "6/10, median 1.2 s", or "never in 10".
func detections(times []float64, budget float64) string {
	var in []float64
	for _, x := range times {
		if x <= budget {
			in = append(in, x)
		}
	}
	if len(in) == 0 {
		return fmt.Sprintf("never in %d", len(times))
	}
	return fmt.Sprintf("%d/%d, median %s", len(in), len(times), duration(stats.Median(in)))
}

// duration is a time in seconds as a person reads it: milliseconds under
// a second.
func duration(x float64) string {
	if x < 1 {
		return fmt.Sprintf("%.0f ms", x*1000)
	}
	return fmt.Sprintf("%.1f s", x)
}

func pText(p float64) string {
	switch {
	case p < 0.001:
		return "p < 0.001"
	case p < 0.01:
		return "p < 0.01"
	}
	return fmt.Sprintf("p = %.2f", p)
}

func spreadText(s *Spread) string {
	if s == nil {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", duration(s.Median), duration(s.Q1), duration(s.Q3))
}

// WriteMarkdown writes the summary for a person: per tool, each defect's
// stages over the trials and its times; then each pair's verdicts; the
// chart beside it (chartFile, relative to the Markdown), if any.
func (s Summary) WriteMarkdown(w io.Writer, chartFile string) error {
	fmt.Fprintf(w, "# Trials\n\n")
	for _, t := range s.Tools {
		var outcomes []string
		for o, n := range t.Outcomes {
			outcomes = append(outcomes, fmt.Sprintf("%s ×%d", o, n))
		}
		sort.Strings(outcomes)
		fmt.Fprintf(w, "## %s: %d trials\n\n", md(t.Tool), t.Trials)
		fmt.Fprintf(w, "Ended: %s. Defects detected per trial: %s (median %s, IQR %s–%s).\n\n",
			strings.Join(outcomes, ", "), ints(t.Detected), num(t.DetectedSpread.Median), num(t.DetectedSpread.Q1), num(t.DetectedSpread.Q3))
		if len(t.Invalid) > 0 {
			fmt.Fprintf(w, "**Trials %s tested nothing a report shows** (no report the scorer reads, no request, or no start): they count as detecting nothing; see each trial's `trial.json`.\n\n", ints(t.Invalid))
		}
		fmt.Fprintln(w, "| defect | reached | triggered | detected | time to trigger, median (IQR) | time to detect, median (IQR) |")
		fmt.Fprintln(w, "|---|--:|--:|--:|---|---|")
		for _, d := range t.Defects {
			det := spreadText(d.TimeToDetect)
			if d.Untimed > 0 {
				det += fmt.Sprintf("; %d untimed", d.Untimed)
			}
			fmt.Fprintf(w, "| %s | %d/%d | %d/%d | %d/%d | %s | %s |\n", d.ID, d.Reached, t.Trials, d.Triggered, t.Trials, d.Detected, t.Trials, spreadText(d.TimeToTrigger), det)
		}
		fmt.Fprintln(w)
	}
	if len(s.Pairs) > 0 {
		fmt.Fprintf(w, "## Which is better\n\nMann-Whitney U (two-sided) and Vargha and Delaney's Â12 over the trials; a defect a trial never detected counts as after the budget (%.0f s).\n\n", s.Budget)
		for _, p := range s.Pairs {
			fmt.Fprintf(w, "**%s and %s**\n\n", md(p.A), md(p.B))
			for _, v := range p.Verdicts {
				fmt.Fprintf(w, "- %s.\n", md(v.Words))
			}
			fmt.Fprintln(w)
		}
	}
	if chartFile != "" {
		fmt.Fprintf(w, "![Defects detected over time: each tool's median over its trials, and the band between the quartiles](%s)\n\nDetections whose report carries no time are not on the chart.\n", chartFile)
	}
	return nil
}

func ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
