package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/judge/trials"
)

// The example experiment, with the weak tool beside the
// reference one; showcase-replay on the PATH, as its image has it.
const exampleExperiment = `trials: 3
budget: 1m
seeds: [4, 5, 6]
defects: all
resources: {cpu: "1", memory: 512Mi}
tools:
  - name: replay
    image: defect-showcase/showcase-replay:latest
    command: [showcase-replay, -base, "{url}", -out, "{out}/report.csv"]
    report: report.csv
  - name: weak
    version: "the weak one"
    image: defect-showcase/showcase-replay:latest
    command: [showcase-replay, -weak, -seed, "{seed}", -base, "{url}", -out, "{out}/report.csv"]
    report: report.csv
`

// An experiment file runs here as the flags would: its trials with its
// seeds, the file copied into the run with its SHA-256, the provenance
// (each tool's version, as given or as it prints it, and its binary's
// digest; this machine), the raw data; and the report rebuilt from the
// folder alone says the same.
func TestExperimentFile(t *testing.T) {
	bin := binaries(t, "showcase-replay")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	file := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(file, []byte(exampleExperiment), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if err := run(t.Context(), []string{"-experiment", file, "-out", out}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	if len(s.Trials) != 6 || s.Trials[0].Tool != "replay" || s.Trials[3].Tool != "weak" || s.Trials[3].Seed != "4" || s.Trials[5].Seed != "6" {
		t.Fatalf("trials %+v", s.Trials)
	}
	for _, tr := range s.Trials[:3] {
		if tr.Detected() != 10 || tr.Where != "local" || tr.Machine == nil || tr.Budget != 60 {
			t.Errorf("replay trial %d: detected %d, where %q, machine %v, budget %v", tr.Number, tr.Detected(), tr.Where, tr.Machine, tr.Budget)
		}
	}
	copied, err := os.ReadFile(filepath.Join(out, trials.ExperimentFile))
	if err != nil || string(copied) != exampleExperiment {
		t.Errorf("the file is not copied as it was: %v", err)
	}
	sum := sha256.Sum256([]byte(exampleExperiment))
	if b, _ := os.ReadFile(filepath.Join(out, trials.ExperimentSum)); string(b) != hex.EncodeToString(sum[:])+"  experiment.yaml\n" {
		t.Errorf("experiment.yaml.sha256: %q", b)
	}
	p := s.Provenance
	if p == nil || p.ExperimentSHA256 != hex.EncodeToString(sum[:]) || p.Where != "local" || p.Parallel != 1 || len(p.Machines) != 1 || p.Start.IsZero() || p.End.Before(p.Start) {
		t.Fatalf("provenance %+v", p)
	}
	if p.Tools[0].Version == "" || !strings.HasPrefix(p.Tools[0].Version, "showcase-replay") || p.Tools[1].Version != "the weak one" || len(p.Tools[0].BinarySHA256) != 64 {
		t.Errorf("tools %+v", p.Tools)
	}
	if p.Resources == nil || p.Resources.CPU != "1" || p.Resources.Memory != "512Mi" || p.Showcase.Version == "" || p.Showcase.Defects != "all" {
		t.Errorf("resources %+v, showcase %+v", p.Resources, p.Showcase)
	}
	md, err := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, trials.ReportHTML))
	if err != nil || !strings.Contains(string(page), "<pre id=\"experiment\">") {
		t.Fatalf("report.html, with the experiment file: %v", err)
	}
	if err := trials.Rebuild(out); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(out, trials.ReportMarkdown)); string(again) != string(md) {
		t.Errorf("rebuilt from the folder, the report differs:\n%s\n----\n%s", md, again)
	}
	if again, _ := os.ReadFile(filepath.Join(out, trials.ReportHTML)); string(again) != string(page) {
		t.Error("rebuilt from the folder, report.html differs")
	}
}

// A file and flags that disagree, or a file and -tool groups, are refused
// before anything starts; so is a bad file, naming the line and the key.
func TestExperimentRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(file, []byte(exampleExperiment), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(exampleExperiment, "budget: 1m", "budget: 1 minute", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "never")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-experiment", file, "-defects", "none"}, "says defects: all, but -defects says none"},
		{[]string{"-experiment", file, "-tool", "x", "--", "true"}, "-experiment and -tool"},
		{[]string{"-experiment", bad}, "bad.yaml:2: budget: \"1 minute\" is not a duration"},
		{[]string{"-experiment", file, "-on", "moon"}, "-on moon: local or kube"},
		{[]string{"-clean"}, "-clean is for a cluster"},
		{[]string{"-experiment", file, "-on", "kube", "-base", "http://x", "-kubeconfig", "/nonexistent"}, "-base is a running deployment"},
	} {
		err := run(t.Context(), append(c.args, "-out", out), io.Discard, io.Discard)
		var u usageError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	// The same flag as the file says is no disagreement.
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run made its folder")
	}
}
