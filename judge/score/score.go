package score

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// Instance is what the scorer knows of the instance the tool ran against:
// which defects were active, and, read from its /defects, what each
// exposure was.
type Instance struct {
	Active   catalogue.Set
	Exposure map[catalogue.ID]uint64 // nil: not known
	// Reached counts the requests each defect's operation received with
	// its method; nil: not counted (no exposure given, or a ground truth
	// of version 2).
	Reached map[catalogue.ID]uint64
	// Since is when the instance began its counts (exposure_since); nil
	// without exposure.
	Since *time.Time
	// OneRun, when not empty, says why the report and the exposure come
	// from one run (a trial; an instance read right after the tool wrote
	// the report): a finding of a defect the instance never triggered is
	// then spurious, a false positive the ground truth proves, not a
	// detection. Empty: they may come from different runs, and such a
	// finding only contradicts the exposure.
	OneRun string
}

// Reach is how much of the contract a run's requests reached, by the
// instance's own count.
type Reach struct {
	Operations int `json:"operations"` // the contract's operations reached with their method
	Of         int `json:"of"`
	// Missed are the defects whose operation the run never reached.
	Missed []catalogue.ID `json:"missed"`
}

// reachOf is inst's reach; nil when the instance did not count it. Each
// of the ten's entries counts its operation; a mutant set's mutants are
// missed when theirs was never reached.
func reachOf(inst *Instance) *Reach {
	if inst == nil || inst.Reached == nil {
		return nil
	}
	r := &Reach{Of: len(catalogue.Defects), Missed: []catalogue.ID{}}
	for _, d := range catalogue.Defects {
		if inst.Reached[d.ID] > 0 {
			r.Operations++
		} else if !inst.Active.IsMutants() {
			r.Missed = append(r.Missed, d.ID)
		}
	}
	for _, m := range inst.Active.Mutants() {
		if inst.Reached[m.Endpoint().Defect] == 0 {
			r.Missed = append(r.Missed, m.ID())
		}
	}
	return r
}

// Scorecard is a report scored against the ground truth.
type Scorecard struct {
	Tool   string `json:"tool"`
	Report string `json:"report"`
	Format string `json:"format"`
	// FormatVersion is the version of the format's schema read (WFC's).
	FormatVersion string `json:"format_version,omitempty"`
	Baseline      string `json:"baseline,omitempty"`
	Setting       string `json:"setting"` // the active defects
	// NotRun says why the tool tested nothing, when it could not (it could
	// not load the contract); Report is then its log.
	NotRun string `json:"not_run,omitempty"`
	// ToolErrors counts the tool's own trouble in its report.
	ToolErrors int `json:"tool_errors"`
	// Truncated says where the report was cut short (the tool stopped
	// before it closed it): its verdicts are for what it held until then.
	Truncated string `json:"truncated,omitempty"`
	// Reached is how much of the contract the run reached; null when the
	// instance did not count it. TestedNothing: the run reached no
	// operation (or NotRun): its report is evidence of nothing, findings
	// or none.
	Reached       *Reach `json:"reached"`
	TestedNothing bool   `json:"tested_nothing"`
	// The same of the baseline run, when its instance's counts are given.
	// A baseline that tested nothing proves no precision: no false
	// positive rate is given from it.
	BaselineReached       *Reach `json:"baseline_reached,omitempty"`
	BaselineTestedNothing bool   `json:"baseline_tested_nothing,omitempty"`
	// Contradicted are the defects the report names that the instance's
	// exposure says were never triggered. With the report and the exposure
	// from one run (OneRun says why) their findings are spurious; else the
	// two are from different runs, and the scorecard says so.
	Contradicted []catalogue.ID `json:"contradicted"`
	OneRun       string         `json:"one_run,omitempty"`
	// Spurious counts the findings of a planted defect's class on its
	// operation that the instance proves false, each as often as the
	// report has it: it never triggered the defect in the run that wrote
	// the report (OneRun only).
	Spurious int `json:"spurious"`

	Defects []DefectScore `json:"defects"`
	// Unplanted are findings that match no active planted defect.
	Unplanted []Finding `json:"unplanted"`
	// FalsePositives are the baseline's findings, every one of them false:
	// nothing is planted there. Absent without a baseline.
	FalsePositives []Finding `json:"false_positives,omitempty"`

	Categories []CategoryScore `json:"categories"`
	Total      CategoryScore   `json:"total"`

	// Coverage is what the instance measured of the run (API coverage,
	// and code coverage in a build with it) and what the report says the
	// tool covered; absent when neither is known.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// DefectScore is one planted defect's verdict.
type DefectScore struct {
	ID        catalogue.ID `json:"id"`
	Category  string       `json:"category"`
	Operation Operation    `json:"operation"`
	Title     string       `json:"title"`
	Active    bool         `json:"active"`
	// Reported: a finding of one of its classes on its operation, not
	// spurious.
	Reported bool `json:"reported"`
	// Exposed: the tool's traffic triggered it (null when the instance's
	// exposure was not given); Triggered is how often. Reached: how many
	// requests its operation received with its method (null when the
	// instance did not count them).
	Exposed *bool   `json:"exposed"`
	Reached *uint64 `json:"reached"`
	// Contradicted: named by a finding of its class, but the exposure
	// says never triggered. Spurious holds those findings when the report
	// and the exposure are from one run: none of them is a detection.
	Contradicted bool      `json:"contradicted,omitempty"`
	Spurious     []Finding `json:"spurious,omitempty"`
	Triggered    *uint64   `json:"triggered,omitempty"`
	// Findings are those that report it; Faces the further ones that are
	// the same defect seen from another side.
	Findings []Finding `json:"findings"`
	Faces    []Finding `json:"faces"`
	// DetectedAt is the earliest time the report gives for a finding that
	// reports it; nil when it gives none.
	DetectedAt *time.Time `json:"detected_at,omitempty"`
}

// Verdict is a defect's verdict in a word.
func (d DefectScore) Verdict() string {
	switch {
	case !d.Active:
		return "off"
	case d.Reported && d.Contradicted:
		return "reported, never triggered"
	case len(d.Spurious) > 0:
		return "spurious, never triggered"
	case d.Reported:
		return "reported"
	case d.Exposed == nil:
		return "missed"
	case *d.Exposed:
		return "missed, triggered"
	case d.Reached == nil:
		return "missed, not triggered"
	case *d.Reached > 0:
		return "missed, reached"
	default:
		return "missed, never reached"
	}
}

// Verdicts are the words Verdict says, in order from best to worst.
var Verdicts = []string{"reported", "reported, never triggered", "spurious, never triggered", "missed, triggered", "missed, reached", "missed, not triggered", "missed, never reached", "missed", "off"}

// CategoryScore is a category's rates, OWASP Benchmark's way: the true
// positive rate over the active defects, the false positive rate over the
// category's operations in the baseline run (an operation with any finding
// there is a false positive), and Youden's J, their difference.
type CategoryScore struct {
	Name      string   `json:"name"`
	Active    int      `json:"active"`
	Reported  int      `json:"reported"`
	Unplanted int      `json:"unplanted"`
	TPR       *float64 `json:"tpr"` // null without an active defect
	// With a baseline:
	Operations  int      `json:"operations,omitempty"`
	FalseAlarms int      `json:"false_alarm_operations,omitempty"` // operations with a finding in the baseline
	FPR         *float64 `json:"fpr,omitempty"`
	J           *float64 `json:"youden_j,omitempty"`
}

// Score scores rep against the instance; baseline, if not nil, is a report
// of the same tool against an instance with every defect switched off.
func Score(rep Report, inst Instance, baseline *Report) Scorecard {
	return ScoreAgainst(rep, inst, baseline, nil)
}

// ScoreAgainst is Score with the baseline's instance too, if known: a
// baseline that reached no operation tested nothing, and gives no false
// positive rate.
func ScoreAgainst(rep Report, inst Instance, baseline *Report, baseInst *Instance) Scorecard {
	sc := Scorecard{Tool: rep.Tool, Report: rep.File, Format: rep.Format, FormatVersion: rep.FormatVersion, Setting: inst.Active.String(), ToolErrors: rep.ToolErrors, Truncated: rep.Truncated,
		Unplanted: []Finding{}, Contradicted: []catalogue.ID{}, Reached: reachOf(&inst)}
	// The instance's count decides; without one, the report's own word.
	sc.TestedNothing = (sc.Reached != nil && sc.Reached.Operations == 0) || (sc.Reached == nil && rep.NoTests)
	if len(rep.Coverage) > 0 {
		sc.Coverage = &Coverage{ToolSaid: rep.Coverage}
	}
	if baseline != nil {
		sc.BaselineReached = reachOf(baseInst)
		sc.BaselineTestedNothing = sc.BaselineReached != nil && sc.BaselineReached.Operations == 0
	}
	byID := map[catalogue.ID]*DefectScore{}
	defects := inst.Active.Defects()
	for _, d := range defects {
		e := catalogue.Endpoints[d.Endpoint-1]
		ds := DefectScore{ID: d.ID, Category: e.Category, Operation: Operation{e.Method, e.Path}, Title: d.Title,
			Active: d.IsMutant() || inst.Active.Active(d.ID), Findings: []Finding{}, Faces: []Finding{}}
		if inst.Exposure != nil {
			n := inst.Exposure[d.ID]
			exposed := n > 0
			ds.Exposed, ds.Triggered = &exposed, &n
		}
		if inst.Reached != nil {
			// A mutant's operation is counted under the entry of the
			// ten's defect there too.
			n := inst.Reached[e.Defect]
			ds.Reached = &n
		}
		sc.Defects = append(sc.Defects, ds)
	}
	for i := range sc.Defects {
		byID[sc.Defects[i].ID] = &sc.Defects[i]
	}
	for _, f := range rep.Findings {
		d, face, ok := plantedFor(defects, sc.Defects, f)
		switch {
		case !ok:
			sc.Unplanted = append(sc.Unplanted, f)
		case face:
			byID[d.ID].Faces = append(byID[d.ID].Faces, f)
		default:
			ds := byID[d.ID]
			ds.Findings = append(ds.Findings, f)
			ds.Reported = true
			if f.At != nil && (ds.DetectedAt == nil || f.At.Before(*ds.DetectedAt)) {
				ds.DetectedAt = f.At
			}
		}
	}
	sc.OneRun = inst.OneRun
	for i := range sc.Defects {
		if d := &sc.Defects[i]; d.Reported && d.Exposed != nil && !*d.Exposed {
			d.Contradicted = true
			sc.Contradicted = append(sc.Contradicted, d.ID)
			if inst.OneRun != "" {
				d.Spurious, d.Findings = d.Findings, []Finding{}
				d.Reported, d.DetectedAt = false, nil
				for _, f := range d.Spurious {
					sc.Spurious += f.Count
				}
			}
		}
	}
	falseAlarm := map[Operation]bool{}
	if baseline != nil {
		sc.Baseline = baseline.File
		sc.FalsePositives = append([]Finding{}, baseline.Findings...)
		for _, f := range baseline.Findings {
			falseAlarm[f.Operation] = true
		}
	}
	// A baseline gives the false positive rate only if it tested something.
	precise := baseline != nil && !sc.BaselineTestedNothing
	total := CategoryScore{Name: "all"}
	for _, c := range catalogue.Categories {
		cs := CategoryScore{Name: c.Name}
		for _, e := range catalogue.EndpointsOf(c.Name) {
			cs.Operations++
			if falseAlarm[Operation{e.Method, e.Path}] {
				cs.FalseAlarms++
			}
		}
		for _, d := range sc.Defects {
			if d.Category != c.Name {
				continue
			}
			if d.Active {
				cs.Active++
			}
			if d.Reported {
				cs.Reported++
			}
		}
		for _, f := range sc.Unplanted {
			if e, ok := endpointAt(f.Operation); ok && e.Category == c.Name {
				cs.Unplanted++
			}
		}
		rates(&cs, precise)
		total.Active += cs.Active
		total.Reported += cs.Reported
		total.Operations += cs.Operations
		total.FalseAlarms += cs.FalseAlarms
		sc.Categories = append(sc.Categories, cs)
	}
	total.Unplanted = len(sc.Unplanted) // those on no operation of the contract too
	rates(&total, precise)
	sc.Total = total
	return sc
}

// NotRun is the scorecard of a tool that tested nothing: why, and the log
// that says so.
func NotRun(tool, log, why string, inst Instance) Scorecard {
	sc := Score(Report{File: log, Format: "log", Tool: tool, Findings: []Finding{}}, inst, nil)
	sc.NotRun, sc.TestedNothing = why, true
	return sc
}

func rates(cs *CategoryScore, baseline bool) {
	if cs.Active > 0 {
		tpr := float64(cs.Reported) / float64(cs.Active)
		cs.TPR = &tpr
	}
	if !baseline {
		cs.Operations, cs.FalseAlarms = 0, 0
		return
	}
	fpr := float64(cs.FalseAlarms) / float64(cs.Operations)
	cs.FPR = &fpr
	if cs.TPR != nil {
		j := *cs.TPR - fpr
		cs.J = &j
	}
}

// endpointAt is the contract's operation op, if it is one.
func endpointAt(op Operation) (catalogue.Endpoint, bool) {
	for _, e := range catalogue.Endpoints {
		if e.Method == op.Method && e.Path == op.Path {
			return e, true
		}
	}
	return catalogue.Endpoint{}, false
}

// plantedFor is the active defect a finding reports, among those planted
// on its operation: one whose class (or CWE) it names, else one of whose
// faces it is (face). An operation has one of the ten, or mutants that
// no class of check shares, so a finding names at most one. ok is false
// for an unplanted finding.
func plantedFor(defects []catalogue.Defect, scores []DefectScore, f Finding) (d catalogue.Defect, face, ok bool) {
	for _, faces := range []bool{false, true} {
		for i, d := range defects {
			if !scores[i].Active || scores[i].Operation != f.Operation {
				continue
			}
			if !faces && (slices.Contains(d.Classes, f.Class) || (f.CWE != 0 && f.CWE == d.CWE)) {
				return d, false, true
			}
			if faces && f.Class != "" && slices.Contains(d.Faces, f.Class) {
				return d, true, true
			}
		}
	}
	return catalogue.Defect{}, false, false
}

// ParseExposure reads an instance from its ground truth (the admin
// /defects, or a file showcase-truth wrote): the active defects, and how
// often each was triggered when the truth carries exposure.
func ParseExposure(name string, data []byte) (Instance, error) {
	var t catalogue.Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return Instance{}, documentError(name, data, "not the ground truth of /defects", err)
	}
	if t.Version < 2 || t.Version > catalogue.Version {
		return Instance{}, &InputError{File: name, Line: 1, Msg: fmt.Sprintf("ground truth version %d: this scorer reads versions 2 to %d", t.Version, catalogue.Version)}
	}
	active, err := catalogue.Parse(t.Setting)
	if err != nil {
		return Instance{}, &InputError{File: name, Line: 1, Msg: "setting: " + err.Error()}
	}
	inst := Instance{Active: active}
	if t.ExposureSince == nil {
		return inst, nil // a file without an instance behind it
	}
	inst.Since = t.ExposureSince
	inst.Exposure = map[catalogue.ID]uint64{}
	if t.Version >= 3 {
		inst.Reached = map[catalogue.ID]uint64{}
	}
	for _, d := range t.Defects {
		if d.Exposure == nil {
			return Instance{}, &InputError{File: name, Line: 1, Msg: fmt.Sprintf("%s has no exposure", d.ID)}
		}
		inst.Exposure[d.ID] = d.Exposure.Count
		if inst.Reached != nil {
			if d.Reached == nil {
				return Instance{}, &InputError{File: name, Line: 1, Msg: fmt.Sprintf("%s has no reached counts (version %d has them)", d.ID, t.Version)}
			}
			inst.Reached[d.ID] = d.Reached.Count
		}
	}
	return inst, nil
}
