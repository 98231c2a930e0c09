// Package dashboard draws the panels of the showcase's Grafana dashboard
// (deploy/grafana) from a Prometheus's answers, as one PNG: each panel's
// queries asked over a time range (query_range), each series a line named
// by the panel's legend format. It is the picture of what the dashboard
// shows, made without Grafana (AGPL, not used here), with gonum/plot.
package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/defectshowcase/showcase/platform/palette"
)

// Panel is one panel of the dashboard: its title, unit, queries and, once
// asked, the series they answered.
type Panel struct {
	// Row is the title of the row the panel is in: "" above the first
	// row (the service's panels), "Campaign" for a run of trials'.
	Row     string
	Title   string
	Unit    string
	Targets []Target
	Series  []Series
}

// Target is one query of a panel, with the legend format that names its
// series ("p99 {{route}}").
type Target struct{ Expr, Legend string }

// Series is one line: its name and its points.
type Series struct {
	Name   string
	Points []Point
}

// Point is one sample of a series.
type Point struct {
	At    time.Time
	Value float64
}

// Load reads the panels of a Grafana dashboard file.
func Load(path string) ([]Panel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []struct {
			Type        string
			Title       string
			FieldConfig struct {
				Defaults struct{ Unit string }
			}
			Targets []struct {
				Expr         string
				LegendFormat string
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var panels []Panel
	row := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
			continue
		}
		panel := Panel{Row: row, Title: p.Title, Unit: p.FieldConfig.Defaults.Unit}
		for _, t := range p.Targets {
			panel.Targets = append(panel.Targets, Target{Expr: t.Expr, Legend: t.LegendFormat})
		}
		panels = append(panels, panel)
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("%s: no panels", path)
	}
	return panels, nil
}

// InRow are the panels of one row ("": those above the first row).
func InRow(panels []Panel, row string) []Panel {
	var out []Panel
	for _, p := range panels {
		if p.Row == row {
			out = append(out, p)
		}
	}
	return out
}

// Range is what to ask Prometheus: from Start to End every Step, with
// Grafana's $__rate_interval standing for RateInterval.
type Range struct {
	Start, End         time.Time
	Step, RateInterval time.Duration
}

var legendLabel = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// Ask fills every panel's series from the Prometheus at base.
func Ask(ctx context.Context, client *http.Client, base string, panels []Panel, r Range) error {
	for i := range panels {
		panels[i].Series = nil
		for _, t := range panels[i].Targets {
			expr := strings.ReplaceAll(t.Expr, "$__rate_interval", fmt.Sprintf("%ds", int(r.RateInterval.Seconds())))
			series, err := queryRange(ctx, client, base, expr, r)
			if err != nil {
				return fmt.Errorf("%s: %w", panels[i].Title, err)
			}
			for _, s := range series {
				name := legendLabel.ReplaceAllStringFunc(t.Legend, func(m string) string {
					return s.labels[legendLabel.FindStringSubmatch(m)[1]]
				})
				if name == "" {
					name = expr
				}
				panels[i].Series = append(panels[i].Series, Series{Name: name, Points: s.points})
			}
		}
	}
	return nil
}

type answered struct {
	labels map[string]string
	points []Point
}

func queryRange(ctx context.Context, client *http.Client, base, expr string, r Range) ([]answered, error) {
	q := url.Values{"query": {expr}, "start": {strconv.FormatInt(r.Start.Unix(), 10)},
		"end": {strconv.FormatInt(r.End.Unix(), 10)}, "step": {fmt.Sprintf("%ds", int(r.Step.Seconds()))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/v1/query_range?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Metric map[string]string
				Values [][2]json.RawMessage
			}
		}
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("query_range %q: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query_range %q: %s", expr, body.Error)
	}
	var out []answered
	for _, s := range body.Data.Result {
		a := answered{labels: s.Metric}
		for _, v := range s.Values {
			var at float64
			var text string
			if json.Unmarshal(v[0], &at) != nil || json.Unmarshal(v[1], &text) != nil {
				return nil, fmt.Errorf("query_range %q: a sample that is not [time, \"value\"]", expr)
			}
			value, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(value) || math.IsInf(value, 0) {
				continue // a quantile of no requests: no point, a gap
			}
			a.points = append(a.points, Point{At: time.Unix(0, int64(at*1e9)), Value: value})
		}
		if len(a.points) > 0 {
			out = append(out, a)
		}
	}
	return out, nil
}

// MaxSeries is how many series a panel draws: the ones with the highest
// peaks (a legend of dozens says nothing).
const MaxSeries = 8

// Draw writes the panels as one PNG, cols panels a row, each panel
// width × height points.
func Draw(w io.Writer, panels []Panel, cols int, width, height vg.Length) error {
	if len(panels) == 0 || cols < 1 {
		return errors.New("nothing to draw")
	}
	rows := (len(panels) + cols - 1) / cols
	img := vgimg.NewWith(vgimg.UseWH(width*vg.Length(cols), height*vg.Length(rows)), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range grid[r] {
			i := r*cols + c
			if i >= len(panels) {
				p := plot.New()
				p.HideAxes()
				grid[r][c] = p
				continue
			}
			p, err := panelPlot(panels[i])
			if err != nil {
				return err
			}
			grid[r][c] = p
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: 8, PadBottom: 8, PadLeft: 8, PadRight: 8, PadX: 16, PadY: 16}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c := range grid[r] {
			grid[r][c].Draw(canvases[r][c])
		}
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

func panelPlot(p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Tick.Marker = plot.TimeTicks{Format: "15:04:05"}
	pl.Y.Label.Text = unitLabel(p.Unit)
	pl.Legend.Top = true
	pl.Legend.TextStyle.Font.Size = 7
	pl.Add(plotter.NewGrid())
	series := drawn(p.Series)
	if len(series) == 0 {
		pl.Title.Text += " (no data)"
	}
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xy[j] = plotter.XY{X: float64(pt.At.Unix()), Y: pt.Value}
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", p.Title, s.Name, err)
		}
		line.Color = palette.Color(i)
		line.Dashes = plotutil.Dashes(i) // told apart without colour too
		line.Width = vg.Points(1.2)
		pl.Add(line)
		pl.Legend.Add(s.Name, line)
	}
	return pl, nil
}

// drawn are the series a panel draws: the MaxSeries with the highest
// peaks, by name.
func drawn(all []Series) []Series {
	series := slices.Clone(all)
	peak := func(s Series) float64 {
		m := math.Inf(-1)
		for _, pt := range s.Points {
			m = math.Max(m, pt.Value)
		}
		return m
	}
	slices.SortStableFunc(series, func(a, b Series) int { return -cmpFloat(peak(a), peak(b)) })
	if len(series) > MaxSeries {
		series = series[:MaxSeries]
	}
	slices.SortStableFunc(series, func(a, b Series) int { return strings.Compare(a.Name, b.Name) })
	return series
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unitLabel is the axis label for a Grafana unit.
func unitLabel(unit string) string {
	switch unit {
	case "reqps":
		return "requests/s"
	case "s":
		return "seconds"
	case "", "none":
		return ""
	}
	return unit
}
