package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/judge/trials"
)

// busyEnv, set to a number of seconds, makes the test binary a busy
// worker: it spins a core that long and exits, bounded in time on its own
// even if the test that started it dies.
const busyEnv = "SHOWCASE_TEST_BUSY_SECONDS"

func TestMain(m *testing.M) {
	if s := os.Getenv(busyEnv); s != "" {
		secs, err := strconv.Atoi(s)
		if err != nil {
			os.Exit(2)
		}
		for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
			for i := 0; i < 1_000_000; i++ {
				spin += i
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var spin int

// busyWorkers starts n processes of the test binary that do nothing but
// spin a core each, for at most limit, and stops them when the returned
// function is called (at the latest at the test's end), checking that
// none is left. stop returns the CPU time they used, and for how long.
func busyWorkers(t *testing.T, n int, limit time.Duration) (stop func() (cpu, wall time.Duration)) {
	t.Helper()
	var cmds []*exec.Cmd
	started := time.Now()
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", busyEnv, int(limit.Seconds())))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	stopped := false
	stop = func() (cpu, wall time.Duration) {
		if stopped {
			return 0, 0
		}
		stopped = true
		wall = time.Since(started)
		for _, c := range cmds {
			cpu += cpuTime(c.Process.Pid)
			_ = c.Process.Kill()
		}
		for _, c := range cmds {
			if err := c.Wait(); err == nil {
				t.Errorf("busy worker %d ended before it was stopped: the load did not last", c.Process.Pid)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", c.Process.Pid)); err == nil {
				t.Errorf("busy worker %d still runs", c.Process.Pid)
			}
		}
		return cpu, wall
	}
	t.Cleanup(func() { stop() })
	return stop
}

// cpuTime is the CPU time a process has used (user and system), from
// /proc/PID/stat in clock ticks of 1/100 s (Linux's USER_HZ).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.Atoi(f[11])
	system, _ := strconv.Atoi(f[12])
	return time.Duration(user+system) * 10 * time.Millisecond
}

// loadAverage is /proc/loadavg's one-minute figure.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// scorecardOf reads a trial's scorecard.
func scorecardOf(t *testing.T, out string, tr trials.Trial) score.Scorecard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(out, tr.Dir, trials.CardFile))
	if err != nil {
		t.Fatal(err)
	}
	var sc score.Scorecard
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

// Verdicts hold on a busy machine. The reference tool's trials, run with
// the CPU made busy beside them (four spinning workers a core), detect
// what one trial on the idle machine detects, each detection after its
// trigger; every slow-response finding of theirs on an operation whose
// defect was not triggered is spurious or unplanted, never a detection.
// And a small tool that claims a slow response on requests that cannot
// trigger a defect (PERF-01 with limit 50 and 99, PERF-02 with n 20 and
// 1000) detects nothing: each claim is counted spurious, in trial.json,
// the summary and report.md.
func TestSpuriousUnderLoad(t *testing.T) {
	bin := binaries(t, "showcase-replay")
	if out, err := exec.Command("go", "build", "-o", bin+"/", "./testdata/slowclaims").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	replay := []string{"--", filepath.Join(bin, "showcase-replay"), "-base", "{url}", "-out", "{out}/report.csv"}

	idle := t.TempDir()
	if err := run(t.Context(), append([]string{"-out", idle, "-tool", "replay", "-trials", "1", "-budget", "1m"}, replay...), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := map[catalogue.ID]bool{}
	for _, st := range readSummary(t, idle).Trials[0].Stages {
		want[st.ID] = st.Detected
	}

	workers := 4 * runtime.NumCPU()
	stop := busyWorkers(t, workers, 5*time.Minute)
	time.Sleep(2 * time.Second) // let the load build
	busy := t.TempDir()
	args := append([]string{"-out", busy, "-tool", "replay", "-trials", "3", "-budget", "2m"}, replay...)
	args = append(args, "-tool", "claims", "-trials", "2", "-budget", "1m", "--", filepath.Join(bin, "slowclaims"), "-base", "{url}", "-out", "{out}/report.csv")
	start := time.Now()
	err := run(t.Context(), args, io.Discard, io.Discard)
	load := loadAverage()
	cpu, wall := stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d busy workers: 5 trials in %s, load average %s at the end; the workers used %s of CPU in %s", workers, time.Since(start).Round(time.Second), load, cpu.Round(time.Second), wall.Round(time.Second))
	// The load was there: the workers held at least half the machine's
	// cores for as long as they ran.
	if cores := float64(runtime.NumCPU()); cpu.Seconds() < 0.5*cores*wall.Seconds() {
		t.Errorf("the busy workers used %s of CPU in %s on %v cores: the CPU was not busy", cpu, wall, cores)
	}

	s := readSummary(t, busy)
	loadCaused, loaded := 0, []float64{}
	for _, tr := range s.Trials {
		sc := scorecardOf(t, busy, tr)
		for _, st := range tr.Stages {
			if st.Detected && (!st.Triggered || st.DetectedAfter == nil || st.TriggeredAfter == nil || *st.DetectedAfter < *st.TriggeredAfter) {
				t.Errorf("%s trial %d: %s detected, not after its trigger: %+v", tr.Tool, tr.Number, st.ID, st)
			}
		}
		for _, d := range sc.Defects {
			for _, f := range d.Findings {
				if f.Class == catalogue.SlowResponse && (d.Exposed == nil || !*d.Exposed) {
					t.Errorf("%s trial %d: a slow response on %s counted for %s, never triggered", tr.Tool, tr.Number, f.Operation, d.ID)
				}
			}
		}
		if tr.Tool == "replay" {
			loadCaused += tr.Spurious()
			for _, f := range sc.Unplanted {
				if f.Class == catalogue.SlowResponse {
					loadCaused += f.Count
				}
			}
			loaded = append(loaded, tr.Seconds)
		}
		switch tr.Tool {
		case "replay":
			for _, st := range tr.Stages {
				if st.Detected != want[st.ID] {
					t.Errorf("replay trial %d under load: %s detected %v, on the idle machine %v", tr.Number, st.ID, st.Detected, want[st.ID])
				}
			}
		case "claims":
			if tr.Outcome != "finished" || tr.Report == "" || tr.Detected() != 0 || tr.Spurious() != 4 {
				t.Errorf("claims trial %d: %s, report %q (%s), detected %d, spurious %d; want finished, 0 detected, 4 spurious", tr.Number, tr.Outcome, tr.Report, tr.NoReport, tr.Detected(), tr.Spurious())
			}
			for _, st := range tr.Stages {
				perf := st.ID == catalogue.PERF01 || st.ID == catalogue.PERF02
				if perf && (!st.Reached || st.Triggered || st.Detected || st.Spurious != 2 || st.SpuriousWhy != "never triggered in the trial") {
					t.Errorf("claims trial %d %s: %+v; want reached, not triggered, 2 spurious", tr.Number, st.ID, st)
				}
			}
			if sc.Spurious != 4 || len(sc.Contradicted) != 2 || sc.Total.Reported != 0 {
				t.Errorf("claims trial %d's scorecard: spurious %d, contradicted %v, reported %d", tr.Number, sc.Spurious, sc.Contradicted, sc.Total.Reported)
			}
		}
	}
	t.Logf("the reference's trials took %.1f s on the idle machine, %.1f s under load; slow-response findings the load caused in their reports, none a detection: %d",
		readSummary(t, idle).Trials[0].Seconds, loaded, loadCaused)
	for _, ts := range s.Tools {
		if ts.Tool != "claims" {
			continue
		}
		for _, d := range ts.Defects {
			if (d.ID == catalogue.PERF01 || d.ID == catalogue.PERF02) && (d.Detected != 0 || d.Spurious != 4 || d.SpuriousTrials != 2) {
				t.Errorf("claims over its trials, %s: %+v", d.ID, d)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(busy, trials.ReportMarkdown))
	for _, w := range []string{"| PERF-01 | 2/2 | 0/2 | 0/2 | 4 in 2/2 |", "| PERF-02 | 2/2 | 0/2 | 0/2 | 4 in 2/2 |", "8 of its findings were **spurious**"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(busy, trials.RawCSV))
	if !strings.Contains(string(csv), ",PERF-02,true,") || !strings.Contains(string(csv), ",true,2,all,,,\n") {
		t.Errorf("trials.csv names no spurious finding:\n%s", csv)
	}
}
