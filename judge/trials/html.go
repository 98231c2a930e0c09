package trials

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/stats"
)

// ReportHTML is the run's report as a page that opens from disk, with no
// server and nothing fetched: every figure drawn inline.
const ReportHTML = "report.html"

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"seconds": func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"short":   func(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) },
	"join":    strings.Join,
}).Parse(reportTemplate))

// htmlReport is what the page shows.
type htmlReport struct {
	Title      string
	Tools      []ToolSummary
	Defects    []htmlDefect
	Step, CD   template.HTML
	Heatmaps   []htmlHeatmap
	Coverage   *htmlCoverage
	Mutation   *htmlMutation
	Trials     []Trial
	Provenance *Provenance
	Experiment string
}

// htmlDefect is one defect's survival figure and restricted means.
type htmlDefect struct {
	ID, Title string
	Figure    template.HTML
	Means     []htmlMean // a tool each, in the tools' order
}

// htmlMean is a tool's restricted mean times to trigger and to detect a
// defect, over its budget; Detect is "" when its reports carry no time.
// Detected is in how many trials it detected it, of how many, and the
// median time to detect, as the live page's tile says it.
type htmlMean struct {
	Trigger, Detect string
	Detected        string
	Budget          float64
}

// htmlHeatmap is a tool-by-tool matrix of one figure of the pairwise
// comparison of defects detected per trial.
type htmlHeatmap struct {
	Title, Caption string
	Tools          []string
	Rows           [][]htmlCell
}

type htmlCell struct {
	Text       string
	Background string // a colour of the scale, "" on the diagonal
	Foreground string
}

// WriteHTML writes the summary as report.html: per defect, the
// Kaplan-Meier curves of time to detect, one per tool, censored trials
// marked; the restricted mean times to trigger and detect each defect over
// the budget (Magma's table); for three or more tools, FuzzBench's
// pairwise heatmaps of the Holm-adjusted p and Â12 of defects detected per
// trial; the step chart and critical-difference diagram; every trial; and
// the provenance, with the experiment file's text where there is one.
func (s Summary) WriteHTML(w io.Writer, experiment string) error {
	r := htmlReport{Tools: s.Tools, Trials: s.Trials, Provenance: s.Provenance, Experiment: experiment}
	var names []string
	for _, t := range s.Tools {
		names = append(names, t.Tool)
	}
	if len(names) == 0 && s.Mutation != nil {
		for _, t := range s.Mutation.Tools {
			names = append(names, t.Tool)
		}
	}
	r.Title = "Trials of " + strings.Join(names, ", ")
	for i, d := range catalogue.Defects {
		hd := htmlDefect{ID: string(d.ID), Title: d.Title}
		for _, t := range s.Tools {
			m := htmlMean{Budget: t.Budget, Detected: t.DetectedText(i)}
			if t.Trials > 0 {
				ds := t.Defects[i]
				m.Trigger = fmt.Sprintf("%.1f", ds.TimeToTrigger.RestrictedMean)
				if ds.TimeToDetect != nil {
					m.Detect = fmt.Sprintf("%.1f", ds.TimeToDetect.RestrictedMean)
				}
			}
			hd.Means = append(hd.Means, m)
		}
		fig, err := survivalFigure(s.Tools, i)
		if err != nil {
			return err
		}
		hd.Figure = fig
		r.Defects = append(r.Defects, hd)
	}
	var err error
	if r.Step, r.CD, err = s.Figures(); err != nil {
		return err
	}
	r.Heatmaps = heatmaps(s)
	r.Mutation = s.Mutation.html()
	if r.Coverage, err = s.htmlCoverage(); err != nil {
		return err
	}
	return reportPage.Execute(w, r)
}

// htmlCoverage is the page's coverage section: the growth curves, drawn
// in the page, and report.md's table.
type htmlCoverage struct {
	Intro, VerdictsIntro string
	Chart, CodeChart     template.HTML
	Tools                []string
	Rows                 [][]string
	Notes, Verdicts      []string
}

func (s Summary) htmlCoverage() (*htmlCoverage, error) {
	tools, rows, notes, verdicts := s.coverageTable()
	if len(tools) == 0 {
		return nil, nil
	}
	c := &htmlCoverage{Intro: coverageIntro, VerdictsIntro: coverageVerdicts, Tools: tools, Rows: rows, Notes: notes, Verdicts: verdicts}
	f, err := coverageFigure(s, false)
	if err != nil {
		return nil, err
	}
	if c.Chart, err = f.svg(); err != nil {
		return nil, err
	}
	if _, code := s.hasCoverage(); code {
		if f, err = coverageFigure(s, true); err != nil {
			return nil, err
		}
		if c.CodeChart, err = f.svg(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Figures are the step chart of the summary's trials and, for three or
// more tools, the critical-difference diagram ("" otherwise), as SVG.
func (s Summary) Figures() (step, cd template.HTML, err error) {
	var ten []Trial
	for _, t := range s.Trials {
		if !t.Mutants() {
			ten = append(ten, t)
		}
	}
	f, err := stepFigure(ten)
	if err != nil {
		return "", "", err
	}
	if step, err = f.svg(); err != nil {
		return "", "", err
	}
	if s.Ranking != nil && len(s.Ranking.MeanRanks) > 0 {
		f, err := cdFigure(*s.Ranking)
		if err != nil {
			return "", "", err
		}
		if cd, err = f.svg(); err != nil {
			return "", "", err
		}
	}
	return step, cd, nil
}

// survivalFigure draws the Kaplan-Meier curves of the time to detect the
// i-th defect, a step line per tool (its colour and dashes), from 1 at 0
// down at each detection and on to the budget, with a cross at each trial
// censored there.
func survivalFigure(tools []ToolSummary, i int) (template.HTML, error) {
	p := plot.New()
	d := catalogue.Defects[i]
	p.Title.Text = fmt.Sprintf("%s: share of trials not yet detected", d.ID)
	p.X.Label.Text = "seconds since the tool started"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	end := 1.0
	for _, t := range tools {
		end = max(end, t.Budget)
	}
	p.X.Min, p.X.Max = 0, end
	p.Legend.Top = true
	for ti, t := range tools {
		if t.Trials == 0 {
			continue
		}
		c := t.Defects[i].TimeToDetect
		if c == nil {
			continue // its reports carry no time
		}
		km := stats.KaplanMeier(c.times, c.events)
		steps := plotter.XYs{{X: 0, Y: 1}}
		for j, at := range km.Times {
			steps = append(steps, plotter.XY{X: at, Y: km.S[j]})
		}
		last := steps[len(steps)-1].Y
		steps = append(steps, plotter.XY{X: max(t.Budget, steps[len(steps)-1].X), Y: last})
		line, err := plotter.NewLine(steps)
		if err != nil {
			return "", err
		}
		line.StepStyle = plotter.PostStep
		line.Color, line.Dashes, line.Width = toolColor(ti), toolDashes(ti), vg.Points(2)
		p.Add(line)
		p.Legend.Add(t.Tool, line)
		var marks plotter.XYs
		for j, at := range c.times {
			if !c.events[j] {
				marks = append(marks, plotter.XY{X: at, Y: survivalAt(km, at)})
			}
		}
		if len(marks) > 0 {
			sc, err := plotter.NewScatter(marks)
			if err != nil {
				return "", err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: toolColor(ti), Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
			p.Add(sc)
		}
	}
	return figure{p, 4.2 * vg.Inch, 2.6 * vg.Inch, false}.svg()
}

// survivalAt is the estimate at time t.
func survivalAt(km stats.Survival, t float64) float64 {
	s := 1.0
	for j, at := range km.Times {
		if at > t {
			break
		}
		s = km.S[j]
	}
	return s
}

// heatmaps are FuzzBench's pairwise matrices for three or more tools: the
// Holm-adjusted p of defects detected per trial, and Â12 (the row tool
// against the column tool).
func heatmaps(s Summary) []htmlHeatmap {
	var tools []string
	for _, t := range s.Tools {
		if t.Trials > 0 {
			tools = append(tools, t.Tool)
		}
	}
	if len(tools) < 3 {
		return nil
	}
	p := htmlHeatmap{Title: "Adjusted p, defects detected per trial", Tools: tools,
		Caption: "Mann-Whitney U, Holm-adjusted over each pair's tests: the brighter, the surer that the two differ (below 0.05 marked *)."}
	a := htmlHeatmap{Title: "Â12, defects detected per trial", Tools: tools,
		Caption: "The chance that a trial of the row's tool detects more than one of the column's, ties half: 0.5 is no difference."}
	for _, row := range tools {
		var pr, ar []htmlCell
		for _, col := range tools {
			if row == col {
				pr, ar = append(pr, htmlCell{Text: "—"}), append(ar, htmlCell{Text: "—"})
				continue
			}
			v, flipped := detectedVerdict(s.Pairs, row, col)
			if v == nil {
				pr, ar = append(pr, htmlCell{Text: "n/a"}), append(ar, htmlCell{Text: "n/a"})
				continue
			}
			text := fmt.Sprintf("%.3f", v.Adjusted)
			if v.Adjusted < Alpha {
				text += " *"
			}
			pr = append(pr, scaleCell(text, 1-math.Min(1, v.Adjusted/Alpha/4)))
			if v.A12 != nil {
				x := *v.A12
				if flipped {
					x = 1 - x
				}
				ar = append(ar, scaleCell(fmt.Sprintf("%.2f", x), x))
			} else {
				ar = append(ar, htmlCell{Text: "n/a"})
			}
		}
		p.Rows, a.Rows = append(p.Rows, pr), append(a.Rows, ar)
	}
	return []htmlHeatmap{p, a}
}

// detectedVerdict is the pair's verdict on defects detected per trial,
// and whether the pair is the other way round (col, row).
func detectedVerdict(pairs []PairSummary, row, col string) (*Verdict, bool) {
	for _, p := range pairs {
		if (p.A == row && p.B == col) || (p.A == col && p.B == row) {
			for i := range p.Verdicts {
				if p.Verdicts[i].Measure == "defects detected per trial" {
					return &p.Verdicts[i], p.A == col
				}
			}
		}
	}
	return nil, false
}

// viridis is the scale the heatmaps are coloured on: perceptually even
// and read alike by colour-blind readers (van der Walt and Smith's
// viridis, sampled at nine points).
var viridis = []string{"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"}

// scaleCell colours a cell by x in [0, 1] on the scale, with text that
// stays readable on it.
func scaleCell(text string, x float64) htmlCell {
	i := int(math.Round(math.Max(0, math.Min(1, x)) * float64(len(viridis)-1)))
	fg := "#ffffff"
	if i >= 5 {
		fg = "#000000"
	}
	return htmlCell{Text: text, Background: viridis[i], Foreground: fg}
}

// htmlTable is a table the page shows as it is: a header and rows of
// text, the first column a name and the rest figures.
type htmlTable struct {
	ID      string
	Caption string
	Header  []string
	Rows    [][]string
}

// htmlMutation is the page's mutation score: report.md's tables.
type htmlMutation struct {
	Intro      string
	Notes      []string // trials that could not run, attempts lost
	Tables     []htmlTable
	Verdicts   []string
	Undetected string
}

// html is the mutation summary as the page's tables; nil for none.
func (m *MutationSummary) html() *htmlMutation {
	if m == nil {
		return nil
	}
	h := &htmlMutation{Intro: fmt.Sprintf("The trials of %d mutant sets (%s). A tool's score is the mutants it detected over those planted in its trials, each with its 95 %% interval (%s).", len(m.Sets), setsText(m.Sets), m.Method)}
	plain := func(s string) string { return s } // the template escapes
	for _, t := range m.Tools {
		for _, line := range notRunText(t.NotRun, t.Lost, plain, plain) {
			h.Notes = append(h.Notes, t.Tool+": "+line)
		}
	}
	score := htmlTable{ID: "mutation-scores", Header: []string{"tool", "trials", "score", "depth 0", "depth 1", "depth 2", "spurious"}}
	for _, t := range m.Tools {
		score.Rows = append(score.Rows, []string{t.Tool, fmt.Sprint(t.Trials), t.Score.Text(), scoreAt(t.ByDepth, "0").Text(), scoreAt(t.ByDepth, "1").Text(), scoreAt(t.ByDepth, "2").Text(), fmt.Sprint(t.Spurious)})
	}
	ops := htmlTable{ID: "mutation-operators", Caption: "By operator.", Header: []string{"operator"}}
	for _, t := range m.Tools {
		ops.Header = append(ops.Header, t.Tool)
	}
	for _, op := range m.operators() {
		row := []string{op}
		for _, t := range m.Tools {
			row = append(row, scoreAt(t.ByOperator, op).Text())
		}
		ops.Rows = append(ops.Rows, row)
	}
	surv := htmlTable{ID: "mutation-survivors", Caption: "Why each survivor survived: not reached, the tool never requested its operation; reached, never triggered, it did not send the input the mutant's condition needs; triggered, not reported, the answer was wrong and its checks let it pass.",
		Header: []string{"tool", "operator", NotReached, NotTriggered, NotReported}}
	for _, t := range m.Tools {
		for _, s := range t.Survivors {
			surv.Rows = append(surv.Rows, []string{t.Tool, s.Operator, fmt.Sprint(s.NotReached), fmt.Sprint(s.NotTriggered), fmt.Sprint(s.NotReported)})
		}
	}
	h.Tables = []htmlTable{score, ops, surv}
	for _, p := range m.Pairs {
		h.Verdicts = append(h.Verdicts, p.All.Words)
		for _, t := range p.ByOperator {
			if t.OnlyA+t.OnlyB > 0 {
				h.Verdicts = append(h.Verdicts, t.Words)
			}
		}
	}
	if len(m.Undetected) == 0 {
		h.Undetected = "Every mutant planted was detected by at least one tool."
		return h
	}
	und := htmlTable{ID: "mutation-undetected", Caption: fmt.Sprintf("The %d mutants no tool detected, with a request that triggers each and why it survived each tool.", len(m.Undetected)),
		Header: []string{"set", "mutant", "depth", "a trigger"}}
	for _, t := range m.Tools {
		und.Header = append(und.Header, t.Tool)
	}
	for _, u := range m.Undetected {
		row := []string{u.Set, string(u.ID), fmt.Sprint(u.Depth), u.Trigger}
		for _, t := range m.Tools {
			row = append(row, cmp.Or(u.Groups[t.Tool], "—"))
		}
		und.Rows = append(und.Rows, row)
	}
	h.Tables = append(h.Tables, und)
	return h
}
