package trials

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/codecov"
)

// The coverage a trial records, in its folder: the samples over time (JSON
// lines), the instance's API coverage at the end, and with code coverage
// each sample's snapshot of the counters (code/NNNN/, Go's own files).
const (
	CoverageSeries = "coverage.jsonl"
	CoverageFinal  = "coverage.json"
	CodeDir        = "code"
)

// The kinds of coverage a run records: the instance's API coverage, or
// that and its code coverage (an instance built with COVER=1).
const (
	CoverageAPI  = "api"
	CoverageCode = "code"
)

// DefaultCoverageEvery is how often a trial's coverage is sampled.
const DefaultCoverageEvery = 5 * time.Second

// CoverageOptions say what coverage a run records: Kind "" (none),
// CoverageAPI or CoverageCode, every Every (0: DefaultCoverageEvery).
type CoverageOptions struct {
	Kind  string
	Every time.Duration
}

// EveryOrDefault is how often to sample.
func (o CoverageOptions) EveryOrDefault() time.Duration {
	if o.Every > 0 {
		return o.Every
	}
	return DefaultCoverageEvery
}

// ParseCoverageKind reads a kind as an experiment or a flag gives it.
func ParseCoverageKind(s string) (string, error) {
	switch s {
	case "", "none":
		return "", nil
	case CoverageAPI, CoverageCode:
		return s, nil
	}
	return "", fmt.Errorf("coverage %q: want api, code or none", s)
}

// CoverageSample is one sample of a trial's coverage: after how many
// seconds of the tool, the TCL and each criterion's covered targets, their
// sum, and the snapshot of the code coverage's counters, if taken.
type CoverageSample struct {
	After   float64        `json:"after"`
	TCL     int            `json:"tcl"`
	Covered map[string]int `json:"covered"`
	Targets int            `json:"targets"`
	Code    string         `json:"code,omitempty"` // relative to the trial's folder
}

// SampleOf is the sample of an instance's API coverage at after.
func SampleOf(c *coverage.Report, after time.Duration) CoverageSample {
	s := CoverageSample{After: after.Seconds(), TCL: c.TCL, Covered: map[string]int{}}
	for _, cr := range c.Criteria {
		s.Covered[cr.Name] = cr.Covered
	}
	s.Targets, _ = c.Targets()
	return s
}

// TrialCoverage is a trial's coverage in its record: the API coverage at
// the end (each criterion, the TCL, what was answered undocumented), the
// code coverage at the end where it was recorded, and the series over time.
type TrialCoverage struct {
	Kind         string               `json:"kind"`
	TCL          int                  `json:"tcl"`
	MaxTCL       int                  `json:"max_tcl"`
	Criteria     []coverage.Criterion `json:"criteria"`
	Targets      int                  `json:"targets"` // the criteria's covered targets, summed
	Of           int                  `json:"of"`      // and their totals
	Undocumented []string             `json:"undocumented"`
	Undeclared   coverage.Undeclared  `json:"undeclared"`
	Code         *codecov.Report      `json:"code,omitempty"`
	Series       []CoveragePoint      `json:"series"`
}

// CoveragePoint is the coverage at a time of the trial: the API
// coverage's covered targets and TCL, and the statements covered where the
// code coverage was recorded and could be computed.
type CoveragePoint struct {
	After      float64        `json:"after"`
	Targets    int            `json:"targets"`
	TCL        int            `json:"tcl"`
	Covered    map[string]int `json:"covered"` // by criterion
	Statements *int           `json:"statements,omitempty"`
}

// SourceDir is where the showcase's source is, to map code coverage onto
// endpoints and defects; "" finds it (codecov.DefaultSource).
var SourceDir = ""

func sourceDir() string {
	if SourceDir != "" {
		return SourceDir
	}
	return codecov.DefaultSource()
}

// readCoverage reads the coverage a trial recorded in dir; nil when it
// recorded none. Code snapshots are read with go tool covdata; where that
// cannot be done, the code report says so and the raw data stays.
func readCoverage(dir string) (*TrialCoverage, error) {
	raw, err := os.ReadFile(filepath.Join(dir, CoverageFinal))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var final coverage.Report
	if err := json.Unmarshal(raw, &final); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, CoverageFinal), err)
	}
	tc := &TrialCoverage{Kind: CoverageAPI, TCL: final.TCL, MaxTCL: final.MaxTCL, Criteria: final.Criteria,
		Undocumented: final.Undocumented(), Undeclared: final.Undeclared, Series: []CoveragePoint{}}
	if tc.Undocumented == nil {
		tc.Undocumented = []string{}
	}
	tc.Targets, tc.Of = final.Targets()
	f, err := os.Open(filepath.Join(dir, CoverageSeries))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lastCode := ""
	for sc.Scan() {
		var s CoverageSample
		if json.Unmarshal(sc.Bytes(), &s) != nil {
			continue // a line cut short by a stop: the others stand
		}
		p := CoveragePoint{After: s.After, Targets: s.Targets, TCL: s.TCL, Covered: s.Covered}
		if s.Code != "" {
			tc.Kind, lastCode = CoverageCode, s.Code
			if r := codecov.Compute(ctx, filepath.Join(dir, s.Code), sourceDir()); r.Statements.Total > 0 {
				n := r.Statements.Covered
				p.Statements = &n
			}
		}
		tc.Series = append(tc.Series, p)
	}
	if lastCode != "" {
		tc.Code = codecov.Compute(ctx, filepath.Join(dir, lastCode), sourceDir())
		tc.Code.Raw = lastCode // relative to the trial's folder
	}
	return tc, sc.Err()
}
