// Command showcase-trials measures API-testing tools over repeated trials:
// each tool's own command line, run N times, each time against a fresh
// instance of the showcase (the server make run starts, in this process)
// or a running deployment reset in between, within a time budget, at which
// the tool is sent SIGINT, then SIGTERM, then SIGKILL. It keeps each
// trial's report (scored even when cut short), log, exit status and ground
// truth, and writes a report over the trials: per tool and defect, in how
// many trials its operation was reached, it was triggered and the tool
// detected it, with the Kaplan-Meier median time to each from the tool's
// start; per pair of tools exact tests of whether one finds more, detects
// each defect more often and sooner, Holm-adjusted, with the verdicts in
// words; for three or more tools a ranking; and the charts.
//
//	showcase-trials -out out/trials \
//	    -tool replay -trials 10 -budget 1m -- bin/showcase-replay -base {url} -out {out}/report.csv \
//	    -tool weak -trials 10 -budget 1m -- bin/showcase-replay -weak -seed {seed} -base {url} -out {out}/report.csv
//
// In a command, {url} is the instance's base URL, {seed} the trial's seed
// (its number, or the -seeds list's), {out} the folder the tool writes
// into, its report among what it writes (-report picks it), and {defects}
// the instance's DEFECTS setting (for the reference tool: -defects
// {defects} lets it learn a mutant set, as the truth is made). A command runs
// to the next argument that is exactly -tool, or to the end. It writes
// DIR/report.md, DIR/report.html, DIR/report.json, DIR/chart.svg and
// DIR/chart.png, and a folder per tool and trial. Trials run one at a
// time unless -concurrency says otherwise: the timing defects (endpoints 9
// and 10) are about time, and trials sharing the cores change what a tool
// measures. -serve ADDR serves the run's live page (package watch) and its
// Prometheus metrics while it runs; -watch DIR -serve ADDR serves those of
// a run's folder, running elsewhere or ended.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/runner"
	"github.com/defectshowcase/showcase/judge/trials/watch"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/platform/version"
)

func main() {
	// The first SIGINT (Ctrl-C) or SIGTERM stops the run gently: the
	// trial running is ended as at its budget, none other starts, and what
	// ran is written. A second one has its default effect.
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	go func() {
		if sig, ok := <-sigs; ok {
			got.Store(sig)
			signal.Stop(sigs)
			cancel()
		}
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	var usage usageError
	var stopped *stoppedError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &stopped):
		// Its last line, and the exit status of a shell's command a
		// signal ended: 128 and the signal's number (130 for Ctrl-C).
		sig, _ := got.Load().(syscall.Signal)
		if sig == 0 {
			sig = syscall.SIGINT
		}
		fmt.Fprintf(os.Stderr, "showcase-trials: stopped by %s: %s\n", signalName(sig), stopped)
		os.Exit(128 + int(sig))
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "showcase-trials:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "showcase-trials:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

// stoppedError is a run stopped by a signal before its end: where its
// folder is and what it kept. Any other error of the run is in err.
type stoppedError struct {
	dir                                string
	collected, interrupted, notStarted int
	err                                error
}

func (e *stoppedError) Error() string {
	msg := fmt.Sprintf("%s keeps the %d trial(s) that ran, scored in report.md", e.dir, e.collected)
	if e.collected == 0 {
		msg = e.dir + " keeps no trial: none had started"
	}
	if e.interrupted > 0 {
		msg += fmt.Sprintf(" (%d cut short by the stop, recorded as interrupted)", e.interrupted)
	}
	if e.notStarted > 0 {
		msg += fmt.Sprintf("; %d never started", e.notStarted)
	}
	// The run's other errors, beside the stop itself.
	var others []string
	errs := []error{e.err}
	if j, ok := e.err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			others = append(others, err.Error())
		}
	}
	if len(others) > 0 {
		msg += "; and: " + strings.Join(others, "; ")
	}
	return msg
}

func (e *stoppedError) Unwrap() error { return e.err }

// stopped says what a run stopped by a signal kept, from its progress: the
// trials that ended (those the stop cut short among them) and those it
// never started.
func stopped(dir string, err error) *stoppedError {
	e := &stoppedError{dir: dir, err: err}
	p, _ := trials.ReadProgress(dir)
	if p == nil {
		return e
	}
	for _, t := range p.Trials {
		switch t.State {
		case trials.StateEnded:
			e.collected++
			if t.Outcome == "interrupted" {
				e.interrupted++
			}
		case trials.StateCancelled, trials.StateQueued:
			e.notStarted++
		}
	}
	return e
}

// signalName is a signal as a shell names it.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

const usage = `usage: showcase-trials [-out DIR] [-parallel N] [-defects SET | -base URL -admin URL]
        -tool NAME [-trials N] [-budget DUR] [-seeds LIST] [-report GLOB] -- COMMAND... [-tool ...]
       showcase-trials -experiment FILE [-on local|kube] [-namespace NS] [-out DIR] [-parallel N]
       showcase-trials -resume DIR [-kubeconfig FILE] [-parallel N]
       showcase-trials -clean -on kube [-namespace NS] [-run ID]
       showcase-trials -watch DIR -serve ADDR

Runs each tool's COMMAND -trials times; {url}, {seed}, {out} and {defects}
in it are the instance's URL, the trial's seed, the tool's output folder
and the instance's DEFECTS. An
experiment file states the same (docs/trials.md), and runs the same here
(-on local) and as Kubernetes Jobs (-on kube). -serve ADDR serves the run's
live page and /metrics while it runs, and after it until interrupted;
-watch DIR serves those of a run's folder, running elsewhere or ended.
-resume DIR finishes a campaign on a cluster whose runner died: what it
collected is kept, its Jobs are taken up again, the rest started.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := runner.Options{Progress: stderr}
	var c campaign
	gs := flag.NewFlagSet("showcase-trials", flag.ContinueOnError)
	gs.SetOutput(stderr)
	gs.Usage = func() { fmt.Fprint(stderr, usage); gs.PrintDefaults() }
	gs.StringVar(&o.Out, "out", "out/trials", "the folder of the run: the report, the chart, a folder per trial")
	gs.IntVar(&o.Concurrency, "parallel", 0, "trials at once (default: 1 here, as the timing defects are about time; on a cluster, what the nodes' allocatable CPU holds)")
	gs.IntVar(&o.Concurrency, "concurrency", 0, "the same as -parallel")
	var defects trials.Plan
	gs.TextVar(&defects, "defects", trials.PlanOf(catalogue.All()), trials.PlanUsage)
	firstSeed := gs.Uint64("mutant-seed", 1, "with -defects mutants[:N]: the seed of trial 1's mutant set (trial i's is this plus i-1)")
	gs.StringVar(&o.Base, "base", "", "a running deployment's base URL, instead of a fresh instance per trial")
	gs.StringVar(&o.Admin, "admin", "", "its admin URL (for the reset between trials and the ground truth)")
	gs.DurationVar(&o.InterruptGrace, "interrupt-grace", 10*time.Second, "at the budget, how long the tool has after SIGINT (as Ctrl-C) to close its report, before SIGTERM")
	gs.DurationVar(&o.TermGrace, "term-grace", 5*time.Second, "... and after SIGTERM, before SIGKILL")
	coverageKind := ""
	gs.StringVar(&coverageKind, "coverage", "", "record each trial's coverage over time and at its end: api (the instance's API coverage), or code (that and its code coverage: the instance built with COVER=1, -cover-binary here, the -cover image on a cluster)")
	gs.DurationVar(&o.Coverage.Every, "coverage-every", trials.DefaultCoverageEvery, "how often a trial's coverage is sampled")
	gs.StringVar(&o.CoverBinary, "cover-binary", runner.DefaultCoverBinary, "with -coverage code here: the gateway built with Go's coverage, run as each trial's instance")
	gs.StringVar(&c.file, "experiment", "", "an experiment file (YAML): the tools, trials, budget, seeds, defects and resources, instead of -tool groups")
	gs.StringVar(&c.on, "on", "local", "where the trials run: local (this machine) or kube (Kubernetes Jobs)")
	gs.StringVar(&c.namespace, "namespace", "", "on a cluster, the namespace (default: the kubeconfig's)")
	gs.StringVar(&c.kubeconfig, "kubeconfig", "", "on a cluster, the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the Pod's service account)")
	gs.DurationVar(&c.startTimeout, "start-timeout", 10*time.Minute, "on a cluster, how long a trial may take to start (scheduled, its images there, the instance ready) before it is recorded as not run")
	gs.DurationVar(&c.ttl, "ttl", 10*time.Minute, "on a cluster, how long a finished Job stays if the runner is gone")
	gs.BoolVar(&c.clean, "clean", false, "with -on kube: delete what runs left in the namespace (their Jobs, Pods and NetworkPolicies), and exit")
	gs.StringVar(&c.run, "run", "", "with -clean: only this run's (its ID, as its report gives it)")
	var serveAddr, watchDir, resumeDir string
	gs.StringVar(&resumeDir, "resume", "", "finish the campaign on a cluster in `DIR` whose runner died: keep the trials it collected, take up its Jobs (running, or ended while no runner was there), start the rest")
	gs.StringVar(&serveAddr, "serve", "", "serve the run's live page, its events and /metrics at `ADDR` (host:port: 127.0.0.1:9095 keeps it to this machine), while the run goes and after it until interrupted")
	gs.StringVar(&watchDir, "watch", "", "with -serve: serve the page of the run in `DIR` (running elsewhere, or ended) instead of running one")
	showVersion := gs.Bool("version", false, "print the version and exit")
	groups := len(args)
	if i := slices.IndexFunc(args, func(a string) bool { return a == "-tool" || a == "--tool" }); i >= 0 {
		groups = i
	}
	if err := gs.Parse(args[:groups]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "showcase-trials", version.String())
		return err
	}
	c.set = map[string]bool{}
	gs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	o.Defects = defects
	o.Defects.FirstSeed = *firstSeed
	var err error
	if o.Coverage.Kind, err = trials.ParseCoverageKind(coverageKind); err != nil {
		return usageError{err}
	}
	if gs.NArg() > 0 {
		return usageError{fmt.Errorf("%q: the tools' groups begin with -tool NAME", gs.Arg(0))}
	}
	if c.on != "local" && c.on != "kube" {
		return usageError{fmt.Errorf("-on %s: local or kube", c.on)}
	}
	if watchDir != "" {
		if serveAddr == "" {
			return usageError{errors.New("-watch DIR needs -serve ADDR: where to serve its page")}
		}
		if len(args[groups:]) > 0 || c.file != "" || c.clean {
			return usageError{errors.New("-watch serves a run's folder; it runs nothing (no -tool, -experiment or -clean)")}
		}
		if fi, err := os.Stat(watchDir); err != nil || !fi.IsDir() {
			return usageError{fmt.Errorf("-watch %s: not a folder", watchDir)}
		}
		stop, err := serve(serveAddr, watchDir, stderr)
		if err != nil {
			return err
		}
		<-ctx.Done()
		stop()
		return nil
	}
	if resumeDir != "" {
		if len(args[groups:]) > 0 || c.file != "" || c.clean || c.set["out"] || c.set["on"] || c.set["run"] {
			return usageError{errors.New("-resume DIR takes the run as its folder records it: no -tool, -experiment, -out, -on, -run or -clean")}
		}
		if err := c.resume(resumeDir, &o); err != nil {
			return err
		}
	}
	if c.clean {
		if c.on != "kube" {
			return usageError{errors.New("-clean is for a cluster: -clean -on kube")}
		}
		return cleanCluster(ctx, c, stderr)
	}
	tools, out, err := parseTools(args[groups:], stderr)
	if err != nil {
		return usageError{err}
	}
	if c.resumed != nil {
		if tools, err = c.fromFile(&o); err != nil {
			return err
		}
		if c.exp.SHA256 != c.resumed.ExperimentSHA256 {
			return fmt.Errorf("%s: its SHA-256 is not the one %s records: the run's file was changed", c.file, trials.RunFile)
		}
	}
	if out != "" {
		o.Out = out // the interface the issue named: -out among a tool's flags
	}
	if c.file != "" && c.resumed == nil {
		if len(tools) > 0 {
			return usageError{errors.New("-experiment and -tool: the tools come from one place, the file or the flags")}
		}
		if tools, err = c.fromFile(&o); err != nil {
			return usageError{err}
		}
	}
	if len(tools) == 0 {
		return usageError{errors.New("no -tool: -h for usage")}
	}
	if c.on == "kube" && o.Base != "" {
		return usageError{errors.New("-base is a running deployment: on a cluster each trial has a fresh instance of its own")}
	}
	// One runner a folder: the lock is the kernel's, so a runner that
	// dies, even of SIGKILL, lets go of it.
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	unlock, err := lockRun(o.Out)
	if err != nil {
		return err
	}
	defer unlock()
	prov := c.provenance(o, tools)
	if o.Coverage.Kind != "" {
		prov.Coverage, prov.CoverageEvery = o.Coverage.Kind, o.Coverage.EveryOrDefault().Seconds()
	}
	o.Where = c.on
	if c.on == "kube" {
		if err := c.connect(ctx, &o, tools, &prov, stderr); err != nil {
			return err
		}
	} else if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	prov.Parallel = o.Concurrency
	o.Run = prov.Run
	if serveAddr != "" {
		// The page shows this run from its first moment, not what an
		// earlier run left in the folder: the runner's progress follows.
		// Resumed, the folder's progress is this run's.
		if !o.Resume {
			if err := trials.WriteProgress(o.Out, trials.Progress{Where: o.Where, Run: o.Run, Start: time.Now().UTC(), Trials: []trials.TrialProgress{}}); err != nil {
				return err
			}
		}
		stop, err := serve(serveAddr, o.Out, stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.exp != nil && c.resumed == nil {
		if err := os.WriteFile(filepath.Join(o.Out, trials.ExperimentFile), c.exp.Raw, 0o644); err != nil {
			return err
		}
		sum := c.exp.SHA256 + "  " + trials.ExperimentFile + "\n"
		if err := os.WriteFile(filepath.Join(o.Out, trials.ExperimentSum), []byte(sum), 0o644); err != nil {
			return err
		}
	}
	prov.Start = time.Now()
	prov.Starts = []time.Time{prov.Start}
	if r := c.resumed; r != nil {
		prov.Start, prov.Starts = r.Start, append(r.Starts, time.Now())
		fmt.Fprintf(stderr, "showcase-trials: resuming run %s (start %d of its runner; the first %s)\n", prov.Run, len(prov.Starts), r.Start.UTC().Format(time.RFC3339))
	}
	if err := trials.WriteProvenance(o.Out, prov); err != nil {
		return err
	}
	ts, runErr := runner.Run(ctx, o, tools)
	prov.End = time.Now()
	if err := trials.WriteProvenance(o.Out, prov); err != nil {
		return errors.Join(runErr, err)
	}
	if len(ts) > 0 {
		if err := trials.WriteRun(o.Out, ts); err != nil {
			return errors.Join(runErr, err)
		}
		fmt.Fprintf(stderr, "showcase-trials: %s\n", filepath.Join(o.Out, "report.md"))
	}
	if errors.Is(runErr, context.Canceled) && ctx.Err() != nil {
		return stopped(o.Out, runErr)
	}
	if len(ts) == 0 {
		return runErr
	}
	if serveAddr != "" && ctx.Err() == nil {
		fmt.Fprintln(stderr, "showcase-trials: the run has ended; its page is served until interrupted (Ctrl-C)")
		<-ctx.Done()
	}
	return runErr
}

// serve serves the live page of the run in dir at addr until stop is
// called: the server, its limits and its graceful stop are the services'
// (platform/server), its log lines on stderr.
func serve(addr, dir string, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-serve %s: %w", addr, err)
	}
	w := watch.New(watch.Options{Dir: dir, Version: version.String()})
	srv := server.New(w.Handler(), slog.New(slog.NewTextHandler(stderr, nil)), server.DefaultLimits)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = server.Serve(ctx, srv, ln, 5*time.Second)
	}()
	fmt.Fprintf(stderr, "showcase-trials: the run's live page: http://%s/ (its metrics: /metrics)\n", ln.Addr())
	return func() {
		w.Close() // the pages' streams end first: the graceful stop waits for them
		cancel()
		<-done
	}, nil
}

// parseTools reads the groups: -tool NAME and its flags, --, the command
// up to the next -tool. A group may name the run's folder too (-out), as
// the global flag does; every group that names it must name the same.
func parseTools(args []string, stderr io.Writer) (tools []runner.Tool, out string, err error) {
	for len(args) > 0 {
		if args[0] != "-tool" && args[0] != "--tool" {
			return nil, "", fmt.Errorf("%q: a group begins with -tool NAME", args[0])
		}
		sep := slices.Index(args, "--")
		if sep < 0 {
			return nil, "", errors.New("-tool without -- COMMAND")
		}
		var t runner.Tool
		var seeds, groupOut string
		fs := flag.NewFlagSet("tool", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.StringVar(&t.Name, "tool", "", "the tool's name, as the report shows it")
		fs.IntVar(&t.Trials, "trials", 10, "how many trials (at least 10 to compare tools: Arcuri and Briand)")
		fs.DurationVar(&t.Budget, "budget", 10*time.Minute, "each trial's time; the tool is stopped at it, its report kept")
		fs.StringVar(&seeds, "seeds", "", "the trials' seeds, comma-separated (default: each trial's number)")
		fs.StringVar(&t.Report, "report", "", "the report to score, a glob in {out} (default: the first file the scorer reads)")
		fs.StringVar(&groupOut, "out", "", "the run's folder, as the global -out")
		if err := fs.Parse(args[:sep]); err != nil {
			return nil, "", err
		}
		if fs.NArg() > 0 {
			return nil, "", fmt.Errorf("%q before --: the command comes after it", fs.Arg(0))
		}
		if t.Name == "" {
			return nil, "", errors.New("-tool needs a name")
		}
		if groupOut != "" {
			if out != "" && out != groupOut {
				return nil, "", fmt.Errorf("-out %s and -out %s: one run, one folder", out, groupOut)
			}
			out = groupOut
		}
		if seeds != "" {
			t.Seeds = strings.Split(seeds, ",")
		}
		rest := args[sep+1:]
		end := slices.Index(rest, "-tool")
		if end < 0 {
			end = len(rest)
		}
		t.Command, args = rest[:end], rest[end:]
		if len(t.Command) == 0 {
			return nil, "", fmt.Errorf("%s: no command after --", t.Name)
		}
		tools = append(tools, t)
	}
	return tools, out, nil
}
