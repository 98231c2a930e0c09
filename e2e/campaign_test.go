package e2e_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
)

// A campaign of the reference and weak tools, watched live in a real
// headless Chromium (showcase-trials -serve), and scraped by a real
// Prometheus with the shipped deploy/prometheus/prometheus.yml:
//
//   - before any trial has ended every tile says 0/0, and the first
//     trial, held at a gate the test opens, shows its elapsed time
//     growing;
//   - the tiles go to k of n as trials end, without a reload, a running
//     trial shows what its instance has seen, and the step chart is
//     redrawn;
//   - L gives the projector's larger text, which still fits a 1024-pixel
//     projector;
//   - the ended run's page, and a page opened after it, say what
//     report.html says, tile for tile;
//   - Prometheus has the run's progress (the job showcase-trials), its
//     coverage included (each trial's instance the cover build), and
//     showcase-dashboard draws the dashboard's Campaign row from it, every
//     panel with data.
//
// Nothing leaves loopback and the console stays clean. The screenshot
// half-way is out/browser/campaign-half-way.png (docs/trials-live.png).
func TestCampaignInBrowser(t *testing.T) {
	chromium := findChromium(t)
	requireTool(t, "prometheus")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	trialsBin := buildBinary(t, modulePath+"judge/cmd/showcase-trials")
	replay := buildBinary(t, modulePath+"judge/cmd/showcase-replay")
	dashboardBin := buildBinary(t, modulePath+"tools/cmd/showcase-dashboard")
	// Each trial's instance is the cover build, so that the run exports
	// its statements covered, as the dashboard's Campaign row draws them.
	coverGateway := coverBinary(t, "gateway")
	dir := t.TempDir()
	out, gate := filepath.Join(dir, "run"), filepath.Join(dir, "gate")

	// The reference tool's trials wait for the gate; the weak tool pauses
	// up to 1.5 s before each defect, so that its trials are seen running.
	cmd := exec.Command(trialsBin, "-out", out, "-serve", "127.0.0.1:0", "-coverage", "code", "-cover-binary", coverGateway, "-coverage-every", "1s",
		"-tool", "reference", "-trials", "3", "-budget", "1m", "--",
		"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.1; done; exec "$@"`, gate, replay, "-base", "{url}", "-out", "{out}/report.csv",
		"-tool", "weak", "-trials", "3", "-budget", "1m", "--",
		replay, "-weak", "-pause", "1500ms", "-seed", "{seed}", "-base", "{url}", "-out", "{out}/report.csv")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var logMu sync.Mutex
	var logs strings.Builder
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if _, u, ok := strings.Cut(sc.Text(), "live page: "); ok {
				u, _, _ = strings.Cut(u, " ")
				urls <- u
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	showLog := func() string { logMu.Lock(); defer logMu.Unlock(); return logs.String() }
	var page string
	select {
	case page = <-urls:
	case err := <-exited:
		t.Fatalf("showcase-trials exited (%v):\n%s", err, showLog())
	case <-time.After(30 * time.Second):
		t.Fatalf("showcase-trials did not serve its page:\n%s", showLog())
	}

	// The shipped scrape configuration, its showcase-trials job pointed at
	// this run's page, every second.
	cfg, err := os.ReadFile("../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(page, "http://"), "/")
	if !strings.Contains(string(cfg), "- 127.0.0.1:9095") {
		t.Fatal("deploy/prometheus/prometheus.yml has no target 127.0.0.1:9095 for showcase-trials -serve")
	}
	shipped := strings.NewReplacer("- 127.0.0.1:9095", "- "+addr, "scrape_interval: 5s", "scrape_interval: 1s").Replace(string(cfg))
	prom := startPrometheusWith(t, shipped)

	trap := startTrap(t)
	b := newBrowser(t, chromium, trap.URL)
	js := func(what, expr string) string {
		t.Helper()
		return get(t, b, what, chromedp.Evaluate[string](expr))
	}
	waitJS := func(what, cond string, within time.Duration) {
		t.Helper()
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(within))); err != nil {
			t.Fatalf("%s: %v (the page: %.300s)\n%s", what, err, js("the page", `document.body.innerText`), showLog())
		}
	}
	tileText := func(tool string, id catalogue.ID) string {
		return `document.querySelector("#tile-` + tool + `-` + string(id) + ` .k").textContent`
	}
	b.do(t, "open the run's page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#trials")))
	waitJS("the connection", `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	waitJS("the first trial running", `document.querySelector("#trial-reference-1")?.dataset.state === "running"`, 30*time.Second)
	for _, tool := range []string{"reference", "weak"} {
		for _, d := range catalogue.Defects {
			if got := js("a tile", tileText(tool, d.ID)); got != "0/0" {
				t.Errorf("%s, %s before any trial ended: %q, want 0/0", tool, d.ID, got)
			}
		}
	}
	if js("the charts", `String(document.querySelector("#step-figure").hidden)`) != "true" {
		t.Error("a chart is shown before any trial ended")
	}
	// The held trial's elapsed time grows on the page.
	elapsedRe := regexp.MustCompile(`^running (\d+) s of 1:00$`)
	stateOf := `document.querySelector("#trial-reference-1 .state").textContent`
	first := elapsedRe.FindStringSubmatch(js("the elapsed time", stateOf))
	if first == nil {
		t.Fatalf("the running trial says %q", js("the elapsed time", stateOf))
	}
	n0, _ := strconv.Atoi(first[1])
	waitJS("the elapsed time growing", fmt.Sprintf(`(m => m && Number(m[1]) >= %d)(%s.match(/^running (\d+) s of 1:00$/))`, n0+2, stateOf), 10*time.Second)
	t.Logf("the held trial: %q, then %q", first[0], js("the elapsed time", stateOf))

	// The projector: L, larger text that still fits 1024 pixels; L again.
	b.do(t, "press L", chromedp.KeyEvent("l"))
	if js("larger", `String(document.documentElement.classList.contains("larger")) + document.querySelector("#larger").getAttribute("aria-pressed")`) != "truetrue" {
		t.Error("L did not give the larger text")
	}
	b.do(t, "a projector's window", chromedp.EmulateViewport(1024, 768))
	if w := get(t, b, "the page's width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 1024 {
		t.Errorf("with the larger text the page is %d pixels wide in a 1024-pixel window", w)
	}
	b.do(t, "back", chromedp.EmulateViewport(1280, 1600), chromedp.KeyEvent("L"))
	if js("larger", `String(document.documentElement.classList.contains("larger"))`) != "false" {
		t.Error("L again did not undo the larger text")
	}
	// Keyboard: Tab reaches the button, Enter presses it.
	js("nothing focused", `(document.activeElement.blur(), "")`)
	b.do(t, "tab to the button", chromedp.KeyEvent(kb.Tab))
	if js("focus", `document.activeElement.id`) != "larger" {
		t.Errorf("the first Tab focuses %q, want the larger-text button", js("focus", `document.activeElement.id`))
	}
	b.do(t, "press it", chromedp.KeyEvent(kb.Enter))
	if js("larger", `String(document.documentElement.classList.contains("larger"))`) != "true" {
		t.Error("Enter on the button did not give the larger text")
	}
	b.do(t, "and back", chromedp.KeyEvent(kb.Enter))

	// Open the gate: the tiles go to k of n as trials end.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitJS("reference SEC-01 after its first trial", tileText("reference", "SEC-01")+` === "1/1"`, 60*time.Second)
	waitJS("the step chart drawn", `document.querySelector("#step").naturalWidth > 0`, 10*time.Second)
	firstChart := js("the chart", `document.querySelector("#step").getAttribute("src")`)
	// Half-way: a weak trial ended and the next running, with what its
	// instance has seen.
	liveRe := `/^reached \d+ · triggered \d+ · [\d,]+ requests · coverage \d+\/119 · TCL \d$/`
	waitJS("a weak trial ended, the next running with its instance's stages", `document.querySelector("#trial-weak-1").dataset.state === "ended" && Array.from(document.querySelectorAll("#trials li[data-state=running][id^=trial-weak] .live")).some(e => `+liveRe+`.test(e.textContent))`, 90*time.Second)
	b.screenshot(t, "campaign-half-way")
	t.Logf("half-way: %s", js("the facts", `document.querySelector(".facts").innerText.replace(/\n/g, " ")`))
	if got := js("reference SEC-01", tileText("reference", "SEC-01")); got != "3/3" && got != "2/2" && got != "1/1" {
		t.Errorf("reference SEC-01 half-way: %q", got)
	}

	waitJS("the run ended", `document.querySelector("#summary").textContent === "The run has ended: its report is written."`, 3*time.Minute)
	if js("the chart", `document.querySelector("#step").getAttribute("src")`) == firstChart {
		t.Error("the step chart was not redrawn as trials ended")
	}
	tilesJS := `Object.fromEntries(Array.from(document.querySelectorAll("td.tile")).map(td => [td.id, td.querySelector(".k").textContent + " · " + td.querySelector(".median").textContent]))`
	ended := get(t, b, "the tiles", chromedp.Evaluate[map[string]string](tilesJS))
	report, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	want := detectedCells(t, string(report), []string{"reference", "weak"})
	if len(ended) != 20 {
		t.Errorf("%d tiles at the end, want 20", len(ended))
	}
	for id, w := range want {
		if ended[id] != w {
			t.Errorf("%s: the page says %q, report.html %q", id, ended[id], w)
		}
	}
	if !strings.HasPrefix(want["tile-reference-PERF-02"], "3/3 · ") {
		t.Errorf("the reference tool, PERF-02: %q, want 3/3", want["tile-reference-PERF-02"])
	}
	// A page opened after the run shows the same.
	b.do(t, "open the page again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#tile-weak-SEC-01")))
	waitJS("the ended run again", `document.querySelector("#summary").textContent === "The run has ended: its report is written."`, 10*time.Second)
	if again := get(t, b, "the tiles", chromedp.Evaluate[map[string]string](tilesJS)); fmt.Sprint(again) != fmt.Sprint(ended) {
		t.Errorf("a page opened after the run:\n%v\nwant\n%v", again, ended)
	}
	// The headers say each tool's coverage over its ended trials, the
	// trials theirs: the reference tool's is what its requests imply.
	if got := js("the reference tool's coverage", `document.querySelector("#grid thead th:nth-child(2) .coverage").textContent`); !regexp.MustCompile(`^API coverage: median 65 of 119 targets, TCL 2, \d+ of \d+ statements \(3 trials\)$`).MatchString(got) {
		t.Errorf("the reference tool's header says %q", got)
	}
	if got := js("a reference trial", `document.querySelector("#trial-reference-1 .outcome").textContent`); !strings.HasSuffix(got, " · coverage 65/119 · TCL 2") {
		t.Errorf("reference trial 1 says %q", got)
	}
	waitJS("the coverage's growth drawn", `!document.querySelector("#coverage-figure").hidden && document.querySelector("#coverage").naturalWidth > 0`, 10*time.Second)
	b.do(t, "the report link", chromedp.Click(chromedp.CSS("#report-link")), chromedp.WaitVisible(chromedp.CSS("#detected-table")))
	if got := js("the report's coverage", `document.querySelector("#coverage") ? document.querySelector("#coverage").textContent : ""`); got != "Coverage" {
		t.Errorf("report.html has no coverage section: %q", got)
	}

	// Prometheus scraped the run: the job of the shipped configuration up,
	// every trial ended, the reference tool's thirty detections.
	prom.waitFor(t, `up{job="showcase-trials"}`, 1)
	prom.waitFor(t, `sum(showcase_trials_trials{state="ended"})`, 6)
	prom.waitFor(t, `sum(showcase_trials_detections_total{tool="reference"})`, 30)
	prom.waitFor(t, `showcase_trials_run_ended`, 1)
	prom.waitFor(t, `sum(showcase_trials_api_coverage_targets{tool="reference"})`, 3*65)
	prom.waitFor(t, `count(showcase_trials_statements_covered{tool="reference"} > 0)`, 3)
	picture := filepath.Join(artifacts, "dashboard-campaign.png")
	drawn, err := exec.Command(dashboardBin, "-prometheus", prom.base, "-dashboard", "../deploy/grafana/showcase-dashboard.json",
		"-row", "Campaign", "-since", "3m", "-step", "1s", "-o", picture).CombinedOutput()
	if err != nil {
		t.Fatalf("showcase-dashboard -row Campaign: %v\n%s", err, drawn)
	}
	// Every panel has data but the mutation score's: this campaign plants
	// only the ten (TestMutationScore reads the metrics it queries).
	lines := regexp.MustCompile(`(?m)^(.*?) +(\d+) series$`).FindAllStringSubmatch(string(drawn), -1)
	empty := 0
	for _, l := range lines {
		if l[2] == "0" && l[1] != "Mutation score, by tool" {
			empty++
		}
	}
	if len(lines) != 7 || empty > 0 {
		t.Errorf("the dashboard's Campaign row, by Prometheus's answers during the run:\n%s", drawn)
	}
	t.Logf("the Campaign row: %s\n%s", picture, drawn)

	// Interrupted, it stops serving and exits 0.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("showcase-trials after SIGINT: %v\n%s", err, showLog())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("showcase-trials did not stop on SIGINT")
	}
	b.checkStayedOnLoopback(t, trap, 8)
}

// A run of mutant sets on the live page (showcase-trials -watch), in
// Chromium: docs/trials.md's worked run, from its records. The grid of
// the ten is left out, and the mutation table (each tool's score and its
// survivors in the three groups) says what the summary says, row for row.
// The screenshot is out/browser/campaign-mutants.png.
func TestMutationScoreInBrowser(t *testing.T) {
	chromium := findChromium(t)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	trialsBin := buildBinary(t, modulePath+"judge/cmd/showcase-trials")
	mutRun, err := filepath.Abs("../judge/trials/testdata/mutant-trials")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := trials.LoadTrials(mutRun)
	if err != nil {
		t.Fatal(err)
	}
	var wantRows []string
	for _, tm := range trials.Summarize(recs, 0).Mutation.Tools {
		sv := tm.Total()
		wantRows = append(wantRows, fmt.Sprintf("%s %d %s %d %d %d", tm.Tool, tm.Trials, tm.Score.Text(), sv.NotReached, sv.NotTriggered, sv.NotReported))
	}
	mutPage := watchPage(t, trialsBin, mutRun)
	trap := startTrap(t)
	b := newBrowser(t, chromium, trap.URL)
	b.do(t, "the mutant run's page", chromedp.Navigate(mutPage), chromedp.WaitVisible(chromedp.CSS("#mutation-replay")))
	rowsJS := `Array.from(document.querySelectorAll("#mutation-table tbody tr")).map(tr => Array.from(tr.cells).map(c => c.textContent).join(" "))`
	if got := get(t, b, "the mutation table", chromedp.Evaluate[[]string](rowsJS)); strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("the live page's mutation score:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
	if got := get(t, b, "the ten's grid", chromedp.Evaluate[string](`[document.querySelector("#ten").hidden, document.querySelector("#mutation").hidden, document.querySelector("#over-time").hidden].join(" ")`)); got != "true false true" {
		t.Errorf("the mutant run's page: the ten's grid, the mutation score and the ten's chart hidden: %s, want true false true", got)
	}
	b.screenshot(t, "campaign-mutants")
	b.checkStayedOnLoopback(t, trap, 3)
}

// detectedCells are report.html's "Detected, per defect" by tile: the id
// the live page gives a tool's tile for a defect, and the cell's text.
func detectedCells(t *testing.T, page string, tools []string) map[string]string {
	t.Helper()
	table := regexp.MustCompile(`(?s)<table id="detected-table">.*?</table>`).FindString(page)
	rows := regexp.MustCompile(`<tr><td>([A-Z]+-\d+) [^<]*</td>(.*?)</tr>`).FindAllStringSubmatch(table, -1)
	if len(rows) != len(catalogue.Defects) {
		t.Fatalf("report.html's detected table: %d rows", len(rows))
	}
	out := map[string]string{}
	for _, r := range rows {
		cells := regexp.MustCompile(`<td class="n">([^<]*)</td>`).FindAllStringSubmatch(r[2], -1)
		if len(cells) != len(tools) {
			t.Fatalf("report.html's detected table, %s: %d cells", r[1], len(cells))
		}
		for i, tool := range tools {
			out["tile-"+tool+"-"+r[1]] = cells[i][1]
		}
	}
	return out
}
