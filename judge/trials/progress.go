package trials

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// ProgressFile is a run's progress as it goes, in its folder: what the
// live page (showcase-trials -serve, -watch) shows of trials that have not
// ended. The trials that have are read from their records.
const ProgressFile = "progress.json"

// The states of a trial in a run's progress.
const (
	StateQueued    = "queued"    // not started
	StateRunning   = "running"   // its tool is running (or its Pod starting)
	StateEnded     = "ended"     // its record is written
	StateNotRun    = "not run"   // it could not run (its record says why)
	StateCancelled = "cancelled" // the run was interrupted before it started
)

// States are the states, in the order a trial goes through them.
var States = []string{StateQueued, StateRunning, StateEnded, StateNotRun, StateCancelled}

// Progress is a run as it goes: each trial's state. The runner rewrites
// it (whole, by a rename) at each change, and while trials run, as their
// instances' stages change.
type Progress struct {
	Where   string          `json:"where"` // local or kube
	Run     string          `json:"run,omitempty"`
	Start   time.Time       `json:"start"`
	Updated time.Time       `json:"updated"`
	End     *time.Time      `json:"end,omitempty"` // once the run has ended
	Trials  []TrialProgress `json:"trials"`
}

// TrialProgress is one trial as it goes.
type TrialProgress struct {
	Tool   string `json:"tool"`
	Number int    `json:"trial"`
	Seed   string `json:"seed"`
	// Defects is what its instance plants (Trial.Defects).
	Defects string  `json:"defects,omitempty"`
	Dir     string  `json:"dir"`
	Budget  float64 `json:"budget_seconds"`
	State   string  `json:"state"`
	// Start is when its tool started (on a cluster: when its Pod did);
	// Seconds how long it ran, once it has ended.
	Start   *time.Time `json:"start,omitempty"`
	Seconds float64    `json:"seconds,omitempty"`
	// Live is what its instance has seen so far, while it runs.
	Live *Live `json:"live,omitempty"`
	// Outcome and Detected are its record's, once it has ended; NotRun
	// why it could not run.
	Outcome  string `json:"outcome,omitempty"`
	Detected int    `json:"detected,omitempty"`
	Spurious int    `json:"spurious,omitempty"` // findings the ground truth proves false

	NotRun string `json:"not_run,omitempty"`
	// Coverage is its API coverage at the end, once it has ended, where
	// the run recorded coverage; Statements the statements its code ran,
	// where the code's was recorded.
	Coverage   *LiveCoverage `json:"coverage,omitempty"`
	Statements *int          `json:"statements,omitempty"`
	// Attempts are its tries on a cluster so far, once one was lost.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// LiveInterval is how often a running trial's instance is asked what it
// has seen, for the run's progress.
const LiveInterval = time.Second

// Live is what a running trial's instance has seen, at a time: how many
// requests, and the defects whose operation was reached and those
// triggered, in the catalogue's order.
type Live struct {
	At        time.Time      `json:"at"`
	Requests  uint64         `json:"requests"`
	Reached   []catalogue.ID `json:"reached"`
	Triggered []catalogue.ID `json:"triggered"`
	// Coverage is the instance's API coverage so far, where it serves one.
	Coverage *LiveCoverage `json:"coverage,omitempty"`
}

// LiveCoverage is an instance's API coverage so far: the TCL and the
// criteria's covered targets of all.
type LiveCoverage struct {
	TCL     int `json:"tcl"`
	MaxTCL  int `json:"max_tcl"`
	Targets int `json:"targets"`
	Of      int `json:"of"`
}

// LiveCoverageOf is the coverage so far in a line of a live page.
func LiveCoverageOf(c *coverage.Report) *LiveCoverage {
	l := &LiveCoverage{TCL: c.TCL, MaxTCL: c.MaxTCL}
	l.Targets, l.Of = c.Targets()
	return l
}

// ProgressOf is an ended trial's progress, from its record.
func ProgressOf(t Trial) TrialProgress {
	p := TrialProgress{Tool: t.Tool, Number: t.Number, Seed: t.Seed, Defects: t.Defects, Dir: t.Dir, Budget: t.Budget}
	if t.Lost() > 0 {
		p.Attempts = t.Attempts
	}
	if !t.Ran() {
		p.State, p.NotRun = StateNotRun, t.NotRun
		return p
	}
	start := t.Start.UTC()
	p.State, p.Start, p.Seconds, p.Outcome, p.Detected = StateEnded, &start, t.Seconds, t.Outcome, t.Detected()
	p.Spurious = t.Spurious()
	if c := t.Coverage; c != nil {
		p.Coverage = &LiveCoverage{TCL: c.TCL, MaxTCL: c.MaxTCL, Targets: c.Targets, Of: c.Of}
		if c.Code != nil && c.Code.Statements.Total > 0 {
			n := c.Code.Statements.Covered
			p.Statements = &n
		}
	}
	return p
}

// LiveOf is what an instance's ground truth, with its counts, says of the
// trial so far.
func LiveOf(t catalogue.Truth, at time.Time) Live {
	l := Live{At: at.UTC(), Reached: []catalogue.ID{}, Triggered: []catalogue.ID{}}
	if t.Requests != nil {
		l.Requests = *t.Requests
	}
	for _, d := range t.Defects {
		if d.Reached != nil && d.Reached.Count > 0 {
			l.Reached = append(l.Reached, d.ID)
		}
		if d.Exposure != nil && d.Exposure.Count > 0 {
			l.Triggered = append(l.Triggered, d.ID)
		}
	}
	return l
}

// WriteProgress writes p into dir by a rename, so that a reader never
// sees half of it.
func WriteProgress(dir string, p Progress) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, ProgressFile), append(b, '\n'))
}

// WriteAtomic writes a file whole or not at all: into a temporary file
// beside it, renamed over it, so that a reader (the live page, a tool's
// report read after a SIGKILL) sees the old file or the new one, never
// half of one.
func WriteAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// ReadProgress reads a run's progress; nil, and no error, when it has none
// (a run made before runs kept theirs).
func ReadProgress(dir string) (*Progress, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ProgressFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Progress
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ProgressFile), err)
	}
	return &p, nil
}
