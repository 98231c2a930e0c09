package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/judge/stats"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/watch"
)

// A campaign over mutant sets (-defects mutants:14: every depth, and on
// four operations of each set two mutants or three): 20 seeds of the
// reference tool and of the weak one, and 5 of a tool that sends every
// trigger and reports nothing (testdata/silent). Trial i of every tool
// plants mutants:i:14. The reference scores 100 % at every depth; the
// weak one less, each of its survivors not reached or reached and never
// triggered (it skips whole triggers, and where it sent another mutant's
// on the same operation the skipped one was reached; it never gets a
// wrong answer and lets it pass); the silent one 0 %, every survivor
// triggered and not reported. McNemar's test says the reference detects
// more, its p the exact test's on the counts the report gives. report.md,
// trials.csv and each trial.json carry the figures.
func TestMutationScore(t *testing.T) {
	bin := binaries(t, "showcase-replay")
	if out, err := exec.Command("go", "build", "-o", bin+"/", "./testdata/silent").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	replay := filepath.Join(bin, "showcase-replay")
	out := t.TempDir()
	args := []string{"-out", out, "-defects", "mutants:14",
		"-tool", "replay", "-trials", "20", "-budget", "1m", "--", replay, "-defects", "{defects}", "-base", "{url}", "-out", "{out}/report.csv",
		"-tool", "weak", "-trials", "20", "-budget", "1m", "--", replay, "-weak", "-seed", "{seed}", "-pause", "20ms", "-defects", "{defects}", "-base", "{url}", "-out", "{out}/report.csv",
		"-tool", "silent", "-trials", "5", "-budget", "1m", "--", filepath.Join(bin, "silent"), "-defects", "{defects}", "-base", "{url}", "-out", "{out}/report.csv"}
	if err := run(t.Context(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	m := s.Mutation
	if m == nil || len(s.Tools) != 0 || len(m.Tools) != 3 || len(m.Sets) != 20 || len(m.Pairs) != 3 {
		t.Fatalf("the summary: %d tools of the ten; mutation %+v", len(s.Tools), m)
	}
	for _, tr := range s.Trials {
		if want := "mutants:" + tr.Seed + ":14"; tr.Defects != want || len(tr.Stages) != 14 {
			t.Errorf("%s trial %d planted %q with %d stages, want %s and 14", tr.Tool, tr.Number, tr.Defects, len(tr.Stages), want)
		}
		for _, st := range tr.Stages {
			if st.Operator == "" || st.Depth == nil || !strings.HasPrefix(string(st.ID), st.Operator+":") {
				t.Errorf("%s trial %d: %s recorded without its operator and depth: %+v", tr.Tool, tr.Number, st.ID, st)
			}
			if tr.Tool == "weak" && !st.Detected && st.Triggered {
				t.Errorf("weak trial %d: %s triggered and not reported: the weak tool skips triggers, it does not miss wrong answers", tr.Number, st.ID)
			}
		}
	}
	byName := map[string]trials.ToolMutation{}
	for _, tm := range m.Tools {
		byName[tm.Tool] = tm
	}
	ref, weak, silent := byName["replay"], byName["weak"], byName["silent"]
	if ref.Score.Planted != 280 || ref.Score.Detected != 280 || len(ref.ByDepth) != 3 || ref.Total().Total() != 0 || ref.Spurious != 0 {
		t.Errorf("the reference: %+v", ref)
	}
	for _, d := range ref.ByDepth {
		if d.Detected != d.Planted || d.Planted == 0 || d.Upper != 1 {
			t.Errorf("the reference at depth %s: %+v", d.Key, d)
		}
	}
	if w := weak.Total(); weak.Score.Detected >= weak.Score.Planted || w.NotReported != 0 || w.Total() != weak.Score.Planted-weak.Score.Detected || w.NotReached == 0 || w.NotTriggered == 0 {
		t.Errorf("the weak tool: %+v, survivors %+v", weak.Score, w)
	}
	if st := silent.Total(); silent.Score.Detected != 0 || silent.Score.Planted != 70 || st.NotReported != 70 || st.NotReached+st.NotTriggered != 0 {
		t.Errorf("the silent tool: %+v, survivors %+v", silent.Score, st)
	}
	for _, p := range m.Pairs {
		if p.A != "replay" {
			continue
		}
		a := p.All
		if a.Better != "replay" || a.OnlyB != 0 || a.Both+a.OnlyA+a.OnlyB+a.Neither != a.Pairs || a.P != stats.McNemar(a.OnlyA, a.OnlyB) || a.P >= 0.05 {
			t.Errorf("replay against %s: %+v", p.B, a)
		}
		if want := map[string]int{"weak": 280, "silent": 70}[p.B]; a.Pairs != want {
			t.Errorf("replay against %s: %d pairs, want %d (the mutants both met, by seed)", p.B, a.Pairs, want)
		}
	}
	if len(m.Undetected) != 0 {
		t.Errorf("the reference detects every mutant, yet %d are listed as detected by none", len(m.Undetected))
	}
	// The live page of the folder says the same, without tiles of the
	// ten, and /metrics has each tool's planted, detected and survivors.
	w := watch.New(watch.Options{Dir: out})
	defer w.Close()
	st := w.State()
	if st.Ten || len(st.Mutation) != 3 {
		t.Fatalf("the live page: ten %v, mutation %+v", st.Ten, st.Mutation)
	}
	for _, lm := range st.Mutation {
		tm := byName[lm.Tool]
		if sv := tm.Total(); lm.Score != tm.Score.Text() || lm.Planted != tm.Score.Planted || lm.NotReached != sv.NotReached || lm.NotTriggered != sv.NotTriggered || lm.NotReported != sv.NotReported {
			t.Errorf("the live page says %+v of %s; the report %+v, %+v", lm, lm.Tool, tm.Score, sv)
		}
	}
	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, watch.PathMetrics, nil))
	for _, want := range []string{`showcase_trials_mutants_planted_total{tool="replay"} 280`, `showcase_trials_mutants_detected_total{tool="silent"} 0`,
		`showcase_trials_mutant_survivors{group="triggered not reported",tool="silent"} 70`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, trials.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Mutation score", "| replay | 20 | 280/280 = 100 % (99–100 %)", "| silent | all | 0 | 0 | 70 |", "replay detects every mutant more often than weak"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, trials.RawCSV))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), `,"`+trials.NotReported+"\"\n"); n != 70 {
		t.Errorf("trials.csv has %d rows triggered, not reported; want the silent tool's 70", n)
	}
}

// A campaign planting the ten and mutant sets (all+mutants:3) keeps them
// apart: trials 1-2 of the ten, 3-4 of the sets mutants:1:3 and
// mutants:2:3; the ten's figures of the first two, the mutation score of
// the last two.
func TestTenBesideMutants(t *testing.T) {
	bin := binaries(t, "showcase-replay")
	out := t.TempDir()
	args := []string{"-out", out, "-defects", "all+mutants:3", "-mutant-seed", "5",
		"-tool", "replay", "-trials", "2", "-budget", "1m", "--", filepath.Join(bin, "showcase-replay"), "-defects", "{defects}", "-base", "{url}", "-out", "{out}/report.csv"}
	if err := run(t.Context(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	want := []string{"all", "all", "mutants:5:3", "mutants:6:3"}
	if len(s.Trials) != 4 {
		t.Fatalf("%d trials", len(s.Trials))
	}
	for i, tr := range s.Trials {
		if tr.Number != i+1 || tr.Defects != want[i] {
			t.Errorf("trial %d planted %q, want trial %d with %s", tr.Number, tr.Defects, i+1, want[i])
		}
	}
	if len(s.Tools) != 1 || s.Tools[0].Trials != 2 || len(s.Tools[0].Defects) != 10 || s.Mutation == nil || len(s.Mutation.Tools) != 1 {
		t.Fatalf("the ten: %+v; the mutants: %+v", s.Tools, s.Mutation)
	}
	if ten, mut := s.Tools[0], s.Mutation.Tools[0]; ten.Detected[0] != 10 || ten.Detected[1] != 10 || mut.Trials != 2 || mut.Score.Planted != 6 || mut.Score.Detected != 6 {
		t.Errorf("the ten detected %v; the mutants %+v", ten.Detected, mut.Score)
	}
	if s.Provenance == nil || s.Provenance.Showcase.Defects != "all+mutants:3" || s.Provenance.Showcase.MutantSeed != 5 {
		t.Errorf("the provenance: %+v", s.Provenance)
	}
}
