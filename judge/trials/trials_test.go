package trials

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
)

const (
	stSamples = "testdata/schemathesis-4.9.5-trials"
	replayRun = "testdata/replay-trials"
)

// copyRun copies a run's folder, so that scoring it again (which writes
// each trial's scorecard) leaves the test data as it is.
func copyRun(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// rescored loads a run's trial records and scores each again from its
// folder.
func rescored(t *testing.T, dir, pattern string) []Trial {
	t.Helper()
	ts, err := LoadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		if err := ScoreTrial(dir, &ts[i], pattern); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// Schemathesis 4.9.5 stopped at an 8 s budget by SIGTERM died before it
// closed its ndjson report: the runner recorded both trials as detecting
// nothing. Scored again, each report, cut short, holds findings for 9 of
// the 10 defects, is marked truncated, and the trial did not test nothing
// (all ten operations reached).
func TestStoppedAtTheBudget(t *testing.T) {
	t.Parallel()
	dir := copyRun(t, filepath.Join(stSamples, "stopped-at-8s"))
	ts := rescored(t, dir, "*.ndjson*")
	if len(ts) != 2 {
		t.Fatalf("%d trials", len(ts))
	}
	for _, tr := range ts {
		if tr.Detected() != 9 || tr.Truncated == "" || tr.Report == "" || tr.TestedNothing() || tr.Outcome != "stopped at the budget" {
			t.Errorf("trial %d: detected %d, truncated %q, report %q (%s), tested nothing %v", tr.Number, tr.Detected(), tr.Truncated, tr.Report, tr.NoReport, tr.TestedNothing())
		}
		for _, st := range tr.Stages {
			if st.Detected && !st.Triggered {
				t.Errorf("trial %d: %s detected, never triggered", tr.Number, st.ID)
			}
		}
	}
	s := Summarize(ts, 8)
	if got := s.Tools[0].Truncated; !slices.Equal(got, []int{1, 2}) || len(s.Tools[0].TestedNothing) != 0 {
		t.Errorf("truncated %v, tested nothing %v", got, s.Tools[0].TestedNothing)
	}
}

// The report of Schemathesis's ten trials rebuilt from the trials' own
// records (each scored again from its exposure.json and ndjson), against
// the reference tool's ten trials of make trials (and its weak tool's):
// detected per trial
// 10,10,10,10,10,10,10,9,10,9, PERF-02 in 8 of 10; against the reference
// (10 in every trial) U = 40, Â12 0.40, exact p = 90/190 = 0.4737 (worked
// out in judge/stats). Nothing detected before it was triggered, nothing
// triggered that was not reached.
func TestTenTrialsRebuilt(t *testing.T) {
	t.Parallel()
	st := rescored(t, copyRun(t, filepath.Join(stSamples, "ten-trials")), "*.ndjson*")
	ref := rescored(t, copyRun(t, replayRun), "report.csv")
	s := Summarize(append(st, ref...), 600)
	if len(s.Tools) != 3 || s.Tools[0].Tool != "schemathesis" || s.Tools[1].Tool != "replay" || s.Pairs[0].B != "replay" {
		t.Fatalf("tools %+v", s.Tools)
	}
	sch := s.Tools[0]
	if want := []int{10, 10, 10, 10, 10, 10, 10, 9, 10, 9}; !slices.Equal(sch.Detected, want) {
		t.Errorf("detected per trial %v, want %v", sch.Detected, want)
	}
	if !slices.Equal(s.Tools[1].Detected, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}) {
		t.Errorf("the reference detected %v", s.Tools[1].Detected)
	}
	for _, d := range sch.Defects {
		want := 10
		if d.ID == catalogue.PERF02 {
			want = 8
		}
		if d.Detected != want || d.Untimed != 0 || d.TimeToDetect == nil {
			t.Errorf("%s detected in %d trials (untimed %d), want %d", d.ID, d.Detected, d.Untimed, want)
		}
	}
	for _, tr := range append(st, ref...) {
		for _, sg := range tr.Stages {
			if sg.Detected && (!sg.Triggered || sg.DetectedAfter == nil || *sg.DetectedAfter < *sg.TriggeredAfter) || sg.Triggered && !sg.Reached {
				t.Errorf("%s trial %d %s: %+v", tr.Tool, tr.Number, sg.ID, sg)
			}
		}
	}
	v := s.Pairs[0].Verdicts[0]
	if v.Measure != "defects detected per trial" || *v.U != 40 || *v.A12 != 0.4 || math.Abs(v.P-90.0/190) > 1e-12 || v.Better != "" || v.Test != "Mann-Whitney U, exact" {
		t.Errorf("schemathesis against the reference: %+v", v)
	}
	for _, v := range s.Pairs[0].Verdicts {
		if v.Adjusted < v.P || v.Adjusted > 1 {
			t.Errorf("%s: adjusted %v from %v", v.Measure, v.Adjusted, v.P)
		}
	}
}

// A tool whose reports carry no times, that detects a defect in every
// trial, is not beaten on time by a timed tool: it gets whether (Fisher's)
// and no time verdict, and the report says why. 10 of 10 against 6 of 10:
// the tables with 16 detections, 10 and 6 to 6 and 10, have probabilities
// C(10,k)C(10,16-k)/C(20,16); those no likelier than k = 10's (210/4845)
// are k = 6 and 10: p = 420/4845.
const Fisher610 = 420.0 / 4845

func TestUntimedTool(t *testing.T) {
	t.Parallel()
	mk := func(tool string, timed bool, detecting int) []Trial {
		var ts []Trial
		for i := 1; i <= 10; i++ {
			tr := Trial{Tool: tool, Number: i, Outcome: "finished", Report: "r", Budget: 60}
			for _, d := range catalogue.Defects {
				st := Stage{ID: d.ID, Reached: true, Triggered: true, Detected: d.ID == catalogue.SEC01 && i <= detecting}
				if st.Detected && timed {
					at := 0.5
					st.DetectedAfter = &at
				}
				tr.Stages = append(tr.Stages, st)
			}
			ts = append(ts, tr)
		}
		return ts
	}
	s := Summarize(append(mk("timed", true, 6), mk("junit", false, 10)...), 0)
	p := s.Pairs[0]
	if len(p.Verdicts) != 2 || p.Verdicts[1].Measure != "detects SEC-01" || math.Abs(p.Verdicts[1].P-Fisher610) > 1e-9 || p.Verdicts[1].Better != "" ||
		!strings.Contains(p.Verdicts[1].Words, "junit in 10/10") {
		t.Errorf("verdicts %+v", p.Verdicts)
	}
	// Both in every trial: one table has those margins, no test of whether.
	s = Summarize(append(mk("timed", true, 10), mk("junit", false, 10)...), 0)
	if v := s.Pairs[0].Verdicts; len(v) != 1 || v[0].Measure != "defects detected per trial" {
		t.Errorf("both always detect: verdicts %+v", v)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "No time verdicts where junit detected a defect") {
		t.Errorf("notes %q", p.Notes)
	}
	if s.Tools[1].Timed || s.Tools[1].Defects[0].TimeToDetect != nil || s.Tools[1].Defects[0].Untimed != 10 {
		t.Errorf("the untimed tool: %+v", s.Tools[1].Defects[0])
	}
}

// A trial whose first attempt was lost on a cluster and whose second ran
// is one trial, scored from the second: the summary names the lost
// attempt, the Markdown and the page say it, and every figure is the
// same as without it.
func TestLostAttempt(t *testing.T) {
	t.Parallel()
	ts := rescored(t, copyRun(t, replayRun), "report.csv")
	before := Summarize(ts, 600)
	ts[2].Attempts = []Attempt{
		{Number: 1, Pod: "trial-r-replay-03-a", Node: "showcase-worker-1", Ended: AttemptLost, Why: "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"},
		{Number: 2, Pod: "trial-r-replay-03-b", Node: "showcase-node", Ended: AttemptRan},
	}
	s := Summarize(ts, 600)
	tool := s.Tools[0]
	if len(tool.Lost) != 1 || tool.Lost[0] != (LostAttempt{Trial: 3, Attempt: 1, Node: "showcase-worker-1", Why: ts[2].Attempts[0].Why}) {
		t.Errorf("lost %+v", tool.Lost)
	}
	if tool.Trials != before.Tools[0].Trials || !slices.Equal(tool.Detected, before.Tools[0].Detected) || len(tool.NotRun) != 0 {
		t.Errorf("the figures changed: %d trials, detected %v, not run %v", tool.Trials, tool.Detected, tool.NotRun)
	}
	var md, page strings.Builder
	if err := s.WriteMarkdown(&md, "", ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Trial 3's attempt 1 was lost on node showcase-worker-1, and is not scored: DeletionByTaintManager") {
		t.Errorf("the Markdown does not say it:\n%s", md.String())
	}
	if err := s.WriteHTML(&page, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "trial 3, attempt 1 on showcase-worker-1: DeletionByTaintManager") || !strings.Contains(page.String(), "<td>2 (1 lost)</td>") {
		t.Error("the page does not show the attempts")
	}
}
