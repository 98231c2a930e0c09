package dashboard

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
)

// The shipped dashboard's panels load, each with its queries and legends.
func TestLoadTheShippedDashboard(t *testing.T) {
	panels, err := Load("../../deploy/grafana/showcase-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if n, c := len(InRow(panels, "")), len(InRow(panels, "Campaign")); n != 7 || c != 7 || len(panels) != 14 {
		t.Fatalf("%d panels, %d above the rows and %d in Campaign; want the dashboard's 7 and 7", len(panels), n, c)
	}
	// The Campaign row has the trials' coverage: API targets, TCL and
	// statements, each by trial (a trial's instance is its own), and the
	// spurious findings beside the detections, and the mutation score.
	var exprs []string
	for _, p := range InRow(panels, "Campaign") {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, m := range []string{"showcase_trials_api_coverage_targets)", "showcase_trials_api_coverage_targets_of)", "showcase_trials_api_tcl)", "showcase_trials_statements_covered)", "showcase_trials_spurious_findings_total)", "showcase_trials_mutants_planted_total)"} {
		if !strings.Contains(strings.Join(exprs, "\n"), m) {
			t.Errorf("the Campaign row queries no %s", strings.TrimSuffix(m, ")"))
		}
	}
	for _, p := range panels {
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %+v: no title or no query", p)
		}
		for _, tg := range p.Targets {
			if !strings.Contains(tg.Expr, "showcase_") || tg.Legend == "" {
				t.Errorf("%s: query %q, legend %q", p.Title, tg.Expr, tg.Legend)
			}
		}
	}
}

// Draw makes one PNG of the size asked, a panel with no data included, and
// draws at most MaxSeries lines a panel.
func TestDrawMakesOnePNG(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	var many []Series
	for i := range MaxSeries + 3 {
		many = append(many, Series{Name: strings.Repeat("s", i+1), Points: []Point{{at, float64(i)}, {at.Add(5 * time.Second), float64(i + 1)}}})
	}
	panels := []Panel{{Title: "many", Unit: "reqps", Series: many}, {Title: "none"}, {Title: "one", Unit: "s", Series: many[:1]}}
	var b bytes.Buffer
	if err := Draw(&b, panels, 2, 4*vg.Inch, 2*vg.Inch); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	// vgimg draws at 96 dots per inch by default.
	if got := img.Bounds().Size(); got.X != 2*4*96 || got.Y != 2*2*96 {
		t.Errorf("%v pixels, want 768×384", got)
	}
	d := drawn(many)
	if len(d) != MaxSeries || d[0].Name != strings.Repeat("s", 4) {
		t.Errorf("drawn: %d series from %q; want the %d highest, by name", len(d), d[0].Name, MaxSeries)
	}
	if err := Draw(&b, nil, 2, vg.Inch, vg.Inch); err == nil {
		t.Error("drawing nothing did not fail")
	}
}
