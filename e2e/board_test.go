package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/board"
	"github.com/defectshowcase/showcase/judge/score"
)

// The live board in a real headless Chromium, one process and split: the
// SEC-01 tile goes from "not reached" to "triggered" when its trigger is
// sent (no reload), the reset button clears it, and a real Schemathesis
// report picked on the page gets, verdict for verdict, the scorecard the
// scorer gives it against the same instance. Nothing leaves loopback and
// the console stays clean. With -update the embedded board's screenshot
// mid-run becomes docs/web-board.png.
func TestBoardInBrowser(t *testing.T) {
	chromium := findChromium(t)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	report, err := filepath.Abs("../judge/score/testdata/samples/schemathesis-4.9.5/defects-all-seed3/report.ndjson.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []bool{false, true} {
		name := map[bool]string{false: "embedded", true: "split"}[split]
		t.Run(name, func(t *testing.T) {
			api, admin := startGateway(t, split, catalogue.All())
			trap := startTrap(t)
			b := newBrowser(t, chromium, trap.URL)
			tile := func(id catalogue.ID) string {
				return `document.querySelector("#tile-` + string(id) + ` .state").textContent`
			}
			waitText := func(what, js, want string) {
				t.Helper()
				if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js+` === "`+want+`"`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
					got, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
					t.Fatalf("%s: %q, want %q (%v)", what, got, want, err)
				}
			}
			b.do(t, "open the board", chromedp.Navigate(admin+"/"), chromedp.WaitVisible(chromedp.CSS("#tile-SEC-01")))
			waitText("the connection", `document.querySelector("#conn").textContent`, "live")
			waitText("SEC-01 before any request", tile(catalogue.SEC01), "not reached")
			for _, target := range []string{"/security/unauthenticated-access", "/response-conformance/missing-field", "/internal-server-errors/improper-input-type-handling"} {
				var res *http.Response
				var err error
				if strings.HasPrefix(target, "/internal-server-errors/") {
					res, err = http.Post(api+target, "application/json", strings.NewReader(`{"age":"x"}`))
				} else {
					res, err = http.Get(api + target)
				}
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
			}
			waitText("SEC-01 after its trigger", tile(catalogue.SEC01), "triggered")
			waitText("CONF-03 after its trigger", tile(catalogue.CONF03), "triggered")
			waitText("PERF-02, never asked", tile(catalogue.PERF02), "not reached")
			if !split {
				b.screenshot(t, "board-mid-run")
			}
			// A real report, picked with the file chooser: the scorer's
			// verdicts against this instance's ground truth as it is now.
			b.do(t, "pick the report", chromedp.SetUploadFiles(chromedp.CSS("#report"), []string{report}))
			waitText("the scorecard", `document.querySelector("#scored-headline").textContent.slice(0, 20)`, "Schemathesis 4.9.5: ")
			verdicts := get(t, b, "the verdicts", chromedp.Evaluate[map[string]string](`Object.fromEntries(Array.from(document.querySelectorAll("#scored-rows tr[id]")).map(r => [r.id.slice(8), r.querySelector(".verdict").textContent]))`))
			res, err := http.Get(admin + gateway.PathDefects)
			if err != nil {
				t.Fatal(err)
			}
			truth, _ := io.ReadAll(res.Body)
			res.Body.Close()
			inst, err := score.ParseExposure("defects.json", truth)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := score.ReadFile(report, score.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := score.Score(rep, inst, nil)
			for _, d := range want.Defects {
				if verdicts[string(d.ID)] != d.Verdict() {
					t.Errorf("%s: the board says %q, the scorer %q", d.ID, verdicts[string(d.ID)], d.Verdict())
				}
			}
			if verdicts["SEC-01"] != "reported" || verdicts["PERF-02"] != "reported, never triggered" {
				v, _ := json.Marshal(verdicts)
				t.Errorf("verdicts %s", v)
			}
			if !split {
				b.screenshot(t, "board-scored")
			}
			b.do(t, "reset", chromedp.Click(chromedp.CSS("#reset")))
			waitText("SEC-01 after the reset", tile(catalogue.SEC01), "not reached")
			waitText("the requests after the reset", `document.querySelector("#requests").textContent`, "0")
			// A narrow window (a phone, a window beside the tool's): one
			// column, nothing wider than the window.
			b.do(t, "a narrow window", chromedp.EmulateViewport(400, 900))
			if w := get(t, b, "the page's width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 400 {
				t.Errorf("in a 400-pixel window the page is %d pixels wide", w)
			}
			b.checkStayedOnLoopback(t, trap, 5) // the page, its two files, the state, the stream, the score, the reset
		})
	}
	// A mutant set: a tile per mutant, named by its operator and
	// condition, and none for the ten, which are off by setting.
	t.Run("mutants", func(t *testing.T) {
		set := catalogue.Mutants(7, catalogue.DefaultMutants)
		api, admin := startGateway(t, false, set)
		trap := startTrap(t)
		b := newBrowser(t, chromium, trap.URL)
		tile := func(id catalogue.ID) string {
			return `(document.getElementById("tile-` + string(id) + `") || {querySelector: () => ({textContent: "no tile"})}).querySelector(".state").textContent`
		}
		m := set.Mutants()[0]
		b.do(t, "open the board", chromedp.Navigate(admin+"/"), chromedp.WaitVisible(chromedp.CSS(".tile")))
		if n := get(t, b, "the tiles", chromedp.Evaluate[int](`document.querySelectorAll(".tile").length`)); n != set.N() {
			t.Errorf("%d tiles for %d mutants", n, set.N())
		}
		if name := get(t, b, "a tile's name", chromedp.Evaluate[string](`document.getElementById("tile-`+string(m.ID())+`").querySelector(".title").textContent`)); !strings.HasPrefix(name, m.Operator.Name+" · "+m.Condition()) {
			t.Errorf("%s's tile is named %q", m.ID(), name)
		}
		tr := m.Defect().Triggers[0]
		req, _ := http.NewRequest(m.Endpoint().Method, api+m.Defect().Target(tr), strings.NewReader(tr.Body))
		if name, value, ok := strings.Cut(tr.Header, ":"); ok {
			req.Header.Set(name, strings.TrimSpace(value))
		}
		if tr.Body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](tile(m.ID())+` === "triggered"`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
			got, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](tile(m.ID())))
			t.Errorf("%s after its trigger: %q (%v)", m.ID(), got, err)
		}
		b.screenshot(t, "board-mutants")
		if summary := get(t, b, "the summary", chromedp.Evaluate[string](`document.querySelector("#summary").textContent`)); !strings.HasSuffix(summary, " of 10 operations reached.") {
			t.Errorf("the summary: %q", summary)
		}
		b.checkStayedOnLoopback(t, trap, 4) // the page, its files, the state, the stream
	})
}

// checkBoard: a deployment's admin port serves the live board as one
// process does: the page with its policy, the state (how it runs, what
// it counted), the stream's first state, and a report scored.
func checkBoard(t *testing.T, client *http.Client, admin string, split bool) {
	t.Helper()
	res, err := client.Get(admin + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(string(page), "board/board.js") {
		t.Errorf("the board: %s %q", res.Status, res.Header.Get("Content-Security-Policy"))
	}
	status, body := fetch(t, client, admin+board.PathState)
	var s board.State
	if status != 200 || json.Unmarshal(body, &s) != nil || s.Truth.Requests == nil || len(s.Truth.Defects) != len(catalogue.Defects) {
		t.Fatalf("%s: %d %s", board.PathState, status, body)
	}
	if strings.HasPrefix(s.Mode, "split: ") != split {
		t.Errorf("the board says it runs as %q; split %v", s.Mode, split)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, admin+board.PathEvents, nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(res.Body)
	var streamed board.State
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: no state: %v", board.PathEvents, err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if err := json.Unmarshal([]byte(data), &streamed); err != nil || streamed.Mode != s.Mode {
				t.Errorf("%s: the first state: %v %q", board.PathEvents, err, data)
			}
			break
		}
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("%s: %s %s", board.PathEvents, res.Status, res.Header.Get("Content-Type"))
	}
	report := "method,path,class\nGET,/security/unauthenticated-access,auth-bypass\n"
	res, err = client.Post(admin+board.PathScore+"?name=r.csv", "text/csv", strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	scored, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// SEC-01 reported: the scorer's verdict with the defect on; switched
	// off, "off" and the finding unplanted.
	var sc board.Scored
	on := s.Truth.Setting != "none"
	if res.StatusCode != 200 || json.Unmarshal(scored, &sc) != nil || len(sc.Verdicts) != len(catalogue.Defects) ||
		on && !strings.HasPrefix(sc.Verdicts[0].Verdict, "reported") || !on && (sc.Verdicts[0].Verdict != "off" || sc.Unplanted != 1) {
		t.Errorf("%s (DEFECTS=%s): %s %s", board.PathScore, s.Truth.Setting, res.Status, scored)
	}
}

// The board in the real binaries, one process and five: what the
// deployments check, on make run's and make run-split's processes.
func TestBoardInTheBinaries(t *testing.T) {
	t.Parallel()
	for _, split := range []bool{false, true} {
		d := startDeployment(t, split)
		checkBoard(t, &http.Client{Timeout: time.Minute}, d.admins[0], split)
	}
	d := startDeployment(t, false, "DEFECTS=none")
	checkBoard(t, &http.Client{Timeout: time.Minute}, d.admins[0], false)
}
