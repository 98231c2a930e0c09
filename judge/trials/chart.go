package trials

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/defectshowcase/showcase/judge/stats"
)

// Band is one tool's defects detected over time: at each time, the median
// over its trials and the quartiles either side.
type Band struct {
	At, Q1, Median, Q3 []float64
}

// curve is how many defects the trial had detected by each time (the
// detections its report times).
func curve(t Trial, at []float64) []float64 {
	var times []float64
	for _, s := range t.Stages {
		if s.Detected && s.DetectedAfter != nil {
			times = append(times, *s.DetectedAfter)
		}
	}
	sort.Float64s(times)
	out := make([]float64, len(at))
	k := 0
	for i, x := range at {
		for k < len(times) && times[k] <= x {
			k++
		}
		out[i] = float64(k)
	}
	return out
}

// bands are each tool's bands over 0..end, in 200 steps.
func bands(trials []Trial, end float64) (names []string, out map[string]Band) {
	const steps = 200
	at := make([]float64, steps+1)
	for i := range at {
		at[i] = end * float64(i) / steps
	}
	byTool := map[string][]Trial{}
	for _, t := range trials {
		if _, ok := byTool[t.Tool]; !ok {
			names = append(names, t.Tool)
		}
		byTool[t.Tool] = append(byTool[t.Tool], t)
	}
	out = map[string]Band{}
	for _, name := range names {
		var curves [][]float64
		for _, t := range byTool[name] {
			curves = append(curves, curve(t, at))
		}
		b := Band{At: at}
		for i := range at {
			xs := make([]float64, len(curves))
			for j, c := range curves {
				xs[j] = c[i]
			}
			q1, m, q3 := stats.Quartiles(xs)
			b.Q1, b.Median, b.Q3 = append(b.Q1, q1), append(b.Median, m), append(b.Q3, q3)
		}
		out[name] = b
	}
	return names, out
}

// Chart draws defects detected over time, one line per tool (its median
// over the trials) in a band between the quartiles, and saves it to each
// file (by its extension: .svg, .png).
func Chart(trials []Trial, files ...string) error {
	end := 0.0
	for _, t := range trials {
		end = max(end, t.Seconds)
		for _, s := range t.Stages {
			if s.DetectedAfter != nil {
				end = max(end, *s.DetectedAfter)
			}
		}
	}
	if end == 0 {
		end = 1
	}
	names, bs := bands(trials, end)
	p := plot.New()
	p.Title.Text = "Defects detected over time (median of the trials, quartiles shaded)"
	p.X.Label.Text = "seconds since the trial began"
	p.Y.Label.Text = "defects detected"
	p.Y.Min, p.Y.Max = 0, 12.5 // room above ten for the legend
	p.X.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, name := range names {
		b := bs[name]
		c := plotutil.Color(i)
		poly := make(plotter.XYs, 0, 2*len(b.At))
		for j := range b.At {
			poly = append(poly, plotter.XY{X: b.At[j], Y: b.Q3[j]})
		}
		for j := len(b.At) - 1; j >= 0; j-- {
			poly = append(poly, plotter.XY{X: b.At[j], Y: b.Q1[j]})
		}
		band, err := plotter.NewPolygon(poly)
		if err != nil {
			return err
		}
		r, g, bl, _ := c.RGBA()
		band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 60}
		band.LineStyle.Width = 0
		p.Add(band)
		med := make(plotter.XYs, len(b.At))
		for j := range b.At {
			med[j] = plotter.XY{X: b.At[j], Y: b.Median[j]}
		}
		line, err := plotter.NewLine(med)
		if err != nil {
			return err
		}
		line.Color = c
		line.Width = vg.Points(2)
		line.StepStyle = plotter.PostStep
		p.Add(line)
		p.Legend.Add(name, line)
	}
	p.Legend.Padding = vg.Points(4)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.XOffs = vg.Points(4)
	for _, f := range files {
		if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
			return err
		}
	}
	return nil
}
