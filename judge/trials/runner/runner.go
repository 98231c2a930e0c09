// Package runner runs the trials: a tool's own command line, N times,
// each against a fresh instance of the showcase (the server make run
// starts, in this process, on loopback ports of its own) or a running
// deployment reset in between, within a time budget. Where a trial runs
// is one seam, Executor: Local here, or the kube package's Cluster (each
// trial a Kubernetes Job); what follows it is the same. At the budget it
// interrupts the tool as a terminal does, SIGINT, then SIGTERM, then
// SIGKILL, each after a grace period it records, so that a tool can close
// its report. Each trial's folder keeps the tool's report and log, the
// server's log, the instance's ground truth and the trial's record; the
// trials package scores and sums them up.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/judge/trials/budget"
)

// Tool is one tool to try: its name and its command line, in which {url}
// is the instance's base URL, {seed} the trial's seed, {out} the folder
// the tool writes its report into and {defects} the instance's DEFECTS
// (the reference tool, an oracle, reads a mutant set from it).
type Tool struct {
	Name    string
	Command []string
	Trials  int           // default 10
	Budget  time.Duration // the most a trial may take; the tool is stopped at it. Default 10m
	Seeds   []string      // one per trial; default the trial's number
	// Report is a glob, in {out}, for the report to score (the first file
	// the scorer reads); default every file.
	Report string
	// Image is what Command runs in on a cluster (unused on this machine).
	Image string
	// Version is the tool's version as the experiment file gives it.
	Version string
}

// Options are a run's settings.
type Options struct {
	Out string // the run's folder; relative to the working directory, or absolute
	// Defects is what each trial's instance plants (default the ten): one
	// setting, mutant sets drawn per trial, or both (trials.Plan).
	Defects trials.Plan
	// Base and Admin are a running deployment's API and admin URLs, used
	// instead of fresh instances: reset before each trial.
	Base, Admin string
	// Concurrency is how many trials run at once (default 1: the timing
	// defects, those of endpoints 9 and 10, are about time, and trials sharing
	// the machine's cores change what a tool measures).
	Concurrency int
	// Progress, when not nil, gets a line per trial as it starts and ends.
	Progress io.Writer
	// InterruptGrace is how long a tool has to end after SIGINT, and
	// TermGrace after SIGTERM, before the next signal (default 10 s and
	// 5 s): Schemathesis 4.9.5 closes its report within 0.4 s of SIGINT,
	// and dies without closing it on SIGTERM.
	InterruptGrace, TermGrace time.Duration
	// Executor runs each trial; nil: Local, on this machine.
	Executor Executor
	// Where and Run name the run in its progress (trials.ProgressFile):
	// "local" or "kube", and on a cluster the run's ID.
	Where, Run string
	// Coverage is what coverage each trial records of its instance, over
	// time and at its end. With code coverage, a fresh instance here is a
	// process of CoverBinary (default bin/cover/gateway, make build
	// COVER=1), whose counters are its own.
	Coverage    trials.CoverageOptions
	CoverBinary string
	// Resume finishes the run in Out that an earlier runner began (on a
	// cluster): a trial with its record is kept as it is, one the earlier
	// runner started is handed to the executor to re-attach to, the rest
	// are started.
	Resume bool
}

// DefaultCoverBinary is the cover build of the gateway make build COVER=1
// leaves.
const DefaultCoverBinary = "bin/cover/gateway"

// Spec is one trial to run, as the runner decided it.
type Spec struct {
	Tool    Tool
	Dir     string // the trial's folder, absolute
	Defects catalogue.Set
	Limits  budget.Limits
	// Coverage is what coverage to record of the instance.
	Coverage trials.CoverageOptions
	// Say writes a line of progress.
	Say func(format string, args ...any)
	// Started says when the tool started (on a cluster, its Pod); Live
	// what its instance has seen so far, every trials.LiveInterval or so while
	// it runs. Both go into the run's progress.
	Started func(time.Time)
	Live    func(trials.Live)
	// Lost says, on a cluster, that an attempt was lost and the trial
	// goes on to its next: the attempts so far.
	Lost func([]trials.Attempt)
	// Resumed: the run is resumed, and the trial may have been started by
	// the runner before (StartedBefore: its progress says it was), whose
	// Job the executor takes up again if it is still there.
	Resumed, StartedBefore bool
}

// Executor is where a trial runs: the one seam between the runner and a
// machine (Local) or a cluster (the kube package's). Execute runs the
// trial's tool against a fresh instance (or the deployment it was given)
// within the limits, and leaves in s.Dir what every trial leaves: the
// tool's folder (out/) and log, the instance's log and its ground truth
// (exposure.json); it fills in the trial's command, URL, start, outcome,
// signals and where it ran. A trial that could not run is not an error:
// it is recorded with t.NotRun set and nothing else. Everything after
// Execute (scoring, records, the summary) is the same whichever ran it.
type Executor interface {
	Execute(ctx context.Context, s Spec, t *trials.Trial) error
}

// Expand is a tool's command line with {url}, {seed}, {out} and
// {defects} filled in.
func Expand(command []string, url, seed, out string, defects catalogue.Set) []string {
	var c []string
	for _, a := range command {
		a = strings.ReplaceAll(a, "{url}", url)
		a = strings.ReplaceAll(a, "{seed}", seed)
		a = strings.ReplaceAll(a, "{out}", out)
		a = strings.ReplaceAll(a, "{defects}", defects.String())
		c = append(c, a)
	}
	return c
}

// Run runs every tool's trials, one tool's after another's (trials
// interleave only with Concurrency above 1), and writes each trial's
// record into its folder (trial.json). It returns the trials that ran, in
// order. Once ctx ends (the run is interrupted), the trials running are
// stopped as at their budget and no other starts.
func Run(ctx context.Context, o Options, tools []Tool) ([]trials.Trial, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Base != "" && (o.Admin == "" || o.Concurrency > 1) {
		return nil, errors.New("trials: a running deployment needs its admin URL, and takes one trial at a time (it is reset between trials)")
	}
	if o.InterruptGrace <= 0 {
		o.InterruptGrace = 10 * time.Second
	}
	if o.TermGrace <= 0 {
		o.TermGrace = 5 * time.Second
	}
	if o.Executor == nil {
		l := Local{Base: o.Base, Admin: o.Admin}
		if o.Coverage.Kind == trials.CoverageCode && o.Base == "" {
			if l.Binary = o.CoverBinary; l.Binary == "" {
				l.Binary = DefaultCoverBinary
			}
			if _, err := os.Stat(l.Binary); err != nil {
				return nil, fmt.Errorf("trials: code coverage needs the instance built with it (make build COVER=1): %w", err)
			}
		}
		o.Executor = l
	}
	// Every path below is absolute, whatever the working directory of the
	// tools (their {out}) and of the caller.
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	// Each tool with its defaults once; a trial each, in order.
	type job struct {
		tool    Tool
		defects catalogue.Set
		trial   *trials.Trial
		ran     bool
		// done: collected by an earlier runner (resumed); before: started
		// by it.
		done, before bool
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
		// Each planting's trials, numbered on: trial i of a planting that
		// draws mutants plants the set of its i-th seed, for every tool.
		number := 0
		for _, pl := range o.Defects.Each() {
			for i := 1; i <= tl.Trials; i++ {
				number++
				seed := strconv.Itoa(i)
				if len(tl.Seeds) > 0 {
					seed = tl.Seeds[i-1]
				}
				set := o.Defects.For(pl, i)
				jobs = append(jobs, &job{tool: tl, defects: set, trial: &trials.Trial{Tool: tl.Name, Number: number, Seed: seed, Defects: set.String(), Budget: tl.Budget.Seconds(),
					Dir: filepath.Join(slug(tl.Name), fmt.Sprintf("trial-%02d", number))}})
			}
		}
	}
	tr := &tracker{dir: o.Out, say: func(format string, args ...any) { progress(o, format, args...) }}
	tr.p = trials.Progress{Where: o.Where, Run: o.Run, Start: time.Now().UTC()}
	if tr.p.Where == "" {
		tr.p.Where = "local"
	}
	if o.Resume {
		// What the earlier runner left: each trial's record (collected),
		// and its progress (which trials it had started).
		prev, err := trials.ReadProgress(o.Out)
		if err != nil {
			return nil, err
		}
		started := map[string]bool{}
		if prev != nil {
			tr.p.Start = prev.Start
			for _, p := range prev.Trials {
				started[p.Dir] = p.State != trials.StateQueued && p.State != trials.StateCancelled
			}
		}
		for _, j := range jobs {
			rec, err := trials.ReadRecord(o.Out, j.trial.Dir)
			switch {
			case err == nil:
				*j.trial, j.done = *rec, true
			case errors.Is(err, os.ErrNotExist):
				j.before = started[j.trial.Dir]
			default:
				return nil, err
			}
		}
	}
	for _, j := range jobs {
		p := trials.TrialProgress{Tool: j.trial.Tool, Number: j.trial.Number, Seed: j.trial.Seed, Defects: j.trial.Defects,
			Dir: j.trial.Dir, Budget: j.trial.Budget, State: trials.StateQueued}
		if j.done {
			j.ran, p = true, trials.ProgressOf(*j.trial)
		}
		tr.p.Trials = append(tr.p.Trials, p)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	tr.write()
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i, j := range jobs {
		if j.done {
			continue
		}
		// A slot, unless the run ends first; and once it has ended, no
		// trial starts even if a slot was free.
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		j.ran = true
		wg.Go(func() {
			defer func() { <-sem }()
			tr.update(i, func(p *trials.TrialProgress) { p.State = trials.StateRunning })
			err := runTrial(ctx, o, j.tool, j.defects, j.trial, j.before, tr.hooks(i))
			tr.ended(i, *j.trial)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s trial %d: %w", j.trial.Tool, j.trial.Number, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	tr.finish()
	var ran []trials.Trial
	for _, j := range jobs {
		if j.ran {
			ran = append(ran, *j.trial)
		}
	}
	return ran, errors.Join(append(errs, ctx.Err())...)
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

func runTrial(ctx context.Context, o Options, tl Tool, defects catalogue.Set, t *trials.Trial, before bool, h hooks) error {
	dir := filepath.Join(o.Out, t.Dir)
	if err := os.MkdirAll(filepath.Join(dir, trials.ToolDir), 0o755); err != nil {
		return err
	}
	s := Spec{Tool: tl, Dir: dir, Defects: defects, Coverage: o.Coverage, Limits: budget.Limits{Budget: tl.Budget, InterruptGrace: o.InterruptGrace, TermGrace: o.TermGrace},
		Say: func(format string, args ...any) { progress(o, format, args...) }, Started: h.started, Live: h.live, Lost: h.lost,
		Resumed: o.Resume, StartedBefore: before}
	if err := o.Executor.Execute(ctx, s, t); err != nil {
		return err
	}
	if !t.Ran() {
		progress(o, "%s trial %d: not run: %s", t.Tool, t.Number, t.NotRun)
		return trials.WriteRecord(o.Out, *t)
	}
	if err := trials.ScoreTrial(o.Out, t, tl.Report); err != nil {
		return err
	}
	if err := trials.WriteRecord(o.Out, *t); err != nil {
		return err
	}
	line := fmt.Sprintf("%s trial %d: %s in %.1f s, %d requests; ", t.Tool, t.Number, t.Outcome, t.Seconds, t.Requests)
	r, tr := 0, 0
	for _, st := range t.Stages {
		r += b2i(st.Reached)
		tr += b2i(st.Triggered)
	}
	line += fmt.Sprintf("reached %d, triggered %d, ", r, tr)
	switch {
	case t.Report == "":
		line += "no report (" + t.NoReport + ")"
	case t.Truncated != "":
		line += fmt.Sprintf("detected %d (%s, truncated: %s)", t.Detected(), t.Report, t.Truncated)
	default:
		line += fmt.Sprintf("detected %d (%s)", t.Detected(), t.Report)
	}
	progress(o, "%s", line)
	return nil
}

// Local runs trials on this machine: the tool as a process of its own,
// the instance fresh in this process, or a process of Binary (a build with
// Go's coverage), or Base and Admin, a running deployment reset before each
// trial.
type Local struct{ Base, Admin, Binary string }

// Execute runs the trial here.
func (l Local) Execute(ctx context.Context, s Spec, t *trials.Trial) error {
	out := filepath.Join(s.Dir, trials.ToolDir)
	inst, err := newInstance(ctx, l.Base, l.Admin, s.Defects, s.Dir, l.Binary)
	if err != nil {
		return err
	}
	defer inst.Close()
	t.Where, t.Machine = "local", trials.ThisMachine()
	t.URL = inst.URL()
	t.Command = Expand(s.Tool.Command, t.URL, t.Seed, out, s.Defects)
	s.Say("%s trial %d: starting (seed %s): %s", t.Tool, t.Number, t.Seed, strings.Join(t.Command, " "))
	logf, err := os.Create(filepath.Join(s.Dir, trials.LogFile))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Dir = out
	cmd.Stdout, cmd.Stderr = logf, logf
	t.InstanceSince = inst.Since()
	started := time.Now()
	if s.Started != nil {
		s.Started(started)
	}
	stopLive := func() {}
	if s.Live != nil {
		stopLive = agent.WatchLive(ctx, inst.Truth, inst.Coverage, s.Live)
	}
	stopCoverage := agent.RecordCoverage(ctx, s.Coverage, inst.admin, s.Dir, started)
	budget.Run(cmd, s.Limits, ctx.Done()).Apply(t)
	stopLive()
	stopCoverage()

	// The ground truth even when the run was interrupted: the trial ran.
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer tcancel()
	raw, err := inst.Truth(tctx)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, trials.TruthFile), raw, 0o644)
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

// tracker keeps the run's progress and writes it at each change.
type tracker struct {
	dir string
	say func(format string, args ...any)

	mu     sync.Mutex
	p      trials.Progress
	failed bool // a write failed: said once
}

// hooks are one trial's callbacks into the tracker.
type hooks struct {
	started func(time.Time)
	live    func(trials.Live)
	lost    func([]trials.Attempt)
}

func (tr *tracker) hooks(i int) hooks {
	return hooks{
		started: func(at time.Time) {
			tr.update(i, func(p *trials.TrialProgress) { at := at.UTC(); p.Start = &at })
		},
		live: func(l trials.Live) {
			tr.update(i, func(p *trials.TrialProgress) {
				if p.State == trials.StateRunning {
					p.Live = &l
				}
			})
		},
		lost: func(as []trials.Attempt) {
			tr.update(i, func(p *trials.TrialProgress) {
				p.Attempts, p.Start, p.Live = append([]trials.Attempt(nil), as...), nil, nil
			})
		},
	}
}

func (tr *tracker) update(i int, f func(*trials.TrialProgress)) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f(&tr.p.Trials[i])
	tr.writeLocked()
}

// ended records how a trial ended, from its record.
func (tr *tracker) ended(i int, t trials.Trial) {
	tr.update(i, func(p *trials.TrialProgress) { *p = trials.ProgressOf(t) })
}

// finish ends the run: a trial that never started is cancelled.
func (tr *tracker) finish() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i := range tr.p.Trials {
		if tr.p.Trials[i].State == trials.StateQueued || tr.p.Trials[i].State == trials.StateRunning {
			tr.p.Trials[i].State = trials.StateCancelled
		}
	}
	end := time.Now().UTC()
	tr.p.End = &end
	tr.writeLocked()
}

func (tr *tracker) write() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.writeLocked()
}

// writeLocked writes the progress; a run goes on without it (the records
// are what count), and says so once.
func (tr *tracker) writeLocked() {
	tr.p.Updated = time.Now().UTC()
	if err := trials.WriteProgress(tr.dir, tr.p); err != nil && !tr.failed {
		tr.failed = true
		tr.say("the run's progress (%s): %v", trials.ProgressFile, err)
	}
}
