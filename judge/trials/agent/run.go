package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/budget"
)

// Options are a trial as the agent runs it.
type Options struct {
	Dir     string // the trial's folder: the tool writes into Dir/out
	Admin   string // the instance's admin URL (on the Pod's loopback)
	Limits  budget.Limits
	Command []string // the tool's, {url}, {seed} and {out} filled in
	Version string   // the agent's
	// Coverage is what coverage to record of the instance while the tool
	// runs, into the trial's folder (it goes back with it).
	Coverage trials.CoverageOptions
}

// Run runs the tool (its output to Dir/tool.log, its working folder
// Dir/out) within its limits, recording the instance's coverage as asked, stopping it sooner once ctx ends (the Pod is
// being deleted: the runner was interrupted); then takes the ground truth
// into Dir/exposure.json, says how it went in Dir/agent.json, and writes
// the folder to w. It returns an error only when the folder could not be
// written.
func Run(ctx context.Context, o Options, w io.Writer) error {
	out := filepath.Join(o.Dir, trials.ToolDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r := Result{Command: o.Command, Machine: trials.ThisMachine(), Version: o.Version}
	logf, err := os.Create(filepath.Join(o.Dir, trials.LogFile))
	if err != nil {
		return err
	}
	r.ToolVersion = PrintedVersion(o.Command[0])
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Dir = out
	cmd.Stdout, cmd.Stderr = logf, logf
	stopLive := sayLive(ctx, o.Admin, w)
	stopCoverage := RecordCoverage(ctx, o.Coverage, o.Admin, o.Dir, time.Now())
	br := budget.Run(cmd, o.Limits, ctx.Done())
	stopLive()
	stopCoverage()
	logf.Close()
	r.Start, r.Seconds, r.Outcome, r.ExitCode, r.Signals = br.Start, br.Seconds, br.Outcome, br.ExitCode, br.Signals

	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if raw, err := FetchTruth(tctx, &http.Client{Timeout: 30 * time.Second}, o.Admin); err != nil {
		r.Error = err.Error()
	} else if err := os.WriteFile(filepath.Join(o.Dir, trials.TruthFile), raw, 0o644); err != nil {
		r.Error = err.Error()
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(o.Dir, ResultFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return WriteFolder(w, o.Dir)
}

// PrintedVersion is the first line a program prints for --version, when
// it answers so within a few seconds; "" otherwise.
func PrintedVersion(program string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, "--version").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

// LivePrefix begins a line of the agent's log that says what the
// instance has seen so far (trials.Live as JSON): the runner reads them as
// the log comes, for the run's progress.
const LivePrefix = "showcase-agent: live "

// sayLive writes a live line to w every trials.LiveInterval while the
// tool runs, until the returned function is called (it returns once the
// last line is written: the folder follows on the same writer).
func sayLive(ctx context.Context, admin string, w io.Writer) (stop func()) {
	client := &http.Client{Timeout: 5 * time.Second}
	fetch := func(ctx context.Context) ([]byte, error) { return FetchTruth(ctx, client, admin) }
	fetchCoverage := func(ctx context.Context) (*coverage.Report, error) {
		c, _, err := FetchCoverage(ctx, client, admin)
		return c, err
	}
	return WatchLive(ctx, fetch, fetchCoverage, func(l trials.Live) {
		b, _ := json.Marshal(l)
		_, _ = io.WriteString(w, LivePrefix+string(b)+"\n")
	})
}

// WatchLive asks fetch for the instance's ground truth every
// trials.LiveInterval, and fetchCoverage (if not nil) for its API
// coverage, and gives live what they say of the trial so far, until the
// returned function is called (it returns once the asking has stopped).
// An answer that does not come or does not parse is skipped: the next tick
// asks again, and the trial's own record is what counts.
func WatchLive(ctx context.Context, fetch func(context.Context) ([]byte, error), fetchCoverage func(context.Context) (*coverage.Report, error), live func(trials.Live)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(trials.LiveInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			raw, err := fetch(ctx)
			var t catalogue.Truth
			if err != nil || json.Unmarshal(raw, &t) != nil {
				continue
			}
			l := trials.LiveOf(t, time.Now())
			if fetchCoverage != nil {
				if c, err := fetchCoverage(ctx); err == nil {
					l.Coverage = trials.LiveCoverageOf(c)
				}
			}
			live(l)
		}
	}()
	return func() { cancel(); <-done }
}

// LiveLines passes what is written to w on, and gives each live line in
// it to live.
func LiveLines(w io.Writer, live func(trials.Live)) io.Writer {
	return &liveWriter{w: w, live: live}
}

type liveWriter struct {
	w    io.Writer
	live func(trials.Live)
	line []byte // the line begun, up to a bound: a folder's lines are 76 bytes
}

func (l *liveWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	for _, c := range p[:n] {
		if c != '\n' {
			if len(l.line) < 64<<10 {
				l.line = append(l.line, c)
			}
			continue
		}
		if rest, ok := bytes.CutPrefix(l.line, []byte(LivePrefix)); ok {
			var lv trials.Live
			if json.Unmarshal(rest, &lv) == nil {
				l.live(lv)
			}
		}
		l.line = l.line[:0]
	}
	return n, err
}
