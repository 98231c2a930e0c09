package e2e_test

import (
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
			b.checkStayedOnLoopback(t, trap, 5) // the page, its two files, the state, the stream, the score, the reset
		})
	}
}
