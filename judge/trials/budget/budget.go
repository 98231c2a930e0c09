// Package budget runs a tool's command within a time budget and stops it
// as a person at a terminal would: at the budget, or when told to stop
// sooner, SIGINT (Ctrl-C) to its whole process group, then SIGTERM, then
// SIGKILL, each after a grace it records, so that a tool can close its
// report. The trial runner uses it on this machine, and showcase-agent
// inside a trial's Pod, so that a trial stops the same way wherever it runs.
package budget

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/judge/trials"
)

// Limits are how long a tool may run, and its graces after SIGINT and
// SIGTERM (defaults 10 s and 5 s: Schemathesis 4.9.5 closes its report
// within 0.4 s of SIGINT, and dies without closing it on SIGTERM).
type Limits struct {
	Budget                    time.Duration
	InterruptGrace, TermGrace time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.InterruptGrace <= 0 {
		l.InterruptGrace = 10 * time.Second
	}
	if l.TermGrace <= 0 {
		l.TermGrace = 5 * time.Second
	}
	return l
}

// Result is how the tool ended.
type Result struct {
	Start   time.Time
	Seconds float64
	// Outcome: "finished" (exit 0), "exit N", "stopped at the budget",
	// "interrupted" (told to stop before its budget), or "failed to
	// start: …".
	Outcome  string
	ExitCode int
	Signals  []trials.Signal
}

// Apply copies the result into a trial's record.
func (r Result) Apply(t *trials.Trial) {
	t.Start, t.Seconds, t.Outcome, t.ExitCode, t.Signals = r.Start, r.Seconds, r.Outcome, r.ExitCode, r.Signals
}

// Run starts cmd in a process group of its own and waits for it, at most
// the budget; stop, when it closes first, ends it sooner (the outcome is
// then "interrupted"). Whatever the tool started and left behind in its
// group is killed once it has ended.
func Run(cmd *exec.Cmd, l Limits, stop <-chan struct{}) Result {
	l = l.withDefaults()
	ownGroup(cmd) // stopped with everything it started
	r := Result{Start: time.Now()}
	if err := cmd.Start(); err != nil {
		r.Outcome, r.ExitCode = "failed to start: "+err.Error(), -1
		return r
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(l.Budget)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		err = end(l, cmd, &r, done)
		r.Outcome = "stopped at the budget"
	case <-stop:
		err = end(l, cmd, &r, done)
		r.Outcome = "interrupted"
	}
	r.ExitCode = cmd.ProcessState.ExitCode()
	signalGroup(cmd, syscall.SIGKILL) // what it started and left behind
	if r.Outcome == "" {
		var exit *exec.ExitError
		switch {
		case err == nil:
			r.Outcome = "finished"
		case errors.As(err, &exit):
			r.Outcome = fmt.Sprintf("exit %d", r.ExitCode)
		default:
			r.Outcome = err.Error()
		}
	}
	r.Seconds = time.Since(r.Start).Seconds()
	return r
}

// end sends the process group SIGINT, then SIGTERM, then SIGKILL, each
// after its grace, recording each signal sent; it returns how the tool
// ended.
func end(l Limits, cmd *exec.Cmd, r *Result, done <-chan error) error {
	steps := []struct {
		sig   syscall.Signal
		name  string
		grace time.Duration
	}{{syscall.SIGINT, "SIGINT", l.InterruptGrace}, {syscall.SIGTERM, "SIGTERM", l.TermGrace}, {syscall.SIGKILL, "SIGKILL", 0}}
	for _, s := range steps {
		r.Signals = append(r.Signals, trials.Signal{Signal: s.name, After: time.Since(r.Start).Seconds(), Grace: s.grace.Seconds()})
		signalGroup(cmd, s.sig)
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
