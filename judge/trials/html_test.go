package trials

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
)

// report.html of three real tools (Schemathesis 4.9.5's ten trials and
// the reference and weak tools): it opens from disk (no script, nothing
// fetched: its CSP allows nothing but inline styles and data: images);
// each defect has its Kaplan-Meier figure; the restricted mean times are
// what a reader works out from the trials' own records (where every
// censored trial is censored at the budget, the mean of min(time,
// budget)); the pairwise heatmaps say of B against A the complement of
// A against B; and every trial has its row. -update writes it to
// docs/trials-report.html to be looked at.
func TestReportHTML(t *testing.T) {
	st := rescored(t, copyRun(t, filepath.Join(stSamples, "ten-trials")), "*.ndjson*")
	ref := rescored(t, copyRun(t, replayRun), "report.csv")
	all := append(st, ref...)
	s := Summarize(all, 600)
	var page bytes.Buffer
	if err := s.WriteHTML(&page, ""); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	const docsPage = "../../docs/trials-report.html"
	if *update {
		if err := os.WriteFile(docsPage, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if shown, err := os.ReadFile(docsPage); err != nil || !bytes.Equal(shown, page.Bytes()) {
		t.Errorf("%s is not the page the records give today (go test ./judge/trials -run TestReportHTML -update): %v", docsPage, err)
	}
	if strings.Contains(html, "<script") || regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(html) {
		t.Error("the page runs a script or fetches something")
	}
	var hostile bytes.Buffer
	if err := s.WriteHTML(&hostile, "name: a campaign\n<script>not run</script>\n"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hostile.String(), "&lt;script&gt;not run&lt;/script&gt;") || strings.Contains(hostile.String(), "<script") {
		t.Error("the experiment file is not escaped")
	}
	for _, d := range catalogue.Defects {
		fig := regexp.MustCompile(`(?s)<figure id="km-` + string(d.ID) + `"><svg.*?</svg>\s*<figcaption>`).FindString(html)
		if fig == "" {
			t.Fatalf("no survival figure for %s", d.ID)
		}
	}
	// Restricted means against the records, tool by tool, for each defect.
	rows := regexp.MustCompile(`(?s)<table id="rmst">.*?</table>`).FindString(html)
	cells := regexp.MustCompile(`<tr><td>([A-Z]+-\d+) [^<]*</td>(.*?)</tr>`).FindAllStringSubmatch(rows, -1)
	if len(cells) != 10 {
		t.Fatalf("%d rows in the restricted-mean table", len(cells))
	}
	checked := 0
	for ti, tool := range s.Tools {
		var trials []Trial
		for _, tr := range all {
			if tr.Tool == tool.Tool && tr.Ran() {
				trials = append(trials, tr)
			}
		}
		for di, d := range catalogue.Defects {
			var trig, det float64
			for _, tr := range trials {
				st := stageOf(tr, d.ID)
				b := tr.budget(600)
				trig += pick(st.Triggered, st.TriggeredAfter, b)
				det += pick(st.Detected, st.DetectedAfter, b)
			}
			tds := regexp.MustCompile(`<td class="n">([^<]*)</td>`).FindAllStringSubmatch(cells[di][2], -1)
			want := fmt.Sprintf("%.1f · %.1f", trig/float64(len(trials)), det/float64(len(trials)))
			if got := tds[ti][1]; got != want {
				t.Errorf("%s, %s: %q, want %q (the mean of min(time, budget) over %d trials)", tool.Tool, d.ID, got, want, len(trials))
			}
			checked++
		}
	}
	if checked != 30 {
		t.Errorf("%d cells checked", checked)
	}
	// "Detected, per defect" against the records: k of n; and where every
	// trial detected it (nothing censored), the Kaplan-Meier median is the
	// sample median (the middle time, or the mean of the two middle ones:
	// where the curve lies at 0.5, the middle of that step, as R's survfit
	// takes it).
	detected := regexp.MustCompile(`(?s)<table id="detected-table">.*?</table>`).FindString(html)
	rowsD := regexp.MustCompile(`<tr><td>([A-Z]+-\d+) [^<]*</td>(.*?)</tr>`).FindAllStringSubmatch(detected, -1)
	if len(rowsD) != 10 {
		t.Fatalf("%d rows in the detected table", len(rowsD))
	}
	medians := 0
	for ti, tool := range s.Tools {
		for di, d := range catalogue.Defects {
			k, n := 0, 0
			var times []float64
			untimed := false
			for _, tr := range all {
				if tr.Tool != tool.Tool || !tr.Ran() {
					continue
				}
				n++
				if st := stageOf(tr, d.ID); st.Detected {
					k++
					if st.DetectedAfter == nil {
						untimed = true
					} else {
						times = append(times, *st.DetectedAfter)
					}
				}
			}
			got := regexp.MustCompile(`<td class="n">([^<]*)</td>`).FindAllStringSubmatch(rowsD[di][2], -1)[ti][1]
			if want := fmt.Sprintf("%d/%d · ", k, n); !strings.HasPrefix(got, want) {
				t.Errorf("%s, %s: %q, want %q…", tool.Tool, d.ID, got, want)
			}
			if k == n && n > 0 && !untimed {
				slices.Sort(times)
				m := times[n/2]
				if n%2 == 0 {
					m = (times[n/2-1] + times[n/2]) / 2
				}
				if want := fmt.Sprintf("%d/%d · %s", k, n, duration(m)); got != want {
					t.Errorf("%s, %s: %q, want %q (the sample median of %d times)", tool.Tool, d.ID, got, want, n)
				}
				medians++
			}
		}
	}
	if medians < 10 {
		t.Errorf("%d medians checked against the order statistic", medians)
	}
	// The heatmaps: Â12 of B against A is 1 - that of A against B.
	heat := regexp.MustCompile(`(?s)<h3>Â12, defects detected per trial</h3>.*?</table>`).FindString(html)
	var m [][]string
	for _, row := range regexp.MustCompile(`<tr><th>[^<]*</th>(<td.*?)</tr>`).FindAllStringSubmatch(heat, -1) {
		var r []string
		for _, c := range regexp.MustCompile(`<td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(row[1], -1) {
			r = append(r, c[1])
		}
		m = append(m, r)
	}
	if len(m) != 3 {
		t.Fatalf("Â12 heatmap: %d rows", len(m))
	}
	for i := range 3 {
		for j := range 3 {
			if i == j {
				continue
			}
			a, _ := strconv.ParseFloat(m[i][j], 64)
			b, _ := strconv.ParseFloat(m[j][i], 64)
			if math.Abs(a+b-1) > 0.011 {
				t.Errorf("Â12 [%d][%d] %v and [%d][%d] %v do not sum to 1", i, j, a, j, i, b)
			}
		}
	}
	if n := strings.Count(regexp.MustCompile(`(?s)<h2 id="trials">.*?</table>`).FindString(html), "<tr><td>"); n != len(all) {
		t.Errorf("%d trial rows, want %d", n, len(all))
	}
}

// pick is a trial's time to a stage: when it happened, else its budget.
func pick(happened bool, after *float64, budget float64) float64 {
	if happened && after != nil {
		return *after
	}
	return budget
}

// A tool's name is the experiment author's text, drawn into the figures
// and written in the tables: escaped everywhere, never markup.
func TestReportHTMLEscapes(t *testing.T) {
	t.Parallel()
	s := Summarize([]Trial{{Tool: "<script>x</script>&", Number: 1, Budget: 10, Seconds: 1, Outcome: "finished"}}, 10)
	var b strings.Builder
	if err := s.WriteHTML(&b, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script") || !strings.Contains(b.String(), "&lt;script&gt;") {
		t.Error("a tool's name is written as markup")
	}
}
