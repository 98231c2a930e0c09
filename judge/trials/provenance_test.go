package trials

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trial that could not run is named and counted, and left out of every
// figure: the tool's trials, detections and tests are those of the trials
// that ran, and it is not a trial that tested nothing.
func TestNotRunLeftOut(t *testing.T) {
	t.Parallel()
	ts := rescored(t, copyRun(t, replayRun), "report.csv")
	ran := Summarize(ts, 0)
	var tool string
	var n int
	for i := range ts {
		if tool == "" {
			tool = ts[i].Tool
		}
		if ts[i].Tool == tool && n < 2 {
			ts[i] = Trial{Tool: tool, Number: ts[i].Number, Seed: ts[i].Seed, Budget: ts[i].Budget, Outcome: "not run", NotRun: "container tool (x): ErrImagePull: not found"}
			n++
		}
	}
	s := Summarize(ts, 0)
	a, b := ran.Tools[0], s.Tools[0]
	if b.Tool != tool || b.Trials != a.Trials-2 || len(b.NotRun) != 2 || b.NotRun[0].Why != "container tool (x): ErrImagePull: not found" {
		t.Fatalf("tool %s: %d trials, not run %+v (before: %d trials)", b.Tool, b.Trials, b.NotRun, a.Trials)
	}
	if len(b.Detected) != b.Trials || len(b.TestedNothing) != 0 || len(b.NoReport) != 0 {
		t.Errorf("the trials not run are counted in the figures: detected %v, tested nothing %v, no report %v", b.Detected, b.TestedNothing, b.NoReport)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, "", ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "could not run**, and is left out of every figure: container tool (x): ErrImagePull: not found") {
		t.Errorf("the report does not name the trials not run:\n%s", md.String())
	}
	// Every trial of a tool not run: the tool is named, and compared with none.
	for i := range ts {
		if ts[i].Tool == tool {
			ts[i].NotRun = "Unschedulable"
		}
	}
	s = Summarize(ts, 0)
	if s.Tools[0].Trials != 0 || len(s.Pairs) != 0 {
		t.Errorf("a tool with no trial run: %d trials, %d pairs", s.Tools[0].Trials, len(s.Pairs))
	}
	md.Reset()
	if err := s.WriteMarkdown(&md, "", ""); err != nil || !strings.Contains(md.String(), "No trial of it ran") {
		t.Errorf("%v\n%s", err, md.String())
	}
}

// The raw data: a row per trial and defect, the times as the records
// have them, the detection censored where there is none; and the report
// rebuilt from the folder alone says the same as the one written.
func TestRawDataAndRebuild(t *testing.T) {
	t.Parallel()
	dir := copyRun(t, replayRun)
	ts := rescored(t, dir, "report.csv")
	ts[1].NotRun = "Evicted: the node was low on memory"
	for _, tr := range ts {
		if err := WriteRecord(dir, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteProvenance(dir, Provenance{Where: "local", Runner: "test", Experiment: ExperimentFile, ExperimentSHA256: "abc"}); err != nil {
		t.Fatal(err)
	}
	if err := Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, RawCSV))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + len(ts)*len(ts[0].Stages)
	if len(rows) != want {
		t.Fatalf("%d rows, want %d (a header, a row per trial and defect)", len(rows), want)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	r := 1
	for _, tr := range ts {
		for _, st := range tr.Stages {
			row := rows[r]
			r++
			if row[col["tool"]] != tr.Tool || row[col["defect"]] != string(st.ID) {
				t.Fatalf("row %d: %v", r, row)
			}
			if !tr.Ran() {
				if !strings.HasPrefix(row[col["outcome"]], "not run: Evicted") || row[col["detected"]] != "" {
					t.Errorf("a trial not run: %v", row)
				}
				continue
			}
			if row[col["detected"]] != map[bool]string{true: "true", false: "false"}[st.Detected] ||
				row[col["censored"]] != map[bool]string{true: "false", false: "true"}[st.Detected] {
				t.Errorf("row %v, stage %+v", row, st)
			}
			if st.DetectedAfter != nil && row[col["detected_s"]] == "" {
				t.Errorf("row %v lacks its time", row)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Provenance", "SHA-256 `abc`", "could not run", RawCSV} {
		if !strings.Contains(string(md), w) {
			t.Errorf("the rebuilt report lacks %q", w)
		}
	}
}
