package trials

import (
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// A finding counts as a detection only once the trial's instance has
// triggered its defect. Each case is a trial whose tool started at 0 and
// whose instance triggered PERF-02 first at 2.5 s (none for "never");
// its report holds PERF-02's findings at the given times.
func TestSpuriousFindings(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { x := start.Add(time.Duration(s * float64(time.Second))); return &x }
	for _, c := range []struct {
		name     string
		trigger  *time.Time // nil: never triggered
		findings []*time.Time
		detected bool
		after    *float64 // the detection's time, seconds since the start
		spurious int
		why      string
		merged   bool // the findings are one, the report has it at each time
	}{
		{name: "never triggered", findings: []*time.Time{at(4), at(5)}, spurious: 2, why: "never triggered in the trial"},
		{name: "after its trigger", trigger: at(2.5), findings: []*time.Time{at(3.25)}, detected: true, after: ptrF(3.25)},
		{name: "before its trigger, none after", trigger: at(2.5), findings: []*time.Time{at(1.25)}, spurious: 1, why: "1 before its first trigger"},
		{name: "one before, one after", trigger: at(2.5), findings: []*time.Time{at(1.25), at(4)}, detected: true, after: ptrF(4), spurious: 1, why: "1 before its first trigger"},
		// A report in whole seconds: 2 s is the trigger's second, so not
		// before it; the detection is at the trigger's time, never before.
		{name: "in the trigger's second, whole seconds", trigger: at(2.5), findings: []*time.Time{at(2)}, detected: true, after: ptrF(2.5)},
		{name: "a second before, whole seconds", trigger: at(2.5), findings: []*time.Time{at(1)}, spurious: 1, why: "1 before its first trigger"},
		{name: "no time, triggered", trigger: at(2.5), findings: []*time.Time{nil}, detected: true},
		{name: "one finding, before and after", trigger: at(2.5), findings: []*time.Time{at(1.25), at(4)}, merged: true, detected: true, after: ptrF(2.5), spurious: 1, why: "1 before its first trigger"},
		{name: "one finding, twice before", trigger: at(2.5), findings: []*time.Time{at(1.25), at(1.5)}, merged: true, spurious: 2, why: "2 before its first trigger"},
		{name: "one finding, never triggered", findings: []*time.Time{at(1.25), at(1.5), at(3)}, merged: true, spurious: 3, why: "never triggered in the trial"},
	} {
		t.Run(c.name, func(t *testing.T) {
			since := start.Add(-time.Second)
			requests := uint64(10)
			truth := catalogue.Truth{ExposureSince: &since, Requests: &requests}
			for _, d := range catalogue.Defects {
				def := catalogue.TruthEntry{ID: d.ID, Reached: &catalogue.Reached{Count: 1, First: &since}, Exposure: &catalogue.Exposure{}}
				if d.ID == catalogue.PERF02 && c.trigger != nil {
					def.Exposure = &catalogue.Exposure{Count: 1, First: c.trigger, Last: c.trigger}
				}
				truth.Defects = append(truth.Defects, def)
			}
			var rep score.Report
			e := catalogue.EndpointOf(catalogue.PERF02)
			for i, f := range c.findings {
				rep.Findings = append(rep.Findings, score.Finding{Operation: score.Operation{Method: e.Method, Path: e.Path}, Class: catalogue.SlowResponse, Count: 1, Line: i + 1, At: f, Last: f})
			}
			if c.merged {
				n := len(rep.Findings)
				rep.Findings = []score.Finding{rep.Findings[0]}
				rep.Findings[0].Count, rep.Findings[0].Last = n, c.findings[n-1]
			}
			exposure := score.Instance{Active: catalogue.All(), Exposure: map[catalogue.ID]uint64{}, Reached: map[catalogue.ID]uint64{}, OneRun: "a trial"}
			for _, d := range truth.Defects {
				exposure.Exposure[d.ID] = d.Exposure.Count
				exposure.Reached[d.ID] = d.Reached.Count
			}
			card := score.Score(rep, exposure, nil)
			var st Stage
			for _, s := range stages(truth, &card, start, nil) {
				if s.ID == catalogue.PERF02 {
					st = s
				}
			}
			if st.Detected != c.detected || st.Spurious != c.spurious || st.SpuriousWhy != c.why {
				t.Errorf("detected %v, spurious %d (%q); want %v, %d (%q)", st.Detected, st.Spurious, st.SpuriousWhy, c.detected, c.spurious, c.why)
			}
			switch {
			case c.after == nil && st.DetectedAfter != nil:
				t.Errorf("detected after %v s, want no time", *st.DetectedAfter)
			case c.after != nil && (st.DetectedAfter == nil || *st.DetectedAfter != *c.after):
				t.Errorf("detected after %v, want %v s", st.DetectedAfter, *c.after)
			}
			if c.detected && st.DetectedOrder != 1 || !c.detected && st.DetectedOrder != 0 {
				t.Errorf("detected order %d", st.DetectedOrder)
			}
		})
	}
}

func ptrF(f float64) *float64 { return &f }

// Spurious findings are counted apart in every place a trial's findings
// are: the summary's detections leave them out, its spurious counts hold
// them, and report.md and trials.csv name them.
func TestSpuriousInTheReport(t *testing.T) {
	t.Parallel()
	var ts []Trial
	for i := 1; i <= 3; i++ {
		tr := Trial{Tool: "busy", Number: i, Outcome: "finished", Report: "r", Budget: 60}
		for _, d := range catalogue.Defects {
			st := Stage{ID: d.ID, Reached: true, Triggered: d.ID != catalogue.PERF02, Detected: d.ID != catalogue.PERF02}
			if st.Detected {
				st.DetectedAfter = ptrF(1)
			}
			if d.ID == catalogue.PERF02 && i == 2 {
				st.Spurious, st.SpuriousWhy = 2, "never triggered in the trial"
			}
			tr.Stages = append(tr.Stages, st)
		}
		ts = append(ts, tr)
	}
	s := Summarize(ts, 0)
	d := s.Tools[0].Defects[len(catalogue.Defects)-1]
	if d.ID != catalogue.PERF02 || d.Detected != 0 || d.Spurious != 2 || d.SpuriousTrials != 1 || d.TimeToDetect.Events != 0 {
		t.Errorf("PERF-02 over the trials: %+v", d)
	}
	if got := s.Tools[0].DetectedText(len(catalogue.Defects) - 1); !strings.HasSuffix(got, "· 2 spurious") {
		t.Errorf("the page's text %q", got)
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md, "", ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| PERF-02 | 3/3 | 0/3 | 0/3 | 2 in 1/3 |") || !strings.Contains(md.String(), "2 of its findings were **spurious**") {
		t.Errorf("report.md:\n%s", md.String())
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, ts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(csv.String(), "\n")
	if !strings.HasSuffix(lines[0], ",censored,spurious,defects,operator,depth,survived") || !strings.Contains(csv.String(), "busy,2,,,finished,PERF-02,true,,false,,false,,60.000,true,2,,,,\n") {
		t.Errorf("trials.csv:\n%s", csv.String())
	}
}
