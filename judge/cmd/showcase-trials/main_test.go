package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

func readSummary(t *testing.T, dir string) trials.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, trials.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	var s trials.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// binaries builds the programs the docs run into a folder of their own,
// as make build would into bin/.
func binaries(t *testing.T, names ...string) string {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + "/"}
	for _, n := range names {
		args = append(args, "../"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// repoRoot is the repository's root, where the docs' commands run.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Fatal(err)
	}
	return root
}

// relativeOut is a folder under the repository's out/ (ignored by git),
// named relative to the root as a user would, removed after the test.
func relativeOut(t *testing.T, root, name string) string {
	t.Helper()
	rel := filepath.Join("out", fmt.Sprintf("test-%s-%d", name, os.Getpid()))
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(root, rel)) })
	return rel
}

// make trials, as the docs give it, from the repository's root with its
// relative TRIALS_OUT (a fresh clone failed it: every trial lost its
// report to a relative path): ten trials of the reference tool and ten of
// the weak one, each against a fresh instance, with no outside tool. The
// reference finds all ten defects in every trial, in the catalogue's
// order (the server's first trigger of each has a later request index and
// time than the one before), never before the server saw it triggered;
// the weak one a subset that varies with its seed, never detecting what
// it did not trigger nor triggering what it did not reach; the comparison
// says the reference finds more, in 10 of 10 trials, Â12 1; the report is
// written as Markdown, JSON and a chart in SVG and PNG.
func TestReferenceAgainstWeak(t *testing.T) {
	root := repoRoot(t)
	bin := binaries(t, "showcase-trials", "showcase-replay")
	rel := relativeOut(t, root, "trials")
	cmd := exec.Command("make", "-s", "-o", "build", "trials", "BIN="+bin, "TRIALS_OUT="+rel)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make trials: %v\n%s", err, stderr.String())
	}
	out := filepath.Join(root, rel)
	if !strings.Contains(stderr.String(), "trials: weak trial 10:") {
		t.Errorf("no progress:\n%s", stderr.String())
	}
	s := readSummary(t, out)
	if len(s.Trials) != 20 || len(s.Tools) != 2 || len(s.Pairs) != 1 {
		t.Fatalf("%d trials, %d tools, %d pairs", len(s.Trials), len(s.Tools), len(s.Pairs))
	}
	weakCounts := map[int]bool{}
	for _, tr := range s.Trials {
		if tr.Outcome != "finished" || tr.TestedNothing() || tr.Report == "" || tr.Truncated != "" {
			t.Errorf("%s trial %d: %s, tested nothing %v, report %q (%s)", tr.Tool, tr.Number, tr.Outcome, tr.TestedNothing(), tr.Report, tr.NoReport)
		}
		if _, err := os.Stat(filepath.Join(out, tr.Report)); err != nil {
			t.Errorf("%s trial %d: its report: %v", tr.Tool, tr.Number, err)
		}
		for _, st := range tr.Stages {
			if st.Detected && (st.DetectedAfter == nil || st.TriggeredAfter == nil || *st.DetectedAfter < *st.TriggeredAfter) {
				t.Errorf("%s trial %d: %s detected before it was triggered: %+v", tr.Tool, tr.Number, st.ID, st)
			}
		}
		if tr.Tool == "replay" {
			if tr.Detected() != 10 {
				t.Errorf("replay trial %d detected %d", tr.Number, tr.Detected())
			}
			var lastReq uint64
			lastAt := -1.0
			for _, st := range tr.Stages {
				if !st.Reached || !st.Triggered || !st.Detected || st.TriggeredRequest == nil || st.DetectedAfter == nil || st.TriggeredAfter == nil {
					t.Fatalf("replay trial %d %s: %+v", tr.Number, st.ID, st)
				}
				if *st.TriggeredRequest <= lastReq || *st.TriggeredAfter < lastAt {
					t.Errorf("replay trial %d: %s triggered by request %d at %.3f s, after %d at %.3f s: not in order", tr.Number, st.ID, *st.TriggeredRequest, *st.TriggeredAfter, lastReq, lastAt)
				}
				if want := slices.IndexFunc(catalogue.Defects, func(d catalogue.Defect) bool { return d.ID == st.ID }) + 1; st.DetectedOrder != want {
					t.Errorf("replay trial %d: %s detected %d-th in the report, want %d-th", tr.Number, st.ID, st.DetectedOrder, want)
				}
				lastReq, lastAt = *st.TriggeredRequest, *st.TriggeredAfter
			}
			continue
		}
		weakCounts[tr.Detected()] = true
		for _, st := range tr.Stages {
			if st.Detected && !st.Triggered || st.Triggered && !st.Reached {
				t.Errorf("weak trial %d %s: %+v", tr.Number, st.ID, st)
			}
		}
	}
	if len(weakCounts) < 2 || weakCounts[10] && len(weakCounts) == 1 {
		t.Errorf("the weak tool's finds do not vary: %v", weakCounts)
	}
	checkTrialCoverage(t, s.Trials)
	v := s.Pairs[0].Verdicts[0]
	if v.Measure != "defects detected per trial" || v.Better != "replay" || *v.A12 != 1 || v.Adjusted >= 0.01 || v.Adjusted < v.P ||
		!strings.HasPrefix(v.Words, "replay finds more defects per trial than weak: median 10 against") || !strings.Contains(v.Words, "more in 10 of 10 trials by number, Â12 1.00") {
		t.Errorf("the verdict: %+v", v)
	}
	// The progress the live page reads: every trial ended, as its record.
	p, err := trials.ReadProgress(out)
	if err != nil || p == nil || p.End == nil || p.Where != "local" || len(p.Trials) != 20 {
		t.Fatalf("progress.json: %+v %v", p, err)
	}
	for i, tp := range p.Trials {
		if tr := s.Trials[i]; tp.State != trials.StateEnded || tp.Tool != tr.Tool || tp.Number != tr.Number || tp.Detected != tr.Detected() || tp.Outcome != tr.Outcome || tp.Seconds != tr.Seconds {
			t.Errorf("progress of %s trial %d: %+v, its record: detected %d, %s", tr.Tool, tr.Number, tp, tr.Detected(), tr.Outcome)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	for _, want := range []string{"## replay: 10 trials, budget 60.0 s", "## weak: 10 trials", "| PERF-02 | 10/10 | 10/10 | 10/10 |", "replay finds more defects per trial than weak", "chart.svg"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, trials.ChartSVG))
	if err := xml.Unmarshal(svg, new(struct{})); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("chart.svg: %v", err)
	}
	f, err := os.Open(filepath.Join(out, trials.ChartPNG))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 600 {
		t.Errorf("chart.png: %v", err)
	}
}

// A tool that cannot start, one that hangs past its budget, and one that
// writes no report are each recorded as such, never as a clean trial;
// one that ignores SIGINT and SIGTERM is killed, each signal recorded; one
// stopped while writing its report has it scored for what it holds, marked
// truncated (here another run's report, so its findings are spurious). Each is the scorecard's "tested nothing": no request reached
// an operation.
func TestToolsThatTestNothing(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cut, err := os.ReadFile("../../trials/testdata/schemathesis-4.9.5-trials/stopped-at-8s/schemathesis/trial-01/out/ndjson-20261125T052058Z.ndjson.gz")
	if err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(out, "partial.ndjson.gz")
	if err := os.WriteFile(partial, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), []string{"-out", out, "-interrupt-grace", "300ms", "-term-grace", "300ms",
		"-tool", "missing", "-trials", "1", "--", filepath.Join(out, "no-such-program"),
		"-tool", "hangs", "-trials", "1", "-budget", "500ms", "--", "sleep", "30",
		"-tool", "stubborn", "-trials", "1", "-budget", "500ms", "--", "sh", "-c", "trap '' INT TERM; sleep 30",
		"-tool", "cut", "-trials", "1", "-budget", "500ms", "--", "sh", "-c", "cp " + partial + " {out}/; sleep 30",
		"-tool", "silent", "-trials", "1", "--", "true",
	}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	want := map[string]string{"missing": "failed to start", "hangs": "stopped at the budget", "stubborn": "stopped at the budget", "cut": "stopped at the budget", "silent": "finished"}
	signals := map[string][]string{"hangs": {"SIGINT"}, "stubborn": {"SIGINT", "SIGTERM", "SIGKILL"}, "cut": {"SIGINT"}}
	for _, tr := range s.Trials {
		var sent []string
		for _, sg := range tr.Signals {
			sent = append(sent, sg.Signal)
			if sg.After < 0.5 || (sg.Signal != "SIGKILL" && sg.Grace != 0.3) {
				t.Errorf("%s: %s sent at %.2f s with %.2f s of grace", tr.Tool, sg.Signal, sg.After, sg.Grace)
			}
		}
		if !strings.HasPrefix(tr.Outcome, want[tr.Tool]) || !tr.TestedNothing() || !slices.Equal(sent, signals[tr.Tool]) {
			t.Errorf("%s: outcome %q, tested nothing %v, signals %v", tr.Tool, tr.Outcome, tr.TestedNothing(), sent)
		}
		if tr.Tool == "cut" {
			// Its report is another run's: every finding in it is of a
			// defect its own instance never triggered, so spurious.
			if tr.Report == "" || tr.Truncated == "" || tr.Detected() != 0 || tr.Spurious() == 0 {
				t.Errorf("cut: report %q, truncated %q, detected %d, spurious %d (%s)", tr.Report, tr.Truncated, tr.Detected(), tr.Spurious(), tr.NoReport)
			}
		} else if tr.Report != "" || tr.NoReport == "" || tr.Detected() != 0 {
			t.Errorf("%s: report %q (%q), detected %d", tr.Tool, tr.Report, tr.NoReport, tr.Detected())
		}
	}
	for _, ts := range s.Tools {
		if !slices.Equal(ts.TestedNothing, []int{1}) {
			t.Errorf("%s: tested nothing %v", ts.Tool, ts.TestedNothing)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	for _, w := range []string{"**Trials 1 tested nothing**", "left no report the scorer reads", "cut short"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md)
		}
	}
}

// startSleepers starts a run of n trials of sleep 30 into out, and
// returns once its first trial has started; the run's error comes on the
// channel once ctx ends it.
func startSleepers(ctx context.Context, out string, n int) <-chan error {
	pr, pw := io.Pipe()
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "sleeper trial 1: starting") {
				close(started)
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-out", out, "-interrupt-grace", "300ms", "-tool", "sleeper", "-trials", strconv.Itoa(n), "-budget", "1m", "--", "sleep", "30"}, io.Discard, pw)
		pw.Close()
	}()
	<-started
	return done
}

// A run interrupted (its context ended, as by Ctrl-C) stops the trial
// running as at its budget, marks it interrupted, and starts no other.
func TestInterruptedRunStartsNoTrial(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	done := startSleepers(ctx, out, 3)
	// While it runs, its progress says so: started, and what its instance
	// has seen, asked every second.
	var p *trials.Progress
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if p, _ = trials.ReadProgress(out); p != nil && p.Trials[0].Live != nil {
			break
		}
	}
	if p == nil || p.Trials[0].State != trials.StateRunning || p.Trials[0].Start == nil || p.Trials[0].Live == nil || p.Trials[1].State != trials.StateQueued || p.End != nil {
		t.Errorf("the progress while trial 1 runs: %+v", p)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("run: %v, want it canceled", err)
	}
	s := readSummary(t, out)
	if len(s.Trials) != 1 || s.Trials[0].Outcome != "interrupted" || len(s.Trials[0].Signals) != 1 {
		t.Errorf("%d trials ran: %+v", len(s.Trials), s.Trials)
	}
	// Then: trial 1 ended, interrupted; the others cancelled; the run ended.
	p, err := trials.ReadProgress(out)
	if err != nil || p == nil || p.End == nil || p.Trials[0].State != trials.StateEnded || p.Trials[0].Outcome != "interrupted" || p.Trials[0].Live != nil ||
		p.Trials[1].State != trials.StateCancelled || p.Trials[2].State != trials.StateCancelled {
		t.Errorf("the progress after: %+v %v", p, err)
	}
}

// Against a running deployment, the instance is reset before each trial:
// each trial's counts are its own.
func TestRunningDeployment(t *testing.T) {
	t.Parallel()
	built, err := server.Build(gateway.Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(built.Handler)
	mux := http.NewServeMux()
	for pattern, h := range built.Admin {
		mux.Handle(pattern, h)
	}
	admin := httptest.NewServer(mux)
	t.Cleanup(func() { api.Close(); admin.Close(); _ = built.Close() })
	replay := filepath.Join(binaries(t, "showcase-replay"), "showcase-replay")
	out := t.TempDir()
	err = run(t.Context(), []string{"-out", out, "-base", api.URL, "-admin", admin.URL,
		"-tool", "replay", "-trials", "2", "--", replay, "-base", "{url}", "-out", "{out}/report.csv"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	if len(s.Trials) != 2 || s.Trials[0].Requests == 0 || s.Trials[0].Requests != s.Trials[1].Requests || s.Trials[1].Detected() != 10 {
		t.Errorf("the trials' requests %d and %d, detected %d", s.Trials[0].Requests, s.Trials[1].Requests, s.Trials[1].Detected())
	}
	// With concurrency, a shared deployment is refused.
	if err := run(t.Context(), []string{"-out", out, "-base", api.URL, "-admin", admin.URL, "-concurrency", "2", "-tool", "x", "--", "true"}, io.Discard, io.Discard); err == nil {
		t.Error("concurrent trials against one deployment were run")
	}
}

// The command line: groups begin with -tool, a command runs to the next
// -tool, and a malformed one is a usage error.
func TestParseTools(t *testing.T) {
	t.Parallel()
	tools, out, err := parseTools([]string{"-tool", "a", "-trials", "3", "-seeds", "7,8,9", "-out", "runs/x", "--", "st", "run", "{url}", "-tool", "b", "--", "nuclei", "-u", "{url}"}, io.Discard)
	if err != nil || len(tools) != 2 || tools[0].Trials != 3 || !slices.Equal(tools[0].Seeds, []string{"7", "8", "9"}) || out != "runs/x" ||
		!slices.Equal(tools[0].Command, []string{"st", "run", "{url}"}) || !slices.Equal(tools[1].Command, []string{"nuclei", "-u", "{url}"}) || tools[1].Trials != 10 {
		t.Fatalf("%v %+v", err, tools)
	}
	for _, bad := range [][]string{{"st", "run"}, {"-tool", "a", "st"}, {"-tool", "a", "--"}, {"-tool", "", "--", "x"},
		{"-tool", "a", "-out", "x", "--", "t", "-tool", "b", "-out", "y", "--", "t"}} {
		if _, _, err := parseTools(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Every showcase-trials and showcase-score command of docs/trials.md, run
// as written from the repository's root with its relative -out, the
// programs built as make build builds them. The tools they name are not
// on this machine (Schemathesis, APIFuzzer): each trial fails to start and
// is recorded so, and what is checked is the command as the docs give it:
// its flags, its relative paths, its report and the comparison of the runs.
func TestDocumentedCommands(t *testing.T) {
	root := repoRoot(t)
	bin := binaries(t, "showcase-trials", "showcase-score")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "trials.md"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := relativeOut(t, root, "docs")
	var commands [][]string
	inBlock := false
	var cur string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if cur == "" && !strings.HasPrefix(line, "bin/showcase-") {
			continue
		}
		line, _, _ = strings.Cut(line, " #")
		cur += " " + strings.TrimSuffix(strings.TrimSpace(line), "\\")
		if strings.HasSuffix(strings.TrimSpace(line), "\\") {
			continue
		}
		// The synopsis is no command; a cluster's commands run in the node
		// test (e2e, TestKubernetesNode).
		if !strings.Contains(cur, "NAME [-trials") && !strings.Contains(cur, "-on kube") {
			var args []string
			for _, f := range strings.Fields(cur) {
				f = strings.Trim(f, "'")
				if strings.HasPrefix(f, "out/") {
					f = filepath.Join(prefix, strings.TrimPrefix(f, "out/"))
				}
				args = append(args, f)
			}
			commands = append(commands, args)
		}
		cur = ""
	}
	if len(commands) < 5 {
		t.Fatalf("%d commands found in docs/trials.md", len(commands))
	}
	served := 0
	defer func() {
		if served != 2 {
			t.Errorf("%d documented commands with -serve, want a run's and a -watch", served)
		}
	}()
	for _, args := range commands {
		cmd := exec.Command(filepath.Join(bin, strings.TrimPrefix(args[0], "bin/")), args[1:]...)
		cmd.Dir = root
		var out []byte
		var err error
		if i := slices.Index(args, "-serve"); i >= 0 {
			served++
			cmd.Args[i+1] = "127.0.0.1:0"
			out, err = serveDocumented(t, cmd)
		} else {
			out, err = cmd.CombinedOutput()
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if slices.Contains(args, "-watch") {
			continue
		}
		if args[0] == "bin/showcase-score" {
			if !strings.Contains(string(out), "## schemathesis: 10 trials") || !strings.Contains(string(out), "## apifuzzer: 10 trials") {
				t.Errorf("%s:\n%s", strings.Join(args, " "), out)
			}
			continue
		}
		dir := filepath.Join(root, args[slices.Index(args, "-out")+1])
		s := readSummary(t, dir)
		if len(s.Trials) == 0 || len(s.Trials)%10 != 0 || !strings.HasPrefix(s.Trials[0].Outcome, "failed to start") || !s.Trials[0].TestedNothing() {
			t.Errorf("%s: %d trials, %+v", strings.Join(args, " "), len(s.Trials), s.Trials[0])
		}
		if _, err := os.Stat(filepath.Join(dir, s.Trials[len(s.Trials)-1].Dir, trials.RecordFile)); err != nil {
			t.Error(err)
		}
	}
}

// serveDocumented runs a documented command that serves a run's page: its
// page answers, says the run has ended (at once for -watch, when its
// trials have for a run), and it stops on SIGINT, exiting 0.
func serveDocumented(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill() }()
	var mu sync.Mutex
	var log bytes.Buffer
	logged := func() []byte { mu.Lock(); defer mu.Unlock(); return bytes.Clone(log.Bytes()) }
	url := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if _, u, ok := strings.Cut(sc.Text(), "live page: "); ok {
				u, _, _ = strings.Cut(u, " ")
				url <- u
			}
		}
	}()
	var page string
	select {
	case page = <-url:
	case <-time.After(time.Minute):
		return logged(), errors.New("no live page within a minute")
	}
	var s struct {
		Ended  bool
		Trials []struct{ State string }
	}
	for deadline := time.Now().Add(2 * time.Minute); !s.Ended; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return logged(), fmt.Errorf("%sstate: the run has not ended within 2 minutes: %+v", page, s)
		}
		res, err := http.Get(page + "state")
		if err != nil {
			return logged(), err
		}
		err = json.NewDecoder(res.Body).Decode(&s)
		res.Body.Close()
		if err != nil {
			return logged(), err
		}
	}
	if len(s.Trials) != 20 || s.Trials[19].State != trials.StateEnded {
		t.Errorf("%s: the ended run's page: %+v", page, s)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return logged(), err
	}
	err := cmd.Wait()
	pw.Close()
	<-read
	return logged(), err
}

// -watch DIR -serve ADDR serves a run's folder until interrupted, and
// runs nothing; without -serve, with tools, or on no folder, it is a
// usage error.
func TestWatchFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-watch", dir},
		{"-watch", dir, "-serve", "127.0.0.1:0", "-tool", "x", "--", "true"},
		{"-watch", dir, "-serve", "127.0.0.1:0", "-experiment", "e.yaml"},
		{"-watch", filepath.Join(dir, "none"), "-serve", "127.0.0.1:0"},
	} {
		var usage usageError
		if err := run(t.Context(), args, io.Discard, io.Discard); !errors.As(err, &usage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-watch", dir, "-serve", "127.0.0.1:0"}, io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var url string
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "live page: "); ok {
			url, _, _ = strings.Cut(u, " ")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	res, err := http.Get(url + "state")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Folder  string
		Problem string
	}
	_ = json.NewDecoder(res.Body).Decode(&s)
	res.Body.Close()
	if res.StatusCode != 200 || s.Folder != dir || s.Problem == "" {
		t.Errorf("GET %sstate: %s %+v", url, res.Status, s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("interrupted: %v", err)
	}
}

// implied is the API coverage a fresh instance measures of the triggers of
// the given defects, each sent once in the catalogue's order: what a trial
// that sent exactly those requests must have recorded.
func implied(t *testing.T, ids map[catalogue.ID]bool) *coverage.Report {
	t.Helper()
	built, err := server.Build(gateway.Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	ts := httptest.NewServer(built.Handler)
	defer ts.Close()
	for _, d := range catalogue.Defects {
		if !ids[d.ID] {
			continue
		}
		for _, tr := range d.Triggers {
			if _, err := suite.Do(t.Context(), ts.Client(), ts.URL, suite.Trigger(d, tr)); err != nil {
				t.Fatal(err)
			}
		}
	}
	rec := httptest.NewRecorder()
	built.Admin["GET "+gateway.PathCoverage].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathCoverage, nil))
	var c coverage.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// checkTrialCoverage holds each trial's API coverage against what its
// requests imply: the triggers of the defects whose operations it reached
// (the reference tool all ten, the weak one the subset its seed picks),
// sent to a fresh instance. The reference tool's, counted by hand from the
// triggers and the contract: every path and operation, the three request
// types, 9 of 10 response types (CONF-02 answers text/plain), 7 of 8
// parameters (no trigger sends X-API-Key), 7 of 20 classes (2XX of SEC-01,
// CONF-01 to -03, PERF-01 and -02; 4XX of CONF-04's 404s; ERR-01 to -03
// answer 500), 9 of 23 statuses (CONF-04's 404 is undocumented), 10 of 35
// response properties, TCL 2. The weak tool's is lower and varies with
// its seed.
func checkTrialCoverage(t *testing.T, ts []trials.Trial) {
	t.Helper()
	want := map[string]*coverage.Report{}
	weak := map[int]bool{}
	reference := -1
	for _, tr := range ts {
		if tr.Coverage == nil || len(tr.Coverage.Series) == 0 || tr.Coverage.Kind != trials.CoverageAPI {
			t.Fatalf("%s trial %d: coverage %+v, want the API's recorded (make trials' COVERAGE=api)", tr.Tool, tr.Number, tr.Coverage)
		}
		reached := map[catalogue.ID]bool{}
		key := ""
		for _, st := range tr.Stages {
			if st.Reached {
				reached[st.ID] = true
				key += string(st.ID)
			}
		}
		if want[key] == nil {
			want[key] = implied(t, reached)
		}
		w := want[key]
		if fmt.Sprint(tr.Coverage.Criteria) != fmt.Sprint(w.Criteria) || tr.Coverage.TCL != w.TCL || fmt.Sprint(tr.Coverage.Undocumented) != fmt.Sprint(w.Undocumented()) {
			t.Errorf("%s trial %d: coverage %v TCL %d undocumented %q, its requests imply %v TCL %d undocumented %q", tr.Tool, tr.Number,
				tr.Coverage.Criteria, tr.Coverage.TCL, tr.Coverage.Undocumented, w.Criteria, w.TCL, w.Undocumented())
		}
		last := tr.Coverage.Series[len(tr.Coverage.Series)-1]
		if last.Targets != tr.Coverage.Targets {
			t.Errorf("%s trial %d: the series ends at %d targets, the end has %d", tr.Tool, tr.Number, last.Targets, tr.Coverage.Targets)
		}
		if tr.Tool == "replay" {
			var got []string
			for _, c := range tr.Coverage.Criteria {
				got = append(got, fmt.Sprintf("%d/%d", c.Covered, c.Total))
			}
			if h := []string{"10/10", "10/10", "3/3", "9/10", "7/8", "7/20", "0/0", "9/23", "10/35"}; !slices.Equal(got, h) || tr.Coverage.TCL != 2 {
				t.Errorf("replay trial %d: %q TCL %d, want %q TCL 2 (counted by hand)", tr.Number, got, tr.Coverage.TCL, h)
			}
			reference = tr.Coverage.Targets
			continue
		}
		weak[tr.Coverage.Targets] = true
	}
	for n := range weak {
		if n > reference {
			t.Errorf("a weak trial covered %d targets, the reference %d", n, reference)
		}
	}
	if len(weak) < 2 {
		t.Errorf("the weak tool's coverage does not vary with its seed: %v", weak)
	}
}

// Trials with code coverage here: each trial's instance is the cover build
// (make build COVER=1) as a process, sampled as it runs; every trial of
// the reference tool ran every planted defect's code, the series carries
// the statements over time, and the report shows them. Rebuilt where no Go
// toolchain is on PATH, the code's coverage says it could not be computed
// and its raw data stays; rebuilt again where Go is, it is whole again.
func TestCodeCoverageTrials(t *testing.T) {
	root := repoRoot(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on this machine")
	}
	bin := binaries(t, "showcase-trials", "showcase-replay", "showcase-score")
	cover := t.TempDir()
	if out, err := exec.Command("make", "-C", root, "--no-print-directory", "build", "COVER=1", "BIN="+cover).CombinedOutput(); err != nil {
		t.Fatalf("make build COVER=1: %v\n%s", err, out)
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "showcase-trials"), "-out", out, "-coverage", "code", "-coverage-every", "500ms", "-cover-binary", filepath.Join(cover, "gateway"),
		"-tool", "replay", "-trials", "2", "-budget", "30s", "--", filepath.Join(bin, "showcase-replay"), "-base", "{url}", "-out", "{out}/report.csv")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("showcase-trials: %v\n%s", err, b)
	}
	s := readSummary(t, out)
	for _, tr := range s.Trials {
		c := tr.Coverage
		if c == nil || c.Kind != trials.CoverageCode || c.Code == nil || c.Code.Missing != "" || c.Code.Statements.Covered == 0 {
			t.Fatalf("trial %d: coverage %+v", tr.Number, c)
		}
		for _, d := range c.Code.Defects {
			if !d.Executed {
				t.Errorf("trial %d: %s's planted code not executed", tr.Number, d.ID)
			}
		}
		last := c.Series[len(c.Series)-1]
		if last.Statements == nil || *last.Statements != c.Code.Statements.Covered {
			t.Errorf("trial %d: the series ends at %v statements, the end has %d", tr.Number, last.Statements, c.Code.Statements.Covered)
		}
		if _, err := os.Stat(filepath.Join(out, tr.Dir, c.Code.Raw)); err != nil {
			t.Errorf("trial %d: the raw data: %v", tr.Number, err)
		}
	}
	if tc := s.Tools[0].Coverage; tc == nil || tc.Statements == nil || len(tc.CodeGrowth) == 0 {
		t.Errorf("the tool's coverage %+v, want the statements and their growth", tc)
	}
	md, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	for _, want := range []string{"## Coverage", "| statements |  | ", "![Statements covered over time](code-coverage.svg)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, trials.CodeCoverageSVG)); err != nil {
		t.Error(err)
	}

	rebuild := func(path string) trials.Trial {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "showcase-score"), "-rebuild", out)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+path)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("showcase-score -rebuild: %v\n%s", err, b)
		}
		ts, err := trials.LoadTrials(out)
		if err != nil {
			t.Fatal(err)
		}
		return ts[0]
	}
	without := rebuild(t.TempDir())
	if c := without.Coverage.Code; c == nil || !strings.Contains(c.Missing, "no Go toolchain") || c.Statements.Total != 0 {
		t.Errorf("rebuilt without Go: %+v", c)
	}
	if c := rebuild(os.Getenv("PATH")).Coverage.Code; c == nil || c.Missing != "" || c.Statements.Covered == 0 {
		t.Errorf("rebuilt with Go again: %+v", c)
	}
}

// One runner a run: while a run goes, a second runner on its folder is
// refused, naming the first; -resume takes only a campaign on a cluster
// made from an experiment file, checks that file against the run's
// record, and takes the folder's lock before it reaches the cluster.
func TestOneRunnerAFolder(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	done := startSleepers(ctx, out, 1)
	err := run(t.Context(), []string{"-out", out, "-tool", "other", "-trials", "1", "--", "true"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is in use by another showcase-trials (pid ") {
		t.Errorf("a second runner on the folder: %v", err)
	}
	cancel()
	<-done
	// The local run's folder does not resume.
	if err := run(t.Context(), []string{"-resume", out}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "a campaign on a cluster from an experiment file resumes") {
		t.Errorf("-resume of a local run: %v", err)
	}
	if err := run(t.Context(), []string{"-resume", out, "-tool", "x", "--", "true"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "takes the run as its folder records it") {
		t.Errorf("-resume with a tool: %v", err)
	}

	// A campaign's folder as a runner on a cluster leaves it.
	kube := t.TempDir()
	raw := []byte("trials: 1\nbudget: 1m\ntools:\n  - {name: a, image: a:1, command: [a]}\n")
	sum := sha256.Sum256(raw)
	if err := os.WriteFile(filepath.Join(kube, trials.ExperimentFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := trials.Provenance{Where: "kube", Namespace: "ns", Run: "r1", Parallel: 2, Experiment: trials.ExperimentFile, ExperimentSHA256: hex.EncodeToString(sum[:])}
	if err := trials.WriteProvenance(kube, rec); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockRun(kube)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	err = run(t.Context(), []string{"-resume", kube, "-kubeconfig", missing}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is in use by another showcase-trials (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("-resume of a folder held: %v", err)
	}
	unlock()
	err = run(t.Context(), []string{"-resume", kube, "-kubeconfig", missing}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "kubeconfig") {
		t.Errorf("-resume, the folder free: %v (want it to reach the cluster's kubeconfig)", err)
	}
	if err := run(t.Context(), []string{"-resume", kube, "-namespace", "other"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "the run is in namespace ns, not other") {
		t.Errorf("-resume in another namespace: %v", err)
	}
	if err := os.WriteFile(filepath.Join(kube, trials.ExperimentFile), append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"-resume", kube}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "the run's file was changed") {
		t.Errorf("-resume with its file changed: %v", err)
	}
}

// A runner stopped with Ctrl-C exits as a shell's command a signal ended,
// 130 (SIGTERM: 143), its last line where the run's folder is and what it
// kept; "context canceled" is not its word. The real binary, signalled
// while the first of three trials runs.
func TestStoppedRunnerExitsAsByTheSignal(t *testing.T) {
	t.Parallel()
	bin := binaries(t, "showcase-trials")
	for _, c := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "SIGINT"}, {syscall.SIGTERM, "SIGTERM"}} {
		out := t.TempDir()
		cmd := exec.Command(filepath.Join(bin, "showcase-trials"), "-out", out, "-interrupt-grace", "300ms", "-tool", "sleeper", "-trials", "3", "-budget", "1m", "--", "sleep", "30")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), "sleeper trial 1: starting") {
				_ = cmd.Process.Signal(c.sig)
			}
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 128+int(c.sig) {
			t.Errorf("%s: %v, want exit %d", c.name, err, 128+int(c.sig))
		}
		want := "showcase-trials: stopped by " + c.name + ": " + out + " keeps the 1 trial(s) that ran, scored in report.md (1 cut short by the stop, recorded as interrupted); 2 never started"
		if len(lines) == 0 || lines[len(lines)-1] != want {
			t.Errorf("%s: its last lines:\n%s\nwant last:\n%s", c.name, strings.Join(lines[max(0, len(lines)-3):], "\n"), want)
		}
		if all := strings.Join(lines, "\n"); strings.Contains(all, "context canceled") {
			t.Errorf("%s: it says context canceled:\n%s", c.name, all)
		}
		if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
			t.Errorf("%s: no report of the trial that ran: %v", c.name, err)
		}
	}
}
