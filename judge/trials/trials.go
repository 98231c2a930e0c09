// Package trials is what a run of trials leaves and what it shows: each
// trial's record (the tool's outcome, the stages of each planted defect)
// scored from the trial's folder, and the summary over a run's trials, the
// way fuzzing research compares fuzzers (FuzzBench's reports, Magma's
// stages and survival times, Klees et al.'s statistics): per tool and
// defect, in how many trials its operation was reached, it was triggered
// and the tool detected it, the Kaplan-Meier median time to each; per pair
// of tools, whether one finds more (Mann-Whitney U), whether it detects a
// defect more often (Fisher's exact test) and sooner (the log-rank test),
// Holm-adjusted; three or more tools ranked (Friedman, Nemenyi); and the
// charts. It runs nothing and links no service code: the runner
// (trials/runner) does, and showcase-score reads runs made apart with this
// package alone.
package trials

import (
	"fmt"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// Stage is one defect in one trial: whether and when (seconds since the
// tool started) its operation was reached, it was triggered and the tool
// detected it, and which request (its index among the instance's) was the
// first to reach or trigger it.
//
// For a mutant, Operator, Condition and Depth say which it is (as its ID
// does, spelled out for the reader of trial.json).
type Stage struct {
	ID               catalogue.ID `json:"id"`
	Operator         string       `json:"operator,omitempty"`
	Condition        string       `json:"condition,omitempty"`
	Depth            *int         `json:"depth,omitempty"`
	Reached          bool         `json:"reached"`
	ReachedAfter     *float64     `json:"reached_after,omitempty"`
	ReachedRequest   *uint64      `json:"reached_request,omitempty"`
	Triggered        bool         `json:"triggered"`
	TriggeredAfter   *float64     `json:"triggered_after,omitempty"`
	TriggeredRequest *uint64      `json:"triggered_request,omitempty"`
	Detected         bool         `json:"detected"`
	// DetectedAfter is nil for a detection whose report carries no time;
	// DetectedOrder is its place among the trial's detections by where the
	// report first has them (1: first), for reports that carry order but
	// no time (SARIF, JUnit, WFC).
	DetectedAfter *float64 `json:"detected_after,omitempty"`
	DetectedOrder int      `json:"detected_order,omitempty"`
	// Spurious counts the findings of its class on its operation that are
	// not detections, and SpuriousWhy says why: the instance never
	// triggered it in the trial, or the report has them before its first
	// trigger (see stages). They are false positives the ground truth
	// proves, and count in no detection rate, time or test.
	Spurious    int    `json:"spurious,omitempty"`
	SpuriousWhy string `json:"spurious_why,omitempty"`
}

// Signal is one signal the runner sent the tool's process group when the
// trial reached its budget (or the run was interrupted): which, when
// (seconds since the tool started), and how long the tool was then given
// to end before the next.
type Signal struct {
	Signal string  `json:"signal"`
	After  float64 `json:"after"`
	Grace  float64 `json:"grace_seconds"`
}

// Trial is one run of one tool.
type Trial struct {
	Tool   string `json:"tool"`
	Number int    `json:"trial"`
	Seed   string `json:"seed"`
	// Defects is what the trial's instance planted (its DEFECTS): all,
	// a list, or mutants:SEED:N, the trial's mutant set. An older record
	// has none: the ten.
	Defects string   `json:"defects,omitempty"`
	Dir     string   `json:"dir"` // relative to the run's folder
	Command []string `json:"command"`
	URL     string   `json:"url"`
	// Start is when the tool was started: every time of the trial counts
	// from it. InstanceSince is when the instance's counts began, on the
	// same clock (the runner's): the fresh instance's start, or the reset
	// of a running deployment.
	Start         time.Time  `json:"start"`
	InstanceSince *time.Time `json:"instance_since,omitempty"`
	// Budget is the most the trial could take (seconds): a defect it did
	// not detect is censored there.
	Budget  float64 `json:"budget_seconds,omitempty"`
	Seconds float64 `json:"seconds"`
	// Outcome is how the tool ended: "finished" (exit 0), "exit N",
	// "stopped at the budget", "interrupted" (the run was), or "failed to
	// start: …". Signals are those the runner sent to stop it, in order;
	// the tool ended during the last one's grace, or was killed.
	Outcome  string   `json:"outcome"`
	ExitCode int      `json:"exit_code"`
	Signals  []Signal `json:"signals,omitempty"`
	// Report is the scored report, relative to the run's folder; ""
	// when the tool wrote none the scorer reads, and NoReport says why.
	// Truncated says where it was cut short (the tool stopped before it
	// closed it): it was scored for what it held.
	Report    string `json:"report"`
	NoReport  string `json:"no_report,omitempty"`
	Truncated string `json:"truncated,omitempty"`
	// Requests is how many requests the instance received in the trial.
	Requests uint64  `json:"requests"`
	Stages   []Stage `json:"stages"`

	// Where the trial ran ("local": on the runner's machine; "kube": as a
	// Kubernetes Job) and, on a cluster, its node and Pod, each image's
	// digest and what was given each container.
	Where     string     `json:"where,omitempty"`
	Node      string     `json:"node,omitempty"`
	Pod       string     `json:"pod,omitempty"`
	Images    []Image    `json:"images,omitempty"`
	Resources *Resources `json:"resources,omitempty"`
	// Machine is what ran the tool and the instance.
	Machine *Machine `json:"machine,omitempty"`
	// ToolVersion is what the tool printed for --version in the trial (on
	// a cluster, where the runner cannot ask it), if it did.
	ToolVersion string `json:"tool_version,omitempty"`
	// Coverage is what the instance measured of the trial: its API
	// coverage and, where recorded, its code coverage, at the end and over
	// time; absent when the run recorded none.
	Coverage *TrialCoverage `json:"coverage,omitempty"`
	// NotRun says why a trial could not run (Kubernetes' reason and
	// message: the image not found, unschedulable past the deadline,
	// evicted, killed for its memory). Such a trial has no stages: it is
	// counted apart, never as a trial that tested nothing.
	NotRun string `json:"not_run,omitempty"`
	// Attempts are the trial's tries on a cluster, in order: the last is
	// the one it was scored from (or why it could not run), each before it
	// was lost.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// How an attempt ended.
const (
	AttemptRan    = "ran"     // to its end (or the runner's interruption): the trial is scored from it
	AttemptLost   = "lost"    // its Pod deleted, evicted or gone with its node, by anyone but the runner
	AttemptNotRun = "not run" // it could not start, or never came (the Job gave up)
)

// Attempt is one try at a trial on a cluster: its Pod, its node, when it
// started and ended, how (AttemptRan, AttemptLost, AttemptNotRun) and
// why, in Kubernetes' words. A lost attempt is never scored, neither as
// a trial that found nothing nor as one cut short: its trial runs again,
// as the Job's next Pod, up to the experiment's retries.
type Attempt struct {
	Number int        `json:"attempt"`
	Pod    string     `json:"pod,omitempty"`
	Node   string     `json:"node,omitempty"`
	Start  *time.Time `json:"start,omitempty"`
	End    time.Time  `json:"end"`
	Ended  string     `json:"ended"`
	Why    string     `json:"why,omitempty"`
}

// AttemptsText is the trial's attempts in a few words, when one was
// lost: "3 (2 lost)"; "" otherwise.
func (t Trial) AttemptsText() string {
	if n := t.Lost(); n > 0 {
		return fmt.Sprintf("%d (%d lost)", len(t.Attempts), n)
	}
	return ""
}

// Lost is how many of the trial's attempts were lost.
func (t Trial) Lost() int {
	n := 0
	for _, a := range t.Attempts {
		if a.Ended == AttemptLost {
			n++
		}
	}
	return n
}

// Image is one container's image as the trial ran it.
type Image struct {
	Container string `json:"container"`
	Image     string `json:"image"`
	Digest    string `json:"digest,omitempty"` // the runtime's image ID
}

// Resources are the CPU and memory given each container of a trial (the
// tool's and the instance's alike), as Kubernetes quantities.
type Resources struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Machine is the hardware and kernel a trial ran on.
type Machine struct {
	Hostname string `json:"hostname,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	Cores    int    `json:"cores,omitempty"`
	Memory   uint64 `json:"memory_bytes,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
}

// Ran is whether the trial ran (a trial that could not run, NotRun, is
// left out of the statistics).
func (t Trial) Ran() bool { return t.NotRun == "" }

// Detected is how many defects the trial's report detected.
func (t Trial) Detected() int {
	n := 0
	for _, s := range t.Stages {
		if s.Detected {
			n++
		}
	}
	return n
}

// Spurious is how many of the trial's findings of planted defects were
// spurious: false positives its ground truth proves (Stage.Spurious).
func (t Trial) Spurious() int {
	n := 0
	for _, s := range t.Stages {
		n += s.Spurious
	}
	return n
}

// TestedNothing is the scorecard's "tested nothing": the trial's requests
// reached none of the contract's operations (the instance counted none),
// whatever its report says. A trial that failed to start reached none.
func (t Trial) TestedNothing() bool {
	for _, s := range t.Stages {
		if s.Reached {
			return false
		}
	}
	return true
}

// Mutants reports whether the trial planted a mutant set: its stages
// are the set's mutants, scored as a mutation score, apart from the ten.
func (t Trial) Mutants() bool { return IsMutantSetting(t.Defects) }

// IsMutantSetting reports whether a DEFECTS setting, as an instance or a
// record gives it, plants a mutant set.
func IsMutantSetting(setting string) bool {
	set, err := catalogue.Parse(setting)
	return err == nil && set.IsMutants()
}

// budget is the trial's budget, or fallback for a record that has none.
func (t Trial) budget(fallback float64) float64 {
	if t.Budget > 0 {
		return t.Budget
	}
	return fallback
}
