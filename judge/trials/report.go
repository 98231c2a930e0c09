package trials

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// The files of a run's folder.
const (
	ReportMarkdown = "report.md"
	ReportJSON     = "report.json"
	ChartSVG       = "chart.svg"
	ChartPNG       = "chart.png"
	CDSVG          = "cd.svg"
	CDPNG          = "cd.png"
)

// WriteRun writes a run's report over its trials into dir: Markdown, JSON
// (the summary, with every trial), a page (report.html), the chart and,
// for three or more tools, the critical-difference diagram, each as SVG
// and PNG.
func WriteRun(dir string, ts []Trial) error {
	s := Summarize(ts, 0)
	prov, err := ReadProvenance(dir)
	if err != nil {
		return err
	}
	if prov != nil {
		prov.complete(dir, ts)
		if err := WriteProvenance(dir, *prov); err != nil {
			return err
		}
		s.Provenance = prov
	}
	var raw bytes.Buffer
	if err := WriteCSV(&raw, ts); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, RawCSV), raw.Bytes(), 0o644); err != nil {
		return err
	}
	cd := ""
	if s.Ranking != nil && len(s.Ranking.MeanRanks) > 0 {
		cd = CDSVG
		if err := CDDiagram(*s.Ranking, filepath.Join(dir, CDSVG), filepath.Join(dir, CDPNG)); err != nil {
			return err
		}
	}
	covChart, codeChart := "", ""
	if api, code := s.hasCoverage(); api {
		var raw bytes.Buffer
		if err := WriteCoverageCSV(&raw, ts); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, CoverageCSV), raw.Bytes(), 0o644); err != nil {
			return err
		}
		covChart = CoverageSVG
		if err := CoverageChart(s, false, filepath.Join(dir, CoverageSVG), filepath.Join(dir, CoveragePNG)); err != nil {
			return err
		}
		if code {
			codeChart = CodeCoverageSVG
			if err := CoverageChart(s, true, filepath.Join(dir, CodeCoverageSVG), filepath.Join(dir, CodeCoveragePNG)); err != nil {
				return err
			}
		}
	}
	// The chart is of the ten's trials: a mutant set's detections are
	// the mutation score's.
	var ten []Trial
	for _, t := range ts {
		if !t.Mutants() {
			ten = append(ten, t)
		}
	}
	chart := ChartSVG
	if len(ten) == 0 {
		chart = ""
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, chart, cd); err != nil {
		return err
	}
	s.writeCoverageMarkdown(&md, covChart, codeChart)
	if err := os.WriteFile(filepath.Join(dir, ReportMarkdown), md.Bytes(), 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportJSON), append(b, '\n'), 0o644); err != nil {
		return err
	}
	experiment, err := os.ReadFile(filepath.Join(dir, ExperimentFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var page bytes.Buffer
	if err := s.WriteHTML(&page, string(experiment)); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportHTML), page.Bytes(), 0o644); err != nil {
		return err
	}
	if len(ten) == 0 {
		return nil
	}
	return Chart(ten, filepath.Join(dir, ChartSVG), filepath.Join(dir, ChartPNG))
}

// LoadRun reads the trials of a run's folder, as WriteRun wrote them, to
// compare runs made apart. A record without its budget (written before
// trials kept theirs) takes the run's.
func LoadRun(dir string) ([]Trial, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err != nil {
		return nil, err
	}
	var s struct {
		Budget float64 `json:"budget_seconds"` // the run's, in records before each trial kept its own
		Trials []Trial `json:"trials"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: not a run of showcase-trials: %w", filepath.Join(dir, ReportJSON), err)
	}
	if len(s.Trials) == 0 {
		return nil, fmt.Errorf("%s: no trials", filepath.Join(dir, ReportJSON))
	}
	for i := range s.Trials {
		if s.Trials[i].Budget == 0 {
			s.Trials[i].Budget = s.Budget
		}
	}
	return s.Trials, nil
}

// LoadTrials reads the trials' own records (TOOL/trial-NN/trial.json) of a
// run's folder, in order, without its report.
func LoadTrials(dir string) ([]Trial, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "trial-*", RecordFile))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New(dir + ": no trial records (TOOL/trial-NN/trial.json)")
	}
	sort.Strings(files)
	var out []Trial
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var t Trial
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, err := filepath.Rel(dir, filepath.Dir(f))
		if err != nil {
			return nil, err
		}
		t.Dir = rel
		out = append(out, t)
	}
	return out, nil
}
