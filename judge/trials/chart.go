package trials

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/stats"
)

// Band is one tool's defects detected over time: at each time a detection
// happened in one of its trials (and at 0), the quartiles over its trials
// of how many each had detected by then. Between two such times nothing
// changes: the curves are steps, exactly.
type Band struct {
	At, Q1, Median, Q3 []float64
}

// detectionTimes are the trial's timed detections, in order.
func detectionTimes(t Trial) []float64 {
	var times []float64
	for _, s := range t.Stages {
		if s.Detected && s.DetectedAfter != nil {
			times = append(times, *s.DetectedAfter)
		}
	}
	sort.Float64s(times)
	return times
}

// bandOf is the band of a tool's trials.
func bandOf(trials []Trial) Band {
	var per [][]float64
	at := []float64{0}
	for _, t := range trials {
		ts := detectionTimes(t)
		per = append(per, ts)
		at = append(at, ts...)
	}
	sort.Float64s(at)
	at = compact(at)
	b := Band{At: at}
	for _, x := range at {
		counts := make([]float64, len(per))
		for j, ts := range per {
			counts[j] = float64(sort.Search(len(ts), func(i int) bool { return ts[i] > x }))
		}
		q1, m, q3 := stats.Quartiles(counts)
		b.Q1, b.Median, b.Q3 = append(b.Q1, q1), append(b.Median, m), append(b.Q3, q3)
	}
	return b
}

func compact(xs []float64) []float64 {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// stepFigure draws defects detected over time, one line per tool (its
// median over the trials) in a band between the quartiles, both stepping
// at the detections' own times. The y-axis ends at the number of defects.
func stepFigure(trials []Trial) (figure, error) {
	end := 0.0
	var names []string
	byTool := map[string][]Trial{}
	for _, t := range trials {
		if !t.Ran() {
			continue
		}
		end = max(end, t.Seconds)
		for _, x := range detectionTimes(t) {
			end = max(end, x)
		}
		if _, ok := byTool[t.Tool]; !ok {
			names = append(names, t.Tool)
		}
		byTool[t.Tool] = append(byTool[t.Tool], t)
	}
	if end == 0 {
		end = 1
	}
	p := plot.New()
	p.Title.Text = "Defects detected over time (median of the trials, quartiles shaded)"
	p.X.Label.Text = "seconds since the tool started (each trial's own start)"
	p.Y.Label.Text = "defects detected"
	p.Y.Min, p.Y.Max = 0, float64(len(catalogue.Defects))
	p.Y.Tick.Marker = plot.ConstantTicks(ticks(0, len(catalogue.Defects)))
	p.X.Min, p.X.Max = 0, end
	p.Add(plotter.NewGrid())
	for i, name := range names {
		b := bandOf(byTool[name])
		c := toolColor(i)
		// The band: over each step, a rectangle from Q1 to Q3.
		var upper, lower plotter.XYs
		for j := range b.At {
			next := end
			if j+1 < len(b.At) {
				next = b.At[j+1]
			}
			upper = append(upper, plotter.XY{X: b.At[j], Y: b.Q3[j]}, plotter.XY{X: next, Y: b.Q3[j]})
			lower = append(lower, plotter.XY{X: b.At[j], Y: b.Q1[j]}, plotter.XY{X: next, Y: b.Q1[j]})
		}
		poly := append(plotter.XYs{}, upper...)
		for j := len(lower) - 1; j >= 0; j-- {
			poly = append(poly, lower[j])
		}
		band, err := plotter.NewPolygon(poly)
		if err != nil {
			return figure{}, err
		}
		band.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 60}
		band.LineStyle.Width = 0
		p.Add(band)
		med := make(plotter.XYs, 0, len(b.At)+1)
		for j := range b.At {
			med = append(med, plotter.XY{X: b.At[j], Y: b.Median[j]})
		}
		med = append(med, plotter.XY{X: end, Y: b.Median[len(b.Median)-1]})
		line, err := plotter.NewLine(med)
		if err != nil {
			return figure{}, err
		}
		line.Color = c
		line.Dashes = toolDashes(i)
		line.Width = vg.Points(2)
		line.StepStyle = plotter.PostStep
		p.Add(line)
		p.Legend.Add(name, line)
	}
	return figure{p, 8 * vg.Inch, 4.5*vg.Inch + legendHeight(len(names)), true}, nil
}

// legendHeight is what a legend of n entries below a plot adds to its
// height.
func legendHeight(n int) vg.Length { return vg.Length(n) * vg.Points(18) }

// Chart draws the step chart (stepFigure) and saves it to each file (by
// its extension: .svg, .png).
func Chart(trials []Trial, files ...string) error {
	f, err := stepFigure(trials)
	if err != nil {
		return err
	}
	return f.save(files...)
}

// ticks are a tick at each whole number from one to the other.
func ticks(from, to int) []plot.Tick {
	var ts []plot.Tick
	for i := from; i <= to; i++ {
		ts = append(ts, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	return ts
}

// cdFigure draws the ranking's critical-difference diagram (Demšar
// 2006): the tools on an axis of mean rank (1: fastest), the critical
// difference as a bar above it, and the tools the Nemenyi test does not
// tell apart joined by a thick line.
func cdFigure(r Ranking) (figure, error) {
	k := len(r.Tools)
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return r.MeanRanks[order[i]] < r.MeanRanks[order[j]] })
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Mean rank by median time to detect, over %d defects (Friedman p %s)", r.Blocks, pShort(r.P))
	p.X.Label.Text = "mean rank (1: fastest)"
	p.X.Min, p.X.Max = 1, float64(k)
	p.X.Tick.Marker = plot.ConstantTicks(ticks(1, k))
	p.HideY()
	rows := float64(k) + 1
	p.Y.Min, p.Y.Max = -rows*0.5, 1.2
	axis, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: float64(k), Y: 0}})
	if err != nil {
		return figure{}, err
	}
	axis.Width = vg.Points(1)
	p.Add(axis)
	var labels plotter.XYLabels
	for row, i := range order {
		y := -0.5 * float64(row+1)
		x := r.MeanRanks[i]
		stem, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: y}})
		if err != nil {
			return figure{}, err
		}
		stem.Color = toolColor(i)
		stem.Dashes = toolDashes(i)
		stem.Width = vg.Points(1)
		p.Add(stem)
		dot, err := plotter.NewScatter(plotter.XYs{{X: x, Y: 0}})
		if err != nil {
			return figure{}, err
		}
		dot.GlyphStyle.Shape = draw.CircleGlyph{}
		dot.GlyphStyle.Radius = vg.Points(3)
		dot.GlyphStyle.Color = toolColor(i)
		p.Add(dot)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
		labels.Labels = append(labels.Labels, fmt.Sprintf(" %s (%.2f)", r.Tools[i], x))
	}
	names, err := plotter.NewLabels(labels)
	if err != nil {
		return figure{}, err
	}
	p.Add(names)
	// The critical difference, from rank 1.
	bar, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 1 + r.CD, Y: 1}})
	if err != nil {
		return figure{}, err
	}
	bar.Width = vg.Points(2)
	p.Add(bar)
	cdLabel, err := plotter.NewLabels(plotter.XYLabels{XYs: []plotter.XY{{X: 1 + r.CD, Y: 1}}, Labels: []string{fmt.Sprintf(" CD = %.2f (Nemenyi, %.2f)", r.CD, Alpha)}})
	if err != nil {
		return figure{}, err
	}
	p.Add(cdLabel)
	index := map[string]int{}
	for i, t := range r.Tools {
		index[t] = i
	}
	for g, group := range r.Groups {
		lo, hi := float64(k), 1.0
		for _, t := range group {
			lo, hi = min(lo, r.MeanRanks[index[t]]), max(hi, r.MeanRanks[index[t]])
		}
		y := 0.25 + 0.2*float64(g)
		join, err := plotter.NewLine(plotter.XYs{{X: lo - 0.03, Y: y}, {X: hi + 0.03, Y: y}})
		if err != nil {
			return figure{}, err
		}
		join.Width = vg.Points(4)
		p.Add(join)
	}
	return figure{p, 8 * vg.Inch, vg.Length(1.2+0.35*float64(k)) * vg.Inch, false}, nil
}

// CDDiagram draws the critical-difference diagram (cdFigure) and saves it
// to each file.
func CDDiagram(r Ranking, files ...string) error {
	f, err := cdFigure(r)
	if err != nil {
		return err
	}
	return f.save(files...)
}

// figure is a drawn plot and its size; legendBelow draws its legend in a
// strip under the plot, where it covers no curve.
type figure struct {
	p           *plot.Plot
	w, h        vg.Length
	legendBelow bool
}

// writerTo draws the figure in a format (svg, png).
func (f figure) writerTo(format string) (io.WriterTo, error) {
	c, err := draw.NewFormattedCanvas(f.w, f.h, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	if !f.legendBelow {
		f.p.Draw(dc)
		return c, nil
	}
	legend := f.p.Legend
	legend.Padding = vg.Points(3)
	r := legend.Rectangle(dc)
	strip := r.Max.Y - r.Min.Y + vg.Points(10)
	f.p.Legend = plot.NewLegend()
	f.p.Draw(draw.Crop(dc, 0, 0, strip, 0))
	f.p.Legend = legend
	legend.Top, legend.Left = true, true
	legend.XOffs, legend.YOffs = vg.Points(50), -vg.Points(2)
	legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: dc.Min, Max: vg.Point{X: dc.Max.X, Y: dc.Min.Y + strip}}})
	return c, nil
}

// save writes the figure to each file, by its extension.
func (f figure) save(files ...string) error {
	for _, name := range files {
		wt, err := f.writerTo(strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), "."))
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return err
		}
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// svg is the figure as an SVG element, to stand in a page (its XML
// prolog dropped).
func (f figure) svg() (template.HTML, error) {
	wt, err := f.writerTo("svg")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", err
	}
	b := buf.Bytes()
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return template.HTML(b), nil // drawn here; gonum escapes the text in it
}
