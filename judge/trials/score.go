package trials

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// The files of a trial's folder: the tool writes into ToolDir.
const (
	ToolDir    = "out"
	LogFile    = "tool.log"
	ServerLog  = "server.log"
	TruthFile  = "exposure.json"
	CardFile   = "scorecard.json"
	RecordFile = "trial.json"
)

// ScoreTrial scores the trial in its folder (runDir/t.Dir): the instance's
// ground truth (exposure.json) and the first file in the tool's folder
// matching pattern ("" for any) that the scorer reads, cut short or whole.
// It sets the trial's requests, report and stages, and writes the
// scorecard (scorecard.json); the record (trial.json) is the caller's to
// write. A trial can be scored again from its folder alone.
func ScoreTrial(runDir string, t *Trial, pattern string) error {
	dir := filepath.Join(runDir, t.Dir)
	raw, err := os.ReadFile(filepath.Join(dir, TruthFile))
	if err != nil {
		return err
	}
	var truth catalogue.Truth
	if err := json.Unmarshal(raw, &truth); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, TruthFile), err)
	}
	if truth.Requests == nil || truth.ExposureSince == nil {
		return fmt.Errorf("%s: the ground truth is of version %d, without the counts a trial needs (version %d)", filepath.Join(dir, TruthFile), truth.Version, catalogue.Version)
	}
	t.Requests = *truth.Requests
	t.Report, t.NoReport, t.Truncated = "", "", ""
	rep, file, why := findReport(filepath.Join(dir, ToolDir), t.Tool, pattern)
	var card *score.Scorecard
	if file != "" {
		abs, err := filepath.Abs(runDir)
		if err != nil {
			return err
		}
		if t.Report, err = filepath.Rel(abs, file); err != nil {
			return err
		}
		exposure, err := score.ParseExposure(TruthFile, raw)
		if err != nil {
			return err
		}
		exposure.OneRun = "a trial: the tool's requests went to the trial's own instance, read when the tool ended"
		sc := score.Score(rep, exposure, nil)
		card = &sc
		t.Truncated = sc.Truncated
		b, _ := json.MarshalIndent(sc, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, CardFile), append(b, '\n'), 0o644); err != nil {
			return err
		}
	} else {
		t.NoReport = why
		_ = os.Remove(filepath.Join(dir, CardFile))
	}
	t.Stages = stages(truth, card, t.Start, t.InstanceSince)
	if t.Coverage, err = readCoverage(dir); err != nil {
		return err
	}
	return nil
}

// WriteRecord writes the trial's record into its folder, whole or not at
// all: a runner killed while it writes leaves none, and the trial is
// collected again on -resume.
func WriteRecord(runDir string, t Trial) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(runDir, t.Dir, RecordFile), append(b, '\n'))
}

// ReadRecord reads one trial's record from its folder (relative to the
// run's); os.ErrNotExist when it has none yet.
func ReadRecord(runDir, dir string) (*Trial, error) {
	raw, err := os.ReadFile(filepath.Join(runDir, dir, RecordFile))
	if err != nil {
		return nil, err
	}
	var t Trial
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(runDir, dir, RecordFile), err)
	}
	t.Dir = dir
	return &t, nil
}

// findReport is the first file matching pattern in out that the scorer
// reads; else why there is none.
func findReport(out, tool, pattern string) (score.Report, string, string) {
	if pattern == "" {
		pattern = "*"
	}
	matches, err := filepath.Glob(filepath.Join(out, pattern))
	if err != nil {
		return score.Report{}, "", "the report pattern: " + err.Error()
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return score.Report{}, "", err.Error()
	}
	sort.Strings(matches)
	why := "it wrote no file matching " + pattern
	for _, m := range matches {
		if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		rep, err := score.ReadFile(m, score.Options{Tool: tool})
		if err == nil {
			return rep, filepath.Join(abs, filepath.Base(m)), ""
		}
		why = "the scorer refused it: " + err.Error()
	}
	return score.Report{}, "", why
}

// stages are each defect's three stages in a trial, from the instance's
// ground truth and the report's scorecard (nil: no report, nothing
// detected), in seconds since the tool started. The instance's times are
// on its clock, which began its counts at its exposure_since: that moment
// is instanceSince on the runner's clock (nil: the same clock, the fresh
// instance in the runner's process or on its machine).
//
// A detection is a finding the ground truth confirms, as Magma counts a
// bug found only once it was triggered: a finding of a defect the
// instance never triggered is spurious (the scorecard has moved it to the
// defect's Spurious), and so is a finding the report times before the
// defect's first trigger. That one cannot be about a request that showed
// the defect, since none had yet; it is not moved to the trigger's time,
// which would credit a guess that came true later. The detection is the
// first finding at or after the first trigger, compared at the precision
// the report gives its times (a report in whole seconds is compared with
// the trigger's second). A finding the report has several times spans its
// first to its last time: all before the trigger, every one is spurious;
// the first before and the last after, the first is spurious and the
// detection is at the trigger's time (the report does not say which of
// its times came first after it). A finding without a time cannot be
// placed: once the defect was triggered in the trial, it is a detection
// with no time. Spurious counts each finding as often as the report has
// it.
func stages(truth catalogue.Truth, card *score.Scorecard, toolStart time.Time, instanceSince *time.Time) []Stage {
	since := *truth.ExposureSince
	local := since
	if instanceSince != nil {
		local = *instanceSince
	}
	server := func(at *time.Time) *float64 {
		if at == nil {
			return nil
		}
		s := local.Add(at.Sub(since)).Sub(toolStart).Seconds()
		return &s
	}
	var out []Stage
	first := map[catalogue.ID]int{} // each detected defect's first line in the report
	mutants := IsMutantSetting(truth.Setting)
	for _, d := range truth.Defects {
		// A mutant set's trial is its mutants: the ten are off, and
		// scored apart from them.
		if mutants && !catalogue.IsMutantID(d.ID) {
			continue
		}
		s := Stage{ID: d.ID, Operator: d.Operator, Condition: d.Condition, Depth: d.Depth}
		if r := d.Reached; r != nil && r.Count > 0 {
			s.Reached, s.ReachedAfter, s.ReachedRequest = true, server(r.First), r.FirstRequest
		}
		var trigger time.Time // the first trigger, on the runner's clock
		if x := d.Exposure; x != nil && x.Count > 0 {
			s.Triggered, s.TriggeredAfter, s.TriggeredRequest = true, server(x.First), x.FirstRequest
			if x.First != nil {
				trigger = local.Add(x.First.Sub(since))
			}
		}
		if card != nil {
			for _, ds := range card.Defects {
				if ds.ID != d.ID {
					continue
				}
				for _, f := range ds.Spurious {
					s.Spurious, s.SpuriousWhy = s.Spurious+f.Count, "never triggered in the trial"
				}
				var early int
				for _, f := range ds.Findings {
					last := f.Last
					if last == nil {
						last = f.At
					}
					switch {
					case !s.Triggered || last != nil && !trigger.IsZero() && before(*last, trigger):
						early += f.Count // every time the report has it is before
						continue
					case f.At != nil && !trigger.IsZero() && before(*f.At, trigger):
						early++ // its first time is before; a later one is not
					}
					s.Detected = true
					if l, ok := first[d.ID]; !ok || f.Line < l {
						first[d.ID] = f.Line
					}
					if f.At == nil {
						continue
					}
					at := f.At.Sub(toolStart).Seconds()
					if !trigger.IsZero() && f.At.Before(trigger) { // within the report's precision: the trigger's time
						at = trigger.Sub(toolStart).Seconds()
					}
					if s.DetectedAfter == nil || at < *s.DetectedAfter {
						s.DetectedAfter = &at
					}
				}
				if early > 0 {
					s.Spurious += early
					why := fmt.Sprintf("%d before its first trigger", early)
					if s.SpuriousWhy != "" {
						why = s.SpuriousWhy + "; " + why
					}
					s.SpuriousWhy = why
				}
			}
		}
		out = append(out, s)
	}
	// The order of the detections, by each defect's first line in the report.
	for i := range out {
		if !out[i].Detected {
			continue
		}
		out[i].DetectedOrder = 1
		for id, l := range first {
			if id != out[i].ID && l < first[out[i].ID] {
				out[i].DetectedOrder++
			}
		}
	}
	return out
}

// before says whether a finding the report timed at is before the
// trigger, at the precision of the report's time: a time in whole seconds
// is compared with the trigger's second.
func before(at, trigger time.Time) bool {
	if at.Nanosecond() == 0 {
		trigger = trigger.Truncate(time.Second)
	}
	return at.Before(trigger)
}
