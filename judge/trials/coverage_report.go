package trials

import (
	"encoding/csv"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// The coverage's files in a run's folder: the growth curves (API, and code
// where it was recorded) and every sample of every trial.
const (
	CoverageSVG     = "coverage.svg"
	CoveragePNG     = "coverage.png"
	CodeCoverageSVG = "code-coverage.svg"
	CodeCoveragePNG = "code-coverage.png"
	CoverageCSV     = "coverage.csv"
)

// hasCoverage reports whether any tool recorded coverage, and any its
// code's.
func (s Summary) hasCoverage() (api, code bool) {
	for _, t := range s.Tools {
		if t.Coverage != nil {
			api = true
			code = code || t.Coverage.Statements != nil
		}
	}
	return api, code
}

// coverageFigure draws the coverage's growth, a line per tool (the median
// over its trials) in a band between the quartiles, as FuzzBench draws
// coverage over time: the API coverage's targets covered, or (code) the
// statements covered.
func coverageFigure(s Summary, code bool) (figure, error) {
	p := plot.New()
	p.X.Label.Text = "seconds since the tool started (each trial's own start)"
	p.X.Min, p.Y.Min = 0, 0
	if code {
		p.Title.Text = "Statements covered over time (median of the trials, quartiles shaded)"
		p.Y.Label.Text = "statements covered"
	} else {
		p.Title.Text = "API coverage over time (median of the trials, quartiles shaded)"
		p.Y.Label.Text = "API coverage targets covered (all criteria)"
	}
	p.Add(plotter.NewGrid())
	n := 0
	for i, t := range s.Tools {
		if t.Coverage == nil {
			continue
		}
		g, of := t.Coverage.Growth, t.Coverage.Targets.Of
		if code {
			if t.Coverage.Statements == nil {
				continue
			}
			g, of = t.Coverage.CodeGrowth, t.Coverage.Statements.Of
		}
		if len(g) == 0 {
			continue
		}
		p.Y.Max = max(p.Y.Max, float64(of))
		c := toolColor(i)
		var poly plotter.XYs
		for _, pt := range g {
			poly = append(poly, plotter.XY{X: pt.At, Y: pt.Q3})
		}
		for j := len(g) - 1; j >= 0; j-- {
			poly = append(poly, plotter.XY{X: g[j].At, Y: g[j].Q1})
		}
		band, err := plotter.NewPolygon(poly)
		if err != nil {
			return figure{}, err
		}
		band.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 60}
		band.LineStyle.Width = 0
		p.Add(band)
		med := make(plotter.XYs, 0, len(g))
		for _, pt := range g {
			med = append(med, plotter.XY{X: pt.At, Y: pt.Median})
		}
		line, err := plotter.NewLine(med)
		if err != nil {
			return figure{}, err
		}
		line.Color, line.Dashes, line.Width = c, toolDashes(i), vg.Points(2)
		line.StepStyle = plotter.PostStep // a trial's coverage holds until its next sample
		p.Add(line)
		p.X.Max = max(p.X.Max, g[len(g)-1].At)
		p.Legend.Add(fmt.Sprintf("%s (%d trials)", t.Tool, len(t.Coverage.Trials)), line)
		n++
	}
	return figure{p, 8 * vg.Inch, 4.5*vg.Inch + legendHeight(n), true}, nil
}

// CoverageFigure is the API coverage's growth as SVG, for a page; "" when
// no tool recorded coverage.
func (s Summary) CoverageFigure() (template.HTML, error) {
	if api, _ := s.hasCoverage(); !api {
		return "", nil
	}
	f, err := coverageFigure(s, false)
	if err != nil {
		return "", err
	}
	return f.svg()
}

// CoverageChart draws the coverage's growth (coverageFigure) to each file.
func CoverageChart(s Summary, code bool, files ...string) error {
	f, err := coverageFigure(s, code)
	if err != nil {
		return err
	}
	return f.save(files...)
}

// WriteCoverageCSV writes every coverage sample of every trial: a row per
// sample, each criterion's covered targets, their sum, the TCL and the
// statements covered (empty where not recorded), for a reader's own plots.
func WriteCoverageCSV(w io.Writer, ts []Trial) error {
	cw := csv.NewWriter(w)
	var names []string
	for _, names2 := range coverage.Levels {
		names = append(names, names2...)
	}
	header := append([]string{"tool", "trial", "seed", "after_seconds", "tcl", "targets"}, names...)
	_ = cw.Write(append(header, "statements"))
	for _, t := range ts {
		if t.Coverage == nil {
			continue
		}
		for _, p := range t.Coverage.Series {
			row := []string{t.Tool, fmt.Sprint(t.Number), t.Seed, fmt.Sprintf("%.3f", p.After), fmt.Sprint(p.TCL), fmt.Sprint(p.Targets)}
			covered := p.Covered
			for _, n := range names {
				if v, ok := covered[n]; ok {
					row = append(row, fmt.Sprint(v))
				} else {
					row = append(row, "")
				}
			}
			st := ""
			if p.Statements != nil {
				st = fmt.Sprint(*p.Statements)
			}
			_ = cw.Write(append(row, st))
		}
	}
	cw.Flush()
	return cw.Error()
}

// coverageTable is the coverage's table, as report.md and report.html
// show it: a row per criterion (its name and TCL level first), then the
// criteria's sum, the TCL and the statements, a cell per tool with
// coverage ("median [Q1–Q3] of total"); and a note per tool that got
// statuses the contract does not document, and the pairs' verdicts.
func (s Summary) coverageTable() (tools []string, rows [][]string, notes, verdicts []string) {
	var with []ToolSummary
	code := false
	for _, t := range s.Tools {
		if t.Coverage != nil {
			with = append(with, t)
			tools = append(tools, t.Tool)
			code = code || t.Coverage.Statements != nil
		}
	}
	if len(with) == 0 {
		return nil, nil, nil, nil
	}
	for i, cr := range with[0].Coverage.Criteria {
		row := []string{coverage.Title(cr.Name), fmt.Sprint(cr.Level)}
		for _, t := range with {
			cell := "—"
			if i < len(t.Coverage.Criteria) {
				cell = t.Coverage.Criteria[i].medianText()
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	sums := []struct {
		name string
		get  func(*ToolCoverage) string
	}{
		{"all targets", func(c *ToolCoverage) string { return c.Targets.medianText() }},
		{"TCL reached", func(c *ToolCoverage) string { return c.TCL.medianText() }},
	}
	if code {
		sums = append(sums, struct {
			name string
			get  func(*ToolCoverage) string
		}{"statements", func(c *ToolCoverage) string {
			if c.Statements == nil {
				return "—"
			}
			return c.Statements.medianText()
		}})
	}
	for _, r := range sums {
		row := []string{r.name, ""}
		for _, t := range with {
			row = append(row, r.get(t.Coverage))
		}
		rows = append(rows, row)
	}
	for _, t := range with {
		if u := t.Coverage.sortedUndocumented(); len(u) > 0 {
			notes = append(notes, fmt.Sprintf("%s got statuses the contract does not document: %s.", t.Tool, strings.Join(u, ", ")))
		}
	}
	for _, p := range s.Pairs {
		for _, v := range p.Coverage {
			verdicts = append(verdicts, v.Words)
		}
	}
	return tools, rows, notes, verdicts
}

// coverageIntro and coverageVerdicts are the words around the table.
const (
	coverageIntro    = "What each trial's instance measured of the tool's requests: its API coverage, the criteria of Martin-Lopez, Segura and Ruiz-Cortés (A-TEST 2019) a server can see, with the Test Coverage Level reached, and where recorded the statements its code ran (Go's coverage). Each cell is the median over the trials, [quartiles] where they differ, of the targets there are."
	coverageVerdicts = "Final coverage compared, each pair of tools (exact Mann-Whitney U and Vargha-Delaney Â12 on the trials' final values, Holm over the pair's coverage tests):"
)

// writeCoverageMarkdown is report.md's coverage section.
func (s Summary) writeCoverageMarkdown(w io.Writer, chart, codeChart string) {
	tools, rows, notes, verdicts := s.coverageTable()
	if len(tools) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Coverage\n\n%s See [docs/coverage.md](https://github.com/defectshowcase/showcase/blob/main/docs/coverage.md).\n\n", coverageIntro)
	if chart != "" {
		fmt.Fprintf(w, "![API coverage over time](%s)\n\n", chart)
	}
	if codeChart != "" {
		fmt.Fprintf(w, "![Statements covered over time](%s)\n\n", codeChart)
	}
	fmt.Fprint(w, "| criterion | TCL |")
	for _, t := range tools {
		fmt.Fprintf(w, " %s |", mdCell(t))
	}
	fmt.Fprint(w, "\n|---|--:|")
	for range tools {
		fmt.Fprint(w, "--:|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", strings.Join(r, " | "))
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "\n%s\n", mdCell(n))
	}
	if len(verdicts) > 0 {
		fmt.Fprintf(w, "\n%s\n\n", coverageVerdicts)
		for _, v := range verdicts {
			fmt.Fprintf(w, "- %s\n", v)
		}
	}
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
