// Package runner runs the trials: a tool's own command line, N times,
// each against a fresh instance of the showcase (the server make run
// starts, in this process, on loopback ports of its own) or a running
// deployment reset in between, within a time budget; at the budget it
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
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
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
	Out string // the run's folder; relative to the working directory, or absolute
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
	// InterruptGrace is how long a tool has to end after SIGINT, and
	// TermGrace after SIGTERM, before the next signal (default 10 s and
	// 5 s): Schemathesis 4.9.5 closes its report within 0.4 s of SIGINT,
	// and dies without closing it on SIGTERM.
	InterruptGrace, TermGrace time.Duration
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
	if o.Defects == (catalogue.Set{}) {
		o.Defects = catalogue.All()
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
		tool  Tool
		trial *trials.Trial
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
			jobs = append(jobs, &job{tool: tl, trial: &trials.Trial{Tool: tl.Name, Number: i, Seed: seed, Budget: tl.Budget.Seconds(),
				Dir: filepath.Join(slug(tl.Name), fmt.Sprintf("trial-%02d", i))}})
		}
	}
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, j := range jobs {
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
			if err := runTrial(ctx, o, j.tool, j.trial); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s trial %d: %w", j.trial.Tool, j.trial.Number, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
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

func runTrial(ctx context.Context, o Options, tl Tool, t *trials.Trial) error {
	dir := filepath.Join(o.Out, t.Dir)
	out := filepath.Join(dir, trials.ToolDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	inst, err := newInstance(ctx, o, dir)
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
	logf, err := os.Create(filepath.Join(dir, trials.LogFile))
	if err != nil {
		return err
	}
	defer logf.Close()

	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Dir = out
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stopped with everything it started
	t.InstanceSince = inst.Since()
	t.Start = time.Now()
	budget, cancel := context.WithTimeout(ctx, tl.Budget)
	defer cancel()
	if err := cmd.Start(); err != nil {
		t.Outcome = "failed to start: " + err.Error()
		t.ExitCode = -1
	} else {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-budget.Done():
			err = stop(o, cmd, t, done)
			t.Outcome = "stopped at the budget"
			if ctx.Err() != nil {
				t.Outcome = "interrupted"
			}
		}
		t.ExitCode = cmd.ProcessState.ExitCode()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it started and left behind
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

	// The ground truth even when the run was interrupted: the trial ran.
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer tcancel()
	raw, err := inst.Truth(tctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, trials.TruthFile), raw, 0o644); err != nil {
		return err
	}
	if err := trials.ScoreTrial(o.Out, t, tl.Report); err != nil {
		return err
	}
	if err := trials.WriteRecord(o.Out, *t); err != nil {
		return err
	}
	s := fmt.Sprintf("%s trial %d: %s in %.1f s, %d requests; ", t.Tool, t.Number, t.Outcome, t.Seconds, t.Requests)
	r, tr := 0, 0
	for _, st := range t.Stages {
		r += b2i(st.Reached)
		tr += b2i(st.Triggered)
	}
	s += fmt.Sprintf("reached %d, triggered %d, ", r, tr)
	switch {
	case t.Report == "":
		s += "no report (" + t.NoReport + ")"
	case t.Truncated != "":
		s += fmt.Sprintf("detected %d (%s, truncated: %s)", t.Detected(), t.Report, t.Truncated)
	default:
		s += fmt.Sprintf("detected %d (%s)", t.Detected(), t.Report)
	}
	progress(o, "%s", s)
	return nil
}

// stop ends the tool's process group as a person at a terminal would:
// SIGINT (Ctrl-C), then SIGTERM, then SIGKILL, each after its grace,
// recording each signal sent; it returns how the tool ended.
func stop(o Options, cmd *exec.Cmd, t *trials.Trial, done <-chan error) error {
	steps := []struct {
		sig   syscall.Signal
		name  string
		grace time.Duration
	}{{syscall.SIGINT, "SIGINT", o.InterruptGrace}, {syscall.SIGTERM, "SIGTERM", o.TermGrace}, {syscall.SIGKILL, "SIGKILL", 0}}
	for _, s := range steps {
		t.Signals = append(t.Signals, trials.Signal{Signal: s.name, After: time.Since(t.Start).Seconds(), Grace: s.grace.Seconds()})
		_ = syscall.Kill(-cmd.Process.Pid, s.sig)
		if s.grace == 0 {
			break
		}
		select {
		case err := <-done:
			return err
		case <-time.After(s.grace):
		}
	}
	return <-done
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
