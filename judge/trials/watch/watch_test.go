package watch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/trials"
)

// replayRun is twenty trials of the reference and weak tools, recorded.
const replayRun = "../testdata/replay-trials"

func copyRun(t testing.TB) string {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(replayRun)); err != nil {
		t.Fatal(err)
	}
	return to
}

// A run that has ended, as showcase-trials wrote it: every tile says what
// report.html's "Detected, per defect" says, cell for cell, and the run
// is ended with its report.
func TestEndedRunEqualsReportHTML(t *testing.T) {
	dir := copyRun(t)
	ts, err := trials.LoadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := trials.WriteRun(dir, ts); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Dir: dir, Version: "test"})
	defer w.Close()
	s := w.State()
	if !s.Ended || !s.Report || s.Counts[trials.StateEnded] != 20 || s.Problem != "" || s.Charts == "" {
		t.Fatalf("ended %v, report %v, counts %v, problem %q, charts %q", s.Ended, s.Report, s.Counts, s.Problem, s.Charts)
	}
	page, err := os.ReadFile(filepath.Join(dir, trials.ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	cells := reportCells(t, string(page))
	checked := 0
	for ti, tool := range s.Tools {
		for di, tile := range tool.Tiles {
			if want := cells[di][ti]; tile.Text != want {
				t.Errorf("%s, %s: the page says %q, report.html %q", tool.Tool, tile.ID, tile.Text, want)
			}
			checked++
		}
	}
	if checked != 20 {
		t.Errorf("%d tiles checked", checked)
	}
	// The weak tool's trials, counted by hand from the records: SEC-01 in
	// as many as their stages say.
	k := 0
	for _, tr := range ts {
		for _, st := range tr.Stages {
			if tr.Tool == "weak" && st.ID == "SEC-01" && st.Detected {
				k++
			}
		}
	}
	if got := s.Tools[1].Tiles[0]; got.Detected != k || got.Of != 10 {
		t.Errorf("weak, SEC-01: %d of %d, the records say %d of 10", got.Detected, got.Of, k)
	}
}

// reportCells are the cells of report.html's "Detected, per defect": a
// row per defect, a cell per tool.
func reportCells(t *testing.T, page string) [][]string {
	t.Helper()
	table := regexp.MustCompile(`(?s)<table id="detected-table">.*?</table>`).FindString(page)
	var out [][]string
	for _, row := range regexp.MustCompile(`<tr><td>[A-Z]+-\d+ [^<]*</td>(.*?)</tr>`).FindAllStringSubmatch(table, -1) {
		var r []string
		for _, c := range regexp.MustCompile(`<td class="n">([^<]*)</td>`).FindAllStringSubmatch(row[1], -1) {
			r = append(r, c[1])
		}
		out = append(out, r)
	}
	if len(out) != len(catalogue.Defects) {
		t.Fatalf("report.html's detected table has %d rows", len(out))
	}
	return out
}

// halfWay writes a run's progress half-way: the weak tool's first
// three trials ended, its fourth running, the rest queued.
func halfWay(t testing.TB, dir string, started time.Time) {
	t.Helper()
	ts, err := trials.LoadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := trials.Progress{Where: "local", Start: started.Add(-time.Minute), Updated: started}
	for _, tr := range ts {
		if tr.Tool != "weak" {
			continue
		}
		tp := trials.TrialProgress{Tool: tr.Tool, Number: tr.Number, Seed: tr.Seed, Dir: tr.Dir, Budget: 60, State: trials.StateQueued}
		switch {
		case tr.Number <= 3:
			tp.State = trials.StateEnded
		case tr.Number == 4:
			tp.State, tp.Start = trials.StateRunning, &started
			tp.Live = &trials.Live{At: started, Requests: 12, Reached: []catalogue.ID{"SEC-01", "ERR-01"}, Triggered: []catalogue.ID{"SEC-01"}}
		}
		p.Trials = append(p.Trials, tp)
	}
	if err := trials.WriteProgress(dir, p); err != nil {
		t.Fatal(err)
	}
}

// Half-way: the ended trials from their records, the running one with its
// elapsed time and live stages, the queued ones waiting; not ended, no
// report even where a file of that name lies in the folder.
func TestHalfWay(t *testing.T) {
	dir := copyRun(t)
	started := time.Now().Add(-7 * time.Second).UTC()
	halfWay(t, dir, started)
	if err := os.WriteFile(filepath.Join(dir, trials.ReportHTML), []byte("an old page"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Dir: dir})
	defer w.Close()
	s := w.State()
	if s.Ended || s.Report || s.Where != "local" || s.Start == nil {
		t.Errorf("ended %v, report %v, where %q", s.Ended, s.Report, s.Where)
	}
	want := map[string]int{trials.StateEnded: 3, trials.StateRunning: 1, trials.StateQueued: 6, trials.StateNotRun: 0, trials.StateCancelled: 0}
	for st, n := range want {
		if s.Counts[st] != n {
			t.Errorf("%s: %d, want %d", st, s.Counts[st], n)
		}
	}
	if len(s.Tools) != 1 || s.Tools[0].Ran != 3 || s.Tools[0].Trials != 10 {
		t.Fatalf("tools: %+v", s.Tools)
	}
	run := s.Trials[3]
	if run.State != trials.StateRunning || run.Elapsed < 7 || run.Elapsed > 60 || run.Live == nil || len(run.Live.Triggered) != 1 {
		t.Errorf("the running trial: %+v", run)
	}
	if ended := s.Trials[0]; ended.Outcome == "" || ended.Elapsed != ended.Seconds || ended.Start == nil {
		t.Errorf("an ended trial from its record: %+v", ended)
	}
	for _, tile := range s.Tools[0].Tiles {
		if tile.Of != 3 || !strings.HasPrefix(tile.Text, fmt.Sprintf("%d/3 · ", tile.Detected)) {
			t.Errorf("%s: of %d, want the 3 ended", tile.ID, tile.Of)
		}
	}
}

// The metrics pass Prometheus's own linter (its naming conventions), and
// say the state half-way as the page does.
func TestMetrics(t *testing.T) {
	dir := copyRun(t)
	halfWay(t, dir, time.Now().UTC())
	w := New(Options{Dir: dir, Version: "test"})
	defer w.Close()
	c := collector{w}
	problems, err := testutil.CollectAndLint(c)
	if err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	expected := `
# HELP showcase_trials_trials The run's trials by tool and state: queued, running, ended, not run, cancelled.
# TYPE showcase_trials_trials gauge
showcase_trials_trials{state="cancelled",tool="weak"} 0
showcase_trials_trials{state="ended",tool="weak"} 3
showcase_trials_trials{state="not run",tool="weak"} 0
showcase_trials_trials{state="queued",tool="weak"} 6
showcase_trials_trials{state="running",tool="weak"} 1
# HELP showcase_trials_run_ended 1 once the run has ended (every trial has, or it was interrupted), 0 while it runs.
# TYPE showcase_trials_run_ended gauge
showcase_trials_run_ended 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(expected), "showcase_trials_trials", "showcase_trials_run_ended"); err != nil {
		t.Error(err)
	}
	s := w.State()
	det := 0
	for _, tile := range s.Tools[0].Tiles {
		det += tile.Detected
	}
	if got := testutil.CollectAndCount(c, "showcase_trials_detections_total"); got != 10 {
		t.Errorf("%d detection series, want one per defect", got)
	}
	if got := testutil.CollectAndCount(c, "showcase_trials_trial_seconds"); got != 4 {
		t.Errorf("%d trial_seconds series, want the 3 ended and the running one", got)
	}
	if det == 0 {
		t.Error("the three weak trials detected nothing")
	}
}

// The server: the page with the board's policy, its files, the state and
// the charts; a path it does not serve is a JSON 404, another method a
// JSON 405; report.html only once the run wrote it; at most MaxStreams
// event streams, one more refused with 503.
func TestHandler(t *testing.T) {
	dir := copyRun(t)
	halfWay(t, dir, time.Now().UTC())
	w := New(Options{Dir: dir, MaxStreams: 1, Interval: 10 * time.Millisecond})
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	defer w.Close()
	// The chart first, before anything read the state (a fresh -watch of
	// an ended run: CI met it so, when the paths below came in another order).
	if res, err := http.Get(srv.URL + PathChart); err != nil || res.StatusCode != 200 {
		t.Fatalf("the chart before the state was read: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	get := func(method, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for path, ct := range map[string]string{"/": "text/html", "/live/watch.js": "text/javascript", "/live/stream.js": "text/javascript", "/live/watch.css": "text/css", "/state": "application/json", "/chart.svg": "image/svg+xml", "/metrics": "text/plain"} {
		res := get(http.MethodGet, path)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ct) {
			t.Errorf("GET %s: %s %s", path, res.Status, res.Header.Get("Content-Type"))
		}
		if path == "/" && !strings.Contains(res.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("the page's policy: %q", res.Header.Get("Content-Security-Policy"))
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/nope", 404}, {"GET", "/live/index.html", 404}, {"GET", "/live/none.js", 404}, {"POST", "/state", 405}, {"DELETE", "/", 405},
		{"GET", "/report.html", 404}, {"GET", "/cd.svg", 404}} {
		res := get(c.method, c.path)
		var e struct{ Error string }
		if res.StatusCode != c.status || json.NewDecoder(res.Body).Decode(&e) != nil || e.Error == "" {
			t.Errorf("%s %s: %s, error %q; want %d with a JSON error", c.method, c.path, res.Status, e.Error, c.status)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, trials.ReportHTML), []byte("<!DOCTYPE html><p>the report</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := get("GET", "/report.html"); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "style-src 'unsafe-inline'") {
		t.Errorf("report.html: %s, policy %q", res.Status, res.Header.Get("Content-Security-Policy"))
	}

	// One stream: its first event is the state; a second is refused.
	res := get("GET", "/events")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s", res.Status)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var event, data string
	for sc.Scan() && data == "" {
		if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = v
		}
	}
	var s State
	if event != "state" || json.Unmarshal([]byte(data), &s) != nil || s.Counts[trials.StateRunning] != 1 {
		t.Errorf("the first event: %q %.80s", event, data)
	}
	if res := get("GET", "/events"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a second stream past MaxStreams 1: %s", res.Status)
	}
}

// A folder with nothing in it yet says so, and serves.
func TestEmptyFolder(t *testing.T) {
	w := New(Options{Dir: t.TempDir()})
	defer w.Close()
	s := w.State()
	if s.Problem == "" || s.Ended || len(s.Trials) != 0 || len(s.Defects) != 10 {
		t.Errorf("an empty folder: %+v", s)
	}
}

// Three tools: the critical-difference diagram is drawn beside the step
// chart, and served; a trial ending draws both again.
func TestThreeToolsDrawTheCDDiagram(t *testing.T) {
	dir := copyRun(t)
	if err := os.CopyFS(filepath.Join(dir, "schemathesis"), os.DirFS("../testdata/schemathesis-4.9.5-trials/ten-trials/schemathesis")); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Dir: dir})
	defer w.Close()
	s := w.State()
	if len(s.Tools) != 3 || !s.CD || s.Charts == "" {
		t.Fatalf("%d tools, cd %v, charts %q", len(s.Tools), s.CD, s.Charts)
	}
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	for _, p := range []string{PathChart, PathCD} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body := new(strings.Builder)
		_, _ = bufio.NewReader(res.Body).WriteTo(body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(body.String(), "<svg") {
			t.Errorf("GET %s: %s, %.60s", p, res.Status, body.String())
		}
	}
	// One trial fewer (its record gone): other charts.
	if err := os.Remove(filepath.Join(dir, "weak", "trial-10", trials.RecordFile)); err != nil {
		t.Fatal(err)
	}
	if again := w.State(); again.Charts == s.Charts || again.Counts[trials.StateEnded] != s.Counts[trials.StateEnded]-1 {
		t.Errorf("after a record went: charts %q (was %q), %d ended", again.Charts, s.Charts, again.Counts[trials.StateEnded])
	}
}

// With coverage recorded: the tool's header says its coverage over the
// ended trials, each trial its own (the running one's so far), the
// coverage's growth is drawn at coverage.svg, and /metrics exports each
// trial's; without, none of it, and coverage.svg is a JSON 404.
func TestCoverageShown(t *testing.T) {
	plain := New(Options{Dir: copyRun(t)})
	defer plain.Close()
	if s := plain.State(); s.Coverage || s.Tools[0].Coverage != "" {
		t.Errorf("a run without coverage: %v %q", s.Coverage, s.Tools[0].Coverage)
	}
	rec := httptest.NewRecorder()
	plain.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, PathCoverageChart, nil))
	if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Body.String(), `{"error":`) {
		t.Errorf("coverage.svg without coverage: %d %s", rec.Code, rec.Body)
	}

	dir := copyRun(t)
	ts, err := trials.LoadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		n := 10 + tr.Number
		tr.Coverage = &trials.TrialCoverage{Kind: trials.CoverageAPI, TCL: 1, MaxTCL: 6, Targets: n, Of: 119,
			Criteria: []coverage.Criterion{{Name: coverage.Paths, Level: 1, Covered: n, Total: 119}},
			Series:   []trials.CoveragePoint{{After: 0.5, Targets: 5}, {After: 1, Targets: n}}}
		if err := trials.WriteRecord(dir, tr); err != nil {
			t.Fatal(err)
		}
	}
	halfWay(t, dir, time.Now().UTC())
	p, err := trials.ReadProgress(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Trials {
		if p.Trials[i].Live != nil {
			p.Trials[i].Live.Coverage = &trials.LiveCoverage{TCL: 0, MaxTCL: 6, Targets: 7, Of: 119}
		}
	}
	if err := trials.WriteProgress(dir, *p); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Dir: dir, Version: "test"})
	defer w.Close()
	s := w.State()
	// The weak tool's three ended trials covered 11, 12 and 13 targets.
	if want := "API coverage: median 12 of 119 targets, TCL 1 (3 trials)"; s.Tools[0].Coverage != want || !s.Coverage {
		t.Errorf("the header says %q (drawn %v), want %q", s.Tools[0].Coverage, s.Coverage, want)
	}
	if c := s.Trials[0].Coverage; c == nil || c.Targets != 11 {
		t.Errorf("ended trial 1's coverage %+v", c)
	}
	rec = httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, PathCoverageChart, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(rec.Body.String(), "API coverage over time") {
		t.Errorf("coverage.svg: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	c := collector{w}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	expected := `
# HELP showcase_trials_api_coverage_targets The API coverage targets (all criteria) a trial's requests covered: so far while it runs, at its end once ended; where the run records coverage.
# TYPE showcase_trials_api_coverage_targets gauge
showcase_trials_api_coverage_targets{tool="weak",trial="1"} 11
showcase_trials_api_coverage_targets{tool="weak",trial="2"} 12
showcase_trials_api_coverage_targets{tool="weak",trial="3"} 13
showcase_trials_api_coverage_targets{tool="weak",trial="4"} 7
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(expected), "showcase_trials_api_coverage_targets"); err != nil {
		t.Error(err)
	}
}

// A trial's spurious findings reach the page and the metrics: its tile
// says them beside the detections, which leave them out, and
// showcase_trials_spurious_findings_total counts them.
func TestSpuriousOnThePage(t *testing.T) {
	dir := copyRun(t)
	halfWay(t, dir, time.Now().UTC())
	tr, err := trials.ReadRecord(dir, "weak/trial-02")
	if err != nil {
		t.Fatal(err)
	}
	last := len(tr.Stages) - 1
	tr.Stages[last].Detected, tr.Stages[last].DetectedAfter, tr.Stages[last].DetectedOrder = false, nil, 0
	tr.Stages[last].Spurious, tr.Stages[last].SpuriousWhy = 3, "never triggered in the trial"
	if err := trials.WriteRecord(dir, *tr); err != nil {
		t.Fatal(err)
	}
	w := New(Options{Dir: dir, Version: "test"})
	defer w.Close()
	tile := w.State().Tools[0].Tiles[last]
	if tile.ID != tr.Stages[last].ID || tile.Spurious != 3 || !strings.HasSuffix(tile.Text, "· 3 spurious") {
		t.Errorf("the tile: %+v", tile)
	}
	var want strings.Builder
	want.WriteString("# HELP showcase_trials_spurious_findings_total The findings of the defect in a tool's ended trials that were spurious: the trial's instance never triggered it, or the report has them before its first trigger. Not detections.\n")
	want.WriteString("# TYPE showcase_trials_spurious_findings_total counter\n")
	for _, d := range catalogue.Defects {
		n := 0
		if d.ID == tile.ID {
			n = 3
		}
		fmt.Fprintf(&want, "showcase_trials_spurious_findings_total{defect=%q,tool=\"weak\"} %d\n", d.ID, n)
	}
	c := collector{w}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want.String()), "showcase_trials_spurious_findings_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "showcase_trials_spurious_findings_total"); n != 10 {
		t.Errorf("%d spurious series, want one per defect", n)
	}
}
