package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/judge/trials"
)

const samples = "../../score/testdata/samples/schemathesis-4.9.5/before-fidelity/"

// The command scores a report, with the active defects from -defects or
// from an instance's /defects (URL or file), which adds exposure.
func TestScores(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run([]string{"-baseline", samples + "defects-none-seed20240101/junit.xml", samples + "defects-all-seed20240101/report.ndjson.gz"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "9 of 10 planted defects reported, 0 unplanted, 3 false positives") {
		t.Errorf("output:\n%s", out.String())
	}

	// An instance where PERF-02 was never triggered and CONF-01 is off.
	truth := catalogue.GroundTruth(catalogue.All().Without(catalogue.CONF01))
	now := time.Now().UTC()
	truth.ExposureSince = &now
	for i := range truth.Defects {
		n := uint64(3)
		if truth.Defects[i].ID == catalogue.PERF02 || !truth.Defects[i].Active {
			n = 0
		}
		truth.Defects[i].Exposure = &catalogue.Exposure{Count: n}
		truth.Defects[i].Reached = &catalogue.Reached{Count: n, ByStatus: map[string]uint64{"2xx": n, "3xx": 0, "4xx": 0, "5xx": 0}}
	}
	body, _ := json.Marshal(truth)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer admin.Close()
	file := filepath.Join(t.TempDir(), "defects.json")
	_ = os.WriteFile(file, body, 0o644)
	for _, where := range []string{admin.URL + "/defects", file} {
		out.Reset()
		if err := run([]string{"-exposure", where, "-format", "json", samples + "defects-all-seed20240101/junit.xml"}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var sc score.Scorecard
		if err := json.Unmarshal([]byte(out.String()), &sc); err != nil {
			t.Fatal(err)
		}
		perf02, conf01 := sc.Defects[9], sc.Defects[4]
		if sc.Setting != truth.Setting || perf02.Exposed == nil || *perf02.Exposed || perf02.Verdict() != "missed, never reached" ||
			conf01.Active || len(sc.Unplanted) != 1 || sc.Unplanted[0].Operation.Path != conf01.Operation.Path {
			t.Errorf("%s: setting %s, PERF-02 %+v, CONF-01 %+v, unplanted %v", where, sc.Setting, perf02, conf01, sc.Unplanted)
		}
	}
}

// Several reports make a scoreboard, each with its own flags.
func TestScoreboard(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	err := run([]string{"-format", "text",
		"-baseline", samples + "defects-none-seed20240101/junit.xml", samples + "defects-all-seed20240101/junit.xml",
		"-tool", "Schemathesis 4.9.5 (seed 3)", "-defects", "all", samples + "defects-all-seed3/report.ndjson.gz"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scoreboard: 2 runs", "Schemathesis 4.9.5 (seed 3)", "9/10", "10/10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
}

// A report that cannot be read is an input error (exit 2) naming the file
// and line, and nothing is written; so are bad flags.
func TestRefuses(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.csv")
	_ = os.WriteFile(bad, []byte("method,path,class\nGET,/x,nonsense\n"), 0o644)
	var out strings.Builder
	err := run([]string{bad}, &out, io.Discard)
	var ie *score.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), bad+":2: ") || out.Len() != 0 {
		t.Errorf("%v, output %q", err, out.String())
	}
	// A report that is not there is an input error too.
	if err := run([]string{filepath.Join(t.TempDir(), "missing.sarif")}, &out, io.Discard); !errors.As(err, &ie) || !strings.Contains(err.Error(), "missing.sarif: no such file") {
		t.Errorf("a missing report: %v", err)
	}
	for _, args := range [][]string{
		{},
		{"-tool", "x"},
		{bad, "-tool", "x"},
		{"-format", "pdf", bad},
		{"-defects", "none", "-exposure", "x.json", bad},
		{"-defects", "NOPE-1", bad},
	} {
		var ue usageError
		if err := run(args, &out, io.Discard); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// Runs of showcase-trials made apart, given as folders, are compared as
// one run of both tools would be, each trial censored at its own budget; a
// tool of one name in two runs is named apart by its run; a mix of folders
// and reports, or one run given twice, is refused.
func TestCompareRuns(t *testing.T) {
	t.Parallel()
	run1, run2, run3 := t.TempDir(), t.TempDir(), t.TempDir()
	mk := func(tool string, budget float64, detected func(trial int) int) []trials.Trial {
		var ts []trials.Trial
		for i := 1; i <= 10; i++ {
			tr := trials.Trial{Tool: tool, Number: i, Outcome: "finished", Report: "r.csv", Requests: 20, Seconds: 5, Budget: budget}
			for j, d := range catalogue.Defects {
				at := float64(j) / 2
				st := trials.Stage{ID: d.ID, Reached: true, Triggered: true}
				if j < detected(i) {
					st.Detected, st.DetectedAfter = true, &at
				}
				tr.Stages = append(tr.Stages, st)
			}
			ts = append(ts, tr)
		}
		return ts
	}
	if err := trials.WriteRun(run1, mk("strong", 60, func(int) int { return 9 })); err != nil {
		t.Fatal(err)
	}
	if err := trials.WriteRun(run2, mk("feeble", 600, func(i int) int { return i % 4 })); err != nil {
		t.Fatal(err)
	}
	if err := trials.WriteRun(run3, mk("strong", 60, func(int) int { return 8 })); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-format", "markdown", run1, run2}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"strong finds more defects per trial than feeble: median 9 against 1.5, more in 10 of 10 trials by number, Â12 1.00, adjusted p < 0.001",
		"## strong: 10 trials, budget 60.0 s", "## feeble: 10 trials, budget 600.0 s",
		"Their budgets differ (strong has 60.0 s, feeble 600.0 s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the comparison lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run([]string{"-format", "json", run1, run3}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var s trials.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || len(s.Tools) != 2 || s.Tools[0].Tool != "strong ("+run1+")" || s.Tools[1].Tool != "strong ("+run3+")" {
		t.Errorf("two runs' strong: %v %+v", err, s.Tools)
	}
	out.Reset()
	if err := run([]string{"-format", "svg", run1, run2}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "<svg") {
		t.Errorf("svg: %v", err)
	}
	if err := run([]string{run1, samples + "defects-all-seed20240101/junit.xml"}, &out, io.Discard); err == nil {
		t.Error("a run and a report compared")
	}
	var ue usageError
	if err := run([]string{run1, run1}, &out, io.Discard); !errors.As(err, &ue) {
		t.Errorf("one run given twice: %v", err)
	}
}

// showcase-score is the instrument a reviewer runs on reports and runs:
// it links the scorer and the summary, and no service code (the runner,
// which starts instances, lives apart in trials/runner).
func TestLinksNoServiceCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, service := range []string{"/gateway", "-svc", "/platform/server", "/platform/observe", "/judge/trials/runner", "modernc.org/sqlite", "github.com/go-chi/"} {
			if strings.Contains(pkg, service) {
				t.Errorf("showcase-score links %s", pkg)
			}
		}
	}
}

// -coverage reads a saved /coverage into the scorecard; a file that is not
// one is refused, while an instance that serves none, asked by default from
// beside -exposure, leaves the scorecard without it.
func TestCoverageFlag(t *testing.T) {
	t.Parallel()
	rep := coverage.Report{Operations: []coverage.OperationCovered{{Method: "GET", Path: "/a", Requests: 1,
		StatusClasses: []coverage.ClassAnswered{{Class: "2XX", Answered: 1}, {Class: "4XX"}}}}}
	rep.Compute()
	body, _ := json.Marshal(rep)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "coverage.json"), filepath.Join(dir, "not.json")
	_ = os.WriteFile(good, body, 0o644)
	_ = os.WriteFile(bad, []byte(`{"version":0}`), 0o644)
	report := samples + "defects-all-seed20240101/junit.xml"
	var out strings.Builder
	if err := run([]string{"-coverage", good, "-format", "json", report}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var sc score.Scorecard
	if err := json.Unmarshal([]byte(out.String()), &sc); err != nil || sc.Coverage == nil || sc.Coverage.API == nil || sc.Coverage.API.TCL != rep.TCL || len(sc.Coverage.API.Criteria) != 9 {
		t.Fatalf("the scorecard's coverage: %+v %v", sc.Coverage, err)
	}
	if err := run([]string{"-coverage", bad, report}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "not an instance's /coverage") {
		t.Errorf("a file that is not a coverage: %v", err)
	}
	if err := run([]string{"-coverage", filepath.Join(dir, "missing.json"), report}, io.Discard, io.Discard); err == nil {
		t.Error("a missing file: no error")
	}
}
