package trials

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// The provenance's files in a run's folder: the run's record, the
// experiment file as it was given, its SHA-256 (as sha256sum writes it),
// and the raw data.
const (
	RunFile        = "run.json"
	ExperimentFile = "experiment.yaml"
	ExperimentSum  = "experiment.yaml.sha256"
	RawCSV         = "trials.csv"
)

// Provenance is what a reader of a campaign's report needs to know to
// trust or repeat it, after Schloegel et al.'s checklist: what was run
// (the experiment file and its digest, each tool's version and image or
// binary digest, the showcase's version and image), where (the machine or
// the nodes, what each trial was given) and when.
type Provenance struct {
	// Experiment is the file the run was made from ("" when from flags),
	// as copied into the run's folder, and its SHA-256.
	Experiment       string `json:"experiment,omitempty"`
	ExperimentSHA256 string `json:"experiment_sha256,omitempty"`
	// Where: "local" or "kube"; on a cluster, the namespace and the run's
	// label.
	Where     string `json:"where"`
	Namespace string `json:"namespace,omitempty"`
	Run       string `json:"run,omitempty"`
	Parallel  int    `json:"parallel"`
	// Runner is showcase-trials' version.
	Runner   string         `json:"runner"`
	Showcase ShowcaseSource `json:"showcase"`
	Tools    []ToolSource   `json:"tools"`
	// Resources are what each container of a trial was given (on a cluster;
	// on this machine, recorded as asked).
	Resources *Resources `json:"resources,omitempty"`
	// Machines ran the trials: this one, or the cluster's nodes.
	Machines []Machine `json:"machines"`
	// Coverage is what coverage each trial recorded ("" none, api, code),
	// and how often it was sampled (seconds).
	Coverage      string    `json:"coverage,omitempty"`
	CoverageEvery float64   `json:"coverage_every_seconds,omitempty"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	// Starts are the runner's starts on this run: the first, then each
	// showcase-trials -resume (a runner that died and was started again).
	Starts []time.Time `json:"starts,omitempty"`
}

// ShowcaseSource is the instance the trials ran against.
type ShowcaseSource struct {
	Version string `json:"version,omitempty"` // as its log says
	Defects string `json:"defects"`
	// MutantSeed is the seed of trial 1's mutant set, where the run draws
	// a set per trial (Defects says mutants): trial i's is MutantSeed+i-1.
	MutantSeed uint64 `json:"mutant_seed,omitempty"`
	Image      string `json:"image,omitempty"`
	Digest     string `json:"digest,omitempty"`
}

// ToolSource is a tool as it was run.
type ToolSource struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Binary is the local command's program, and its SHA-256.
	Binary       string   `json:"binary,omitempty"`
	BinarySHA256 string   `json:"binary_sha256,omitempty"`
	Command      []string `json:"command"`
	Report       string   `json:"report,omitempty"`
}

// WriteProvenance writes the run's record.
func WriteProvenance(dir string, p Provenance) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RunFile), append(b, '\n'), 0o644)
}

// ReadProvenance reads a run's record; nil when the run has none (made
// before runs kept one).
func ReadProvenance(dir string) (*Provenance, error) {
	raw, err := os.ReadFile(filepath.Join(dir, RunFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Provenance
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	return &p, nil
}

// complete fills in what only the trials know: the images' digests as
// the runtime reported them, the showcase's version from an instance's
// log, and the machines.
func (p *Provenance) complete(dir string, ts []Trial) {
	for _, t := range ts {
		for _, im := range t.Images {
			switch im.Container {
			case "showcase":
				if p.Showcase.Digest == "" {
					p.Showcase.Image, p.Showcase.Digest = im.Image, im.Digest
				}
			case "tool":
				for i := range p.Tools {
					if p.Tools[i].Name == t.Tool && p.Tools[i].Digest == "" {
						p.Tools[i].Image, p.Tools[i].Digest = im.Image, im.Digest
					}
				}
			}
		}
		for i := range p.Tools {
			if p.Tools[i].Name == t.Tool && p.Tools[i].Version == "" {
				p.Tools[i].Version = t.ToolVersion
			}
		}
		if p.Showcase.Version == "" && t.Ran() {
			p.Showcase.Version = logVersion(filepath.Join(dir, t.Dir, ServerLog))
		}
		if m := t.Machine; m != nil && !slices.Contains(p.Machines, *m) {
			p.Machines = append(p.Machines, *m)
		}
	}
}

// logVersion is the version an instance's log gives on its "listening" line.
func logVersion(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"listening"`)) {
			continue
		}
		var l struct{ Msg, Version string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
			return l.Version
		}
	}
	return ""
}

// WriteCSV writes the raw data, as FuzzBench and Magma publish theirs: a
// row per trial and defect, with the times in seconds since the tool
// started and whether the time to detect is censored (not detected: at
// the trial's budget), and how many of its findings were spurious (see
// Stage.Spurious). A trial that could not run has its rows, with its
// outcome and no stages.
func WriteCSV(w io.Writer, ts []Trial) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"tool", "trial", "seed", "where", "outcome", "defect", "reached", "reached_s", "triggered", "triggered_s", "detected", "detected_s", "budget_s", "censored", "spurious", "defects", "operator", "depth", "survived"})
	secs := func(x *float64) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'f', 3, 64)
	}
	for _, t := range ts {
		outcome := t.Outcome
		if !t.Ran() {
			outcome = "not run: " + t.NotRun
			for _, s := range plantedIn(t) {
				_ = cw.Write([]string{t.Tool, strconv.Itoa(t.Number), t.Seed, t.Where, outcome, string(s.ID), "", "", "", "", "", "", secs(&t.Budget), "", "",
					t.Defects, s.Operator, depthText(s.Depth), ""})
			}
			continue
		}
		for _, s := range t.Stages {
			survived := ""
			if t.Mutants() {
				survived = group(s) // why it survived; "" when detected
			}
			_ = cw.Write([]string{t.Tool, strconv.Itoa(t.Number), t.Seed, t.Where, outcome, string(s.ID),
				strconv.FormatBool(s.Reached), secs(s.ReachedAfter), strconv.FormatBool(s.Triggered), secs(s.TriggeredAfter),
				strconv.FormatBool(s.Detected), secs(s.DetectedAfter), secs(&t.Budget), strconv.FormatBool(!s.Detected), strconv.Itoa(s.Spurious),
				t.Defects, s.Operator, depthText(s.Depth), survived})
		}
	}
	cw.Flush()
	return cw.Error()
}

// Rebuild rewrites a run's report (report.md, report.json, the raw data,
// the charts) from its trials' records and its provenance alone, as
// showcase-score -rebuild does.
func Rebuild(dir string) error {
	ts, err := LoadTrials(dir)
	if err != nil {
		return err
	}
	// The coverage is read again from what each trial kept: the code's,
	// where Go was not at hand when it was recorded, is computed now.
	for i := range ts {
		c, err := readCoverage(filepath.Join(dir, ts[i].Dir))
		if err != nil {
			return err
		}
		if c != nil {
			ts[i].Coverage = c
			if err := WriteRecord(dir, ts[i]); err != nil {
				return err
			}
		}
	}
	return WriteRun(dir, ts)
}

// plantedIn are the defects a trial that could not run would have had:
// its mutant set's mutants, or the ten.
func plantedIn(t Trial) []Stage {
	var out []Stage
	if set, err := catalogue.Parse(t.Defects); err == nil && set.IsMutants() {
		for _, m := range set.Mutants() {
			d := m.Depth()
			out = append(out, Stage{ID: m.ID(), Operator: m.Operator.Name, Condition: m.Condition(), Depth: &d})
		}
		return out
	}
	for _, d := range catalogue.Defects {
		out = append(out, Stage{ID: d.ID})
	}
	return out
}

func depthText(d *int) string {
	if d == nil {
		return ""
	}
	return strconv.Itoa(*d)
}
