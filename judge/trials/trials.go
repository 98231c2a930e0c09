// Package trials measures a tool over repeated runs, the way fuzzing
// research compares fuzzers (FuzzBench's trials, Magma's stages): it runs a
// tool's own command line N times, each against a fresh instance of the
// showcase (or a running deployment, reset in between), within a time
// budget, and keeps per trial the tool's report, its log, its exit status
// and the instance's ground truth. Each planted defect then has three
// stages per trial, each with its time since the trial began: its
// operation reached and the defect triggered (from the server, which
// numbers and times the first request of each), and the defect detected
// (from the tool's report, where it carries a time). Summarize sums the
// trials up per tool and compares tools pairwise.
package trials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// Tool is one tool to try: its name and its command line, in which {url}
// is the instance's base URL, {seed} the trial's seed and {out} the folder
// the tool writes its report into.
type Tool struct {
	Name    string
	Command []string
	Trials  int           // default 10
	Budget  time.Duration // the most a trial may take; the tool is stopped at it. Default 10m
	Seeds   []string      // one per trial; default the trial's number
	// Report is a glob, in {out}, for the report to score (the first file
	// the scorer reads); default every file.
	Report string
}

// Options are a run's settings.
type Options struct {
	Out string // the run's folder
	// Defects is the setting of each fresh instance (default all).
	Defects catalogue.Set
	// Base and Admin are a running deployment's API and admin URLs, used
	// instead of fresh instances: reset before each trial.
	Base, Admin string
	// Concurrency is how many trials run at once (default 1: the timing
	// defects, those of endpoints 9 and 10, are about time, and trials sharing
	// the machine's cores change what a tool measures).
	Concurrency int
	// Progress, when not nil, gets a line per trial as it starts and ends.
	Progress io.Writer
	// Grace is how long a tool stopped at its budget has to end after
	// SIGTERM before SIGKILL (default 5 s).
	Grace time.Duration
}

// Stage is one defect in one trial: whether and when (seconds since the
// trial began) its operation was reached, it was triggered and the tool
// detected it, and which request (its index among the instance's) was the
// first to reach or trigger it.
type Stage struct {
	ID               catalogue.ID `json:"id"`
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
	// no time (SARIF, JUnit).
	DetectedAfter *float64 `json:"detected_after,omitempty"`
	DetectedOrder int      `json:"detected_order,omitempty"`
}

// Trial is one run of one tool.
type Trial struct {
	Tool    string    `json:"tool"`
	Number  int       `json:"trial"`
	Seed    string    `json:"seed"`
	Dir     string    `json:"dir"` // relative to the run's folder
	Command []string  `json:"command"`
	URL     string    `json:"url"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	// Outcome is how the tool ended: "finished" (exit 0), "exit N",
	// "stopped at the budget", "interrupted" (the run was), or "failed to
	// start: …".
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
	// Report is the scored report, relative to the run's folder; ""
	// when the tool wrote none the scorer reads, and NoReport says why.
	Report   string `json:"report"`
	NoReport string `json:"no_report,omitempty"`
	// Requests is how many requests the instance received in the trial.
	Requests uint64  `json:"requests"`
	Stages   []Stage `json:"stages"`
}

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

// Valid says whether the trial tested anything a report can show: the
// tool started, wrote a report the scorer reads, and its requests reached
// the instance.
func (t Trial) Valid() bool {
	return t.Report != "" && t.Requests > 0 && !strings.HasPrefix(t.Outcome, "failed to start")
}

// Run runs every tool's trials, one tool's after another's (trials
// interleave only with Concurrency above 1), and writes each trial's
// record into its folder (trial.json). It returns the trials in order.
func Run(ctx context.Context, o Options, tools []Tool) ([]Trial, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Base != "" && (o.Admin == "" || o.Concurrency > 1) {
		return nil, errors.New("trials: a running deployment needs its admin URL, and takes one trial at a time (it is reset between trials)")
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	if o.Defects == (catalogue.Set{}) {
		o.Defects = catalogue.All()
	}
	// Each tool with its defaults once; a trial each, in order.
	type job struct {
		tool  Tool
		trial *Trial
		ran   bool
	}
	var jobs []*job
	names := map[string]bool{}
	for _, tl := range tools {
		if tl.Name == "" || len(tl.Command) == 0 {
			return nil, errors.New("trials: a tool needs a name and a command")
		}
		if names[slug(tl.Name)] {
			return nil, fmt.Errorf("trials: two tools named %q: each needs a folder of its own", tl.Name)
		}
		names[slug(tl.Name)] = true
		if tl.Trials <= 0 {
			tl.Trials = 10
		}
		if tl.Budget <= 0 {
			tl.Budget = 10 * time.Minute
		}
		if len(tl.Seeds) > 0 && len(tl.Seeds) != tl.Trials {
			return nil, fmt.Errorf("trials: %s: %d seeds for %d trials", tl.Name, len(tl.Seeds), tl.Trials)
		}
		for i := 1; i <= tl.Trials; i++ {
			seed := strconv.Itoa(i)
			if len(tl.Seeds) > 0 {
				seed = tl.Seeds[i-1]
			}
			jobs = append(jobs, &job{tool: tl, trial: &Trial{Tool: tl.Name, Number: i, Seed: seed, Dir: filepath.Join(slug(tl.Name), fmt.Sprintf("trial-%02d", i))}})
		}
	}
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		j.ran = true
		wg.Go(func() {
			defer func() { <-sem }()
			if err := runTrial(ctx, o, j.tool, j.trial); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s trial %d: %w", j.trial.Tool, j.trial.Number, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The trials that ran (an interrupted run stops starting new ones).
	var out []Trial
	for _, j := range jobs {
		if j.ran {
			out = append(out, *j.trial)
		}
	}
	return out, errors.Join(append(errs, ctx.Err())...)
}

// slug is a tool's name as a folder name.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// The files of a trial's folder: the tool writes into toolDir.
const (
	toolDir    = "out"
	logFile    = "tool.log"
	truthFile  = "exposure.json"
	cardFile   = "scorecard.json"
	recordFile = "trial.json"
)

func runTrial(ctx context.Context, o Options, tl Tool, t *Trial) error {
	dir := filepath.Join(o.Out, t.Dir)
	out, err := filepath.Abs(filepath.Join(dir, toolDir))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	inst, err := newInstance(ctx, o)
	if err != nil {
		return err
	}
	defer inst.Close()
	t.URL = inst.URL()
	for _, a := range tl.Command {
		a = strings.ReplaceAll(a, "{url}", t.URL)
		a = strings.ReplaceAll(a, "{seed}", t.Seed)
		a = strings.ReplaceAll(a, "{out}", out)
		t.Command = append(t.Command, a)
	}
	progress(o, "%s trial %d: starting (seed %s): %s", t.Tool, t.Number, t.Seed, strings.Join(t.Command, " "))
	logf, err := os.Create(filepath.Join(dir, logFile))
	if err != nil {
		return err
	}
	defer logf.Close()

	t.Start = time.Now()
	budget, cancel := context.WithTimeout(ctx, tl.Budget)
	defer cancel()
	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Dir = out
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stopped with everything it started
	if err := cmd.Start(); err != nil {
		t.Outcome = "failed to start: " + err.Error()
		t.ExitCode = -1
	} else {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-budget.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case err = <-done:
			case <-time.After(o.Grace):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				err = <-done
			}
			t.Outcome = "stopped at the budget"
			if ctx.Err() != nil {
				t.Outcome = "interrupted"
			}
		}
		t.ExitCode = cmd.ProcessState.ExitCode()
		if t.Outcome == "" {
			var exit *exec.ExitError
			switch {
			case err == nil:
				t.Outcome = "finished"
			case errors.As(err, &exit):
				t.Outcome = fmt.Sprintf("exit %d", t.ExitCode)
			default:
				t.Outcome = err.Error()
			}
		}
	}
	t.Seconds = time.Since(t.Start).Seconds()

	truth, raw, err := inst.Truth(ctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, truthFile), raw, 0o644); err != nil {
		return err
	}
	if truth.Requests != nil {
		t.Requests = *truth.Requests
	}
	rep, reportFile, why := findReport(out, tl)
	t.NoReport = why
	var card *score.Scorecard
	if reportFile != "" {
		if t.Report, err = filepath.Rel(o.Out, reportFile); err != nil {
			return err
		}
		exposure, err := score.ParseExposure(truthFile, raw)
		if err != nil {
			return err
		}
		sc := score.Score(rep, exposure, nil)
		card = &sc
		b, _ := json.MarshalIndent(sc, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, cardFile), b, 0o644); err != nil {
			return err
		}
	}
	t.Stages = stages(truth, card)
	b, _ := json.MarshalIndent(t, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, recordFile), b, 0o644); err != nil {
		return err
	}
	s := fmt.Sprintf("%s trial %d: %s in %.1f s, %d requests; ", t.Tool, t.Number, t.Outcome, t.Seconds, t.Requests)
	if t.Report == "" {
		s += "no report (" + t.NoReport + ")"
	} else {
		r, tr := 0, 0
		for _, st := range t.Stages {
			r += b2i(st.Reached)
			tr += b2i(st.Triggered)
		}
		s += fmt.Sprintf("reached %d, triggered %d, detected %d (%s)", r, tr, t.Detected(), t.Report)
	}
	progress(o, "%s", s)
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func progress(o Options, format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "trials: "+format+"\n", args...)
	}
}

// findReport is the first file matching the tool's glob in out that the
// scorer reads; else why there is none.
func findReport(out string, tl Tool) (score.Report, string, string) {
	pattern := tl.Report
	if pattern == "" {
		pattern = "*"
	}
	matches, err := filepath.Glob(filepath.Join(out, pattern))
	if err != nil {
		return score.Report{}, "", "the report pattern: " + err.Error()
	}
	sort.Strings(matches)
	why := "it wrote no file matching " + pattern
	for _, m := range matches {
		if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		rep, err := score.ReadFile(m, score.Options{Tool: tl.Name})
		if err == nil {
			return rep, m, ""
		}
		why = "the scorer refused it: " + err.Error()
	}
	return score.Report{}, "", why
}

// stages are each defect's three stages in a trial, from the instance's
// ground truth and the report's scorecard (nil: no report, nothing
// detected).
func stages(truth catalogue.Truth, card *score.Scorecard) []Stage {
	var since time.Time
	if truth.ExposureSince != nil {
		since = *truth.ExposureSince
	}
	after := func(at *time.Time) *float64 {
		if at == nil || since.IsZero() {
			return nil
		}
		s := at.Sub(since).Seconds()
		return &s
	}
	var out []Stage
	for _, d := range truth.Defects {
		s := Stage{ID: d.ID}
		if r := d.Reached; r != nil && r.Count > 0 {
			s.Reached, s.ReachedAfter, s.ReachedRequest = true, after(r.First), r.FirstRequest
		}
		if x := d.Exposure; x != nil && x.Count > 0 {
			s.Triggered, s.TriggeredAfter, s.TriggeredRequest = true, after(x.First), x.FirstRequest
		}
		if card != nil {
			for _, ds := range card.Defects {
				if ds.ID == d.ID && ds.Reported {
					s.Detected, s.DetectedAfter = true, after(ds.DetectedAt)
				}
			}
		}
		out = append(out, s)
	}
	// The order of the detections, by each defect's first line in the report.
	if card != nil {
		first := map[catalogue.ID]int{}
		for _, ds := range card.Defects {
			for _, f := range ds.Findings {
				if l, ok := first[ds.ID]; !ok || f.Line < l {
					first[ds.ID] = f.Line
				}
			}
		}
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
	}
	return out
}
