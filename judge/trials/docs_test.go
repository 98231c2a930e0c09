package trials

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/trials.md's real run and its pictures from the test data")

const (
	docsFile    = "../../docs/trials.md"
	beginMarker = "<!-- real run: rewritten by go test ./judge/trials -run TestRealRunInTheDocs -update -->\n"
	endMarker   = "<!-- end of the real run -->\n"
	chartPNG    = "../../docs/trials-real-chart.png"
	cdPNG       = "../../docs/trials-real-cd.png"
)

// section is the markdown from the line that begins with start to the
// next line that begins with any of ends (or the end).
func section(md, start string, ends ...string) string {
	i := strings.Index(md, "\n"+start)
	if i < 0 {
		return ""
	}
	rest := md[i+1:]
	end := len(rest)
	for _, e := range ends {
		if j := strings.Index(rest[len(start):], "\n"+e); j >= 0 && len(start)+j+1 < end {
			end = len(start) + j + 1
		}
	}
	return rest[:end]
}

// Three real tools ranked, and the real run docs/trials.md shows, rebuilt
// from the trials' records: Schemathesis 4.9.5's ten trials and make
// trials's reference and weak tools. The docs hold exactly what the
// summary says of them today; -update rewrites it and draws the chart and
// the critical-difference diagram (looked at when they change).
func TestRealRunInTheDocs(t *testing.T) {
	st := rescored(t, copyRun(t, filepath.Join(stSamples, "ten-trials")), "*.ndjson*")
	ref := rescored(t, copyRun(t, replayRun), "report.csv")
	all := append(st, ref...)
	s := Summarize(all, 600)
	r := s.Ranking
	if r == nil || len(r.Tools) != 3 || len(r.MeanRanks) != 3 || r.Blocks != 10 || r.CD <= 0 {
		t.Fatalf("ranking %+v", r)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, "trials-real-chart.png", "trials-real-cd.png"); err != nil {
		t.Fatal(err)
	}
	full := md.String()
	var parts []string
	for _, p := range []string{
		section(full, "## schemathesis", "## "),
		section(full, "**schemathesis and replay**", "**", "## "),
		section(full, "## Ranking", "## ", "!["),
		section(full, "![Critical-difference", "![Defects", "Detections"),
		section(full, "![Defects detected over time"),
	} {
		parts = append(parts, strings.TrimSpace(p))
	}
	block := strings.Join(parts, "\n\n") + "\n"
	doc, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(beginMarker)), bytes.Index(doc, []byte(endMarker))
	if i < 0 || j < i {
		t.Fatalf("%s has no real run between its markers", docsFile)
	}
	got := string(doc[i+len(beginMarker) : j])
	if *update {
		out := append(append(append([]byte{}, doc[:i+len(beginMarker)]...), block...), doc[j:]...)
		if err := os.WriteFile(docsFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Chart(all, chartPNG); err != nil {
			t.Fatal(err)
		}
		if err := CDDiagram(*r, cdPNG); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != block {
		t.Errorf("docs/trials.md's real run is not what the records give today (go test ./judge/trials -run TestRealRunInTheDocs -update):\n--- docs\n%s\n--- records\n%s", got, block)
	}
	for _, f := range []string{chartPNG, cdPNG} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil || img.Bounds().Dx() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

const (
	mutantRun        = "testdata/mutant-trials"
	mutationBegin    = "<!-- mutation score: rewritten by go test ./judge/trials -run TestMutationScoreInTheDocs -update -->\n"
	mutationEnd      = "<!-- end of the mutation score -->\n"
	mutationHeadline = "## Mutation score"
)

// docs/trials.md's worked mutation score is what the records of its run
// (the reference tool against the weak one over 30 sets of 14 mutants,
// testdata/mutant-trials) give today: the report's "Mutation score"
// section, as report.md has it. -update rewrites it.
func TestMutationScoreInTheDocs(t *testing.T) {
	ts, err := LoadTrials(mutantRun)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(ts, 0)
	if s.Mutation == nil || len(s.Tools) != 0 || len(s.Mutation.Sets) != 30 || len(s.Mutation.Tools) != 2 {
		t.Fatalf("the run: %d tools of the ten, mutation %+v", len(s.Tools), s.Mutation)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, "", ""); err != nil {
		t.Fatal(err)
	}
	// report.html has the same tables, and none of the ten's.
	var page bytes.Buffer
	if err := s.WriteHTML(&page, ""); err != nil {
		t.Fatal(err)
	}
	for _, tm := range s.Mutation.Tools {
		sv := tm.Total()
		row := fmt.Sprintf(`<tr><td>%s</td><td class="n">%d</td><td class="n">%s</td>`, tm.Tool, tm.Trials, tm.Score.Text())
		surv := fmt.Sprintf(`<tr><td>%s</td><td class="n">all</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td>`, tm.Tool, sv.NotReached, sv.NotTriggered, sv.NotReported)
		if !strings.Contains(page.String(), row) || !strings.Contains(page.String(), surv) {
			t.Errorf("report.html lacks %s's score row %s or survivors %s", tm.Tool, row, surv)
		}
	}
	if p := page.String(); !strings.Contains(p, `<h2 id="mutation-score">Mutation score</h2>`) || strings.Contains(p, `id="detected-table"`) || strings.Contains(p, `id="over-time"`) {
		t.Errorf("report.html of mutant sets: the mutation score, and no table or chart of the ten")
	}
	block := strings.TrimSpace(section(md.String(), mutationHeadline)) + "\n"
	// One level down: in the docs it sits under its own heading.
	block = strings.Replace(block, mutationHeadline+"\n\n", "", 1)
	doc, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(mutationBegin)), bytes.Index(doc, []byte(mutationEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no mutation score between its markers", docsFile)
	}
	if *update {
		out := append(append(append([]byte{}, doc[:i+len(mutationBegin)]...), block...), doc[j:]...)
		if err := os.WriteFile(docsFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(doc[i+len(mutationBegin) : j]); got != block {
		t.Errorf("docs/trials.md's mutation score is not what the records give today (go test ./judge/trials -run TestMutationScoreInTheDocs -update):\n--- docs\n%s\n--- records\n%s", got, block)
	}
}
