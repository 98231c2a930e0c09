package trials

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The files of a run's folder.
const (
	ReportMarkdown = "report.md"
	ReportJSON     = "report.json"
	ChartSVG       = "chart.svg"
	ChartPNG       = "chart.png"
)

// WriteRun writes a run's report over its trials into dir: Markdown, JSON
// (the summary, with every trial), and the chart as SVG and PNG.
func WriteRun(dir string, ts []Trial, budget float64) error {
	s := Summarize(ts, budget)
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, ChartSVG); err != nil {
		return err
	}
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
	return Chart(ts, filepath.Join(dir, ChartSVG), filepath.Join(dir, ChartPNG))
}

// LoadRun reads the trials and the budget of a run's folder, as WriteRun
// wrote them, to compare runs made apart.
func LoadRun(dir string) ([]Trial, float64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err != nil {
		return nil, 0, err
	}
	var s Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, 0, fmt.Errorf("%s: not a run of showcase-trials: %w", filepath.Join(dir, ReportJSON), err)
	}
	if len(s.Trials) == 0 {
		return nil, 0, fmt.Errorf("%s: no trials", filepath.Join(dir, ReportJSON))
	}
	return s.Trials, s.Budget, nil
}
