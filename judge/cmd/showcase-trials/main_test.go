package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// replayBinary builds showcase-replay.
func replayBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "showcase-replay")
	if out, err := exec.Command("go", "build", "-o", bin, "../showcase-replay").CombinedOutput(); err != nil {
		t.Fatalf("go build showcase-replay: %v\n%s", err, out)
	}
	return bin
}

func readSummary(t *testing.T, dir string) trials.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, trials.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	var s trials.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Ten trials of the reference tool and ten of the weak one, each against a
// fresh instance, with no outside tool: the reference finds all ten
// defects in every trial, in the catalogue's order (the server's first
// trigger of each has a later request index and time than the one
// before), the weak one a subset that varies with its seed, never
// detecting what it did not trigger nor triggering what it did not
// reach; the comparison says the reference finds more, in 10/10 trials,
// Â12 1, p < 0.01; the report is written as Markdown, JSON and a chart
// in SVG and PNG.
func TestReferenceAgainstWeak(t *testing.T) {
	replay := replayBinary(t)
	out := t.TempDir()
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"-out", out,
		"-tool", "replay", "-trials", "10", "-budget", "1m", "--", replay, "-base", "{url}", "-out", "{out}/report.csv",
		"-tool", "weak", "-trials", "10", "-budget", "1m", "--", replay, "-weak", "-seed", "{seed}", "-base", "{url}", "-out", "{out}/report.csv",
	}, io.Discard, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "trials: weak trial 10:") {
		t.Errorf("no progress:\n%s", stderr.String())
	}
	s := readSummary(t, out)
	if len(s.Trials) != 20 || len(s.Tools) != 2 || len(s.Pairs) != 1 {
		t.Fatalf("%d trials, %d tools, %d pairs", len(s.Trials), len(s.Tools), len(s.Pairs))
	}
	weakCounts := map[int]bool{}
	for _, tr := range s.Trials {
		if tr.Outcome != "finished" || !tr.Valid() {
			t.Errorf("%s trial %d: %s, valid %v (%s)", tr.Tool, tr.Number, tr.Outcome, tr.Valid(), tr.NoReport)
		}
		if tr.Tool == "replay" {
			if tr.Detected() != 10 {
				t.Errorf("replay trial %d detected %d", tr.Number, tr.Detected())
			}
			var lastReq uint64
			lastAt := -1.0
			for _, st := range tr.Stages {
				if !st.Reached || !st.Triggered || !st.Detected || st.TriggeredRequest == nil || st.DetectedAfter == nil || st.TriggeredAfter == nil {
					t.Fatalf("replay trial %d %s: %+v", tr.Number, st.ID, st)
				}
				if *st.TriggeredRequest <= lastReq || *st.TriggeredAfter < lastAt {
					t.Errorf("replay trial %d: %s triggered by request %d at %.3f s, after %d at %.3f s: not in order", tr.Number, st.ID, *st.TriggeredRequest, *st.TriggeredAfter, lastReq, lastAt)
				}
				if want := slices.IndexFunc(catalogue.Defects, func(d catalogue.Defect) bool { return d.ID == st.ID }) + 1; st.DetectedOrder != want {
					t.Errorf("replay trial %d: %s detected %d-th in the report, want %d-th", tr.Number, st.ID, st.DetectedOrder, want)
				}
				lastReq, lastAt = *st.TriggeredRequest, *st.TriggeredAfter
			}
			continue
		}
		weakCounts[tr.Detected()] = true
		for _, st := range tr.Stages {
			if st.Detected && !st.Triggered || st.Triggered && !st.Reached {
				t.Errorf("weak trial %d %s: %+v", tr.Number, st.ID, st)
			}
		}
	}
	if len(weakCounts) < 2 || weakCounts[10] && len(weakCounts) == 1 {
		t.Errorf("the weak tool's finds do not vary: %v", weakCounts)
	}
	v := s.Pairs[0].Verdicts[0]
	if v.Measure != "defects detected" || v.Better != "replay" || v.A12 != 1 || v.P >= 0.01 || !strings.HasPrefix(v.Words, "replay finds more than weak: in 10/10 trials") {
		t.Errorf("the verdict: %+v", v)
	}
	md, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	for _, want := range []string{"## replay: 10 trials", "## weak: 10 trials", "| PERF-02 | 10/10 | 10/10 | 10/10 |", "replay finds more than weak", "chart.svg"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, trials.ChartSVG))
	if err := xml.Unmarshal(svg, new(struct{})); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("chart.svg: %v", err)
	}
	f, err := os.Open(filepath.Join(out, trials.ChartPNG))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 600 {
		t.Errorf("chart.png: %v", err)
	}
}

// A tool that cannot start, one that hangs past its budget, and one that
// writes no report are each recorded as such, never as a clean trial.
func TestToolsThatTestNothing(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	err := run(t.Context(), []string{"-out", out,
		"-tool", "missing", "-trials", "1", "--", filepath.Join(out, "no-such-program"),
		"-tool", "hangs", "-trials", "1", "-budget", "500ms", "--", "sleep", "30",
		"-tool", "silent", "-trials", "1", "--", "true",
	}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	want := map[string]string{"missing": "failed to start", "hangs": "stopped at the budget", "silent": "finished"}
	for _, tr := range s.Trials {
		if !strings.HasPrefix(tr.Outcome, want[tr.Tool]) || tr.Valid() || tr.Report != "" || tr.NoReport == "" || tr.Detected() != 0 {
			t.Errorf("%s: outcome %q, valid %v, report %q (%q)", tr.Tool, tr.Outcome, tr.Valid(), tr.Report, tr.NoReport)
		}
	}
	for _, ts := range s.Tools {
		if !slices.Equal(ts.Invalid, []int{1}) {
			t.Errorf("%s: invalid trials %v", ts.Tool, ts.Invalid)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	if !strings.Contains(string(md), "tested nothing a report shows") {
		t.Errorf("report.md does not say the trials tested nothing:\n%s", md)
	}
}

// Against a running deployment, the instance is reset before each trial:
// each trial's counts are its own.
func TestRunningDeployment(t *testing.T) {
	t.Parallel()
	built, err := server.Build(gateway.Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(built.Handler)
	mux := http.NewServeMux()
	for pattern, h := range built.Admin {
		mux.Handle(pattern, h)
	}
	admin := httptest.NewServer(mux)
	t.Cleanup(func() { api.Close(); admin.Close(); _ = built.Close() })
	replay := replayBinary(t)
	out := t.TempDir()
	err = run(t.Context(), []string{"-out", out, "-base", api.URL, "-admin", admin.URL,
		"-tool", "replay", "-trials", "2", "--", replay, "-base", "{url}", "-out", "{out}/report.csv"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	if len(s.Trials) != 2 || s.Trials[0].Requests == 0 || s.Trials[0].Requests != s.Trials[1].Requests || s.Trials[1].Detected() != 10 {
		t.Errorf("the trials' requests %d and %d, detected %d", s.Trials[0].Requests, s.Trials[1].Requests, s.Trials[1].Detected())
	}
	// With concurrency, a shared deployment is refused.
	if err := run(t.Context(), []string{"-out", out, "-base", api.URL, "-admin", admin.URL, "-concurrency", "2", "-tool", "x", "--", "true"}, io.Discard, io.Discard); err == nil {
		t.Error("concurrent trials against one deployment were run")
	}
}

// The command line: groups begin with -tool, a command runs to the next
// -tool, and a malformed one is a usage error.
func TestParseTools(t *testing.T) {
	t.Parallel()
	tools, out, err := parseTools([]string{"-tool", "a", "-trials", "3", "-seeds", "7,8,9", "-out", "runs/x", "--", "st", "run", "{url}", "-tool", "b", "--", "nuclei", "-u", "{url}"}, io.Discard)
	if err != nil || len(tools) != 2 || tools[0].Trials != 3 || !slices.Equal(tools[0].Seeds, []string{"7", "8", "9"}) || out != "runs/x" ||
		!slices.Equal(tools[0].Command, []string{"st", "run", "{url}"}) || !slices.Equal(tools[1].Command, []string{"nuclei", "-u", "{url}"}) || tools[1].Trials != 10 {
		t.Fatalf("%v %+v", err, tools)
	}
	for _, bad := range [][]string{{"st", "run"}, {"-tool", "a", "st"}, {"-tool", "a", "--"}, {"-tool", "", "--", "x"},
		{"-tool", "a", "-out", "x", "--", "t", "-tool", "b", "-out", "y", "--", "t"}} {
		if _, _, err := parseTools(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
