// Command showcase-score scores the report of an API-testing tool run
// against the showcase: which planted defects it reported, which its
// traffic reached without its noticing, what it reported that is not
// planted, and, given the same tool's report against DEFECTS=none, its false
// positives, with true and false positive rates and Youden's J per
// category. Given several reports, it prints them side by side as a
// scoreboard.
//
//	showcase-score report.ndjson                          # every defect was active
//	showcase-score -exposure http://localhost:9090/defects report.ndjson
//	showcase-score -baseline none/junit.xml -format svg -o card.svg all/junit.xml
//	showcase-score -exposure all/exposure.json -baseline none/report.ndjson \
//	    -baseline-exposure none/exposure.json all/report.ndjson
//	showcase-score -format markdown \
//	    -exposure st/exposure.json -baseline st-none/report.ndjson st/report.ndjson \
//	    -tool "nuclei v3.11.1" -exposure nuclei/exposure.json nuclei/nuclei.jsonl
//
// Flags before a report are that report's; -format and -o are the whole
// output's. Given folders of showcase-trials runs instead of reports, it
// compares the runs' tools over their trials (showcase-trials' report). It reads Schemathesis 4 ndjson (gzipped or not), JUnit XML
// (APIFuzzer's too), SARIF 2.1.0, nuclei's JSON and JSON Lines, and a CSV
// or JSON list of method,path,class. A report it cannot read, or cannot
// find, is refused naming the file and line, with exit status 2; nothing
// is scored.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/codecov"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/platform/version"
)

// Exit statuses: 0 scored (and met the gate, if one was given); 1 the
// gate failed: a required defect missed, or too many unplanted findings;
// 2 nothing to judge: a report or exposure that cannot be read or
// fetched, a usage error, a run that tested nothing under a gate.
func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	var gate gateError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &gate):
		os.Exit(1) // what failed is written
	default:
		fmt.Fprintln(os.Stderr, "showcase-score:", err)
		os.Exit(2)
	}
}

type usageError struct{ error }

// gateError: a scorecard did not meet the gate; what it missed is written
// on standard error.
type gateError struct{ failed int }

func (e gateError) Error() string { return fmt.Sprintf("%d reports failed the gate", e.failed) }

// entry is one report to score and what is known of its run.
type entry struct {
	report, tool, exposure, baseline, notRun string
	coverage, codeCoverage, source           string
	baselineExposure                         string
	active                                   catalogue.Set
	defectsSet                               bool
}

const usage = `usage: showcase-score [-format F] [-o FILE] [-require SET] [-max-unplanted N] [report flags] REPORT [[report flags] REPORT ...]
       showcase-score -rebuild RUN

-rebuild rewrites the report of a run of showcase-trials (report.md,
report.json, trials.csv, the charts) from its folder alone: each trial's
record and the run's provenance.

One REPORT gives its scorecard; several give a scoreboard, a row each. Each
report's flags come before it. REPORT: Schemathesis 4 ndjson (.gz too),
JUnit XML (Schemathesis's, APIFuzzer's, any tool's), SARIF 2.1.0, a Web
Fuzzing Commons report (schema 0.x), nuclei's JSON (-je) or JSON Lines
(-jle), or CSV/JSON of method,path,class.

-require and -max-unplanted make it a gate for a tool's CI: it exits 1,
naming each required defect missed and each unplanted finding, when a
report misses one or has too many; 2 when a report cannot be read or its
run tested nothing; 0 otherwise.
`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-rebuild" || args[0] == "--rebuild") {
		if len(args) != 2 {
			return usageError{errors.New("-rebuild RUN: one run's folder")}
		}
		if err := trials.Rebuild(args[1]); err != nil {
			return &score.InputError{File: args[1], Msg: err.Error()}
		}
		_, err := fmt.Fprintln(stdout, filepath.Join(args[1], trials.ReportMarkdown))
		return err
	}
	format, out := "text", ""
	require := catalogue.None() // no gate
	maxUnplanted := -1
	var entries []entry
	for first := true; first || len(args) > 0; first = false {
		e := entry{active: catalogue.All()}
		fs := flag.NewFlagSet("showcase-score", flag.ContinueOnError)
		fs.SetOutput(stdout)
		fs.Usage = func() {
			fmt.Fprint(fs.Output(), usage)
			fs.PrintDefaults()
		}
		fs.StringVar(&format, "format", format, "output: "+strings.Join(score.Formats, ", ")+" (the whole output's)")
		fs.StringVar(&out, "o", out, "write to this file instead of standard output (the whole output's)")
		fs.TextVar(&require, "require", require, "a gate: these defects must be reported (IDs, categories, all), or exit 1 naming each missed (every report's)")
		fs.IntVar(&maxUnplanted, "max-unplanted", maxUnplanted, "a gate: at most N unplanted findings, or exit 1 naming each (every report's; -1 for any number)")
		fs.StringVar(&e.tool, "tool", "", "the tool's name and version, instead of what the report says (it needs no version where it carries one); with it an empty report is one of no findings")
		fs.TextVar(&e.active, "defects", catalogue.All(), "the defects active in the instance the tool ran against: "+catalogue.SettingUsage)
		fs.StringVar(&e.exposure, "exposure", "", "the instance's admin /defects, as a URL (http://localhost:9090/defects; /defects?scope=deployment for every replica of a deployment) or a saved file: its active defects and how often each was triggered")
		fs.StringVar(&e.baseline, "baseline", "", "a report of the same tool against an instance with DEFECTS=none: its every finding is a false positive")
		fs.StringVar(&e.baselineExposure, "baseline-exposure", "", "the baseline instance's /defects (URL or file): a baseline that reached no operation tested nothing and gives no false positive rate")
		fs.StringVar(&e.coverage, "coverage", "", "the instance's admin /coverage, as a URL or a saved file: its API coverage of the run (by default the one beside an -exposure URL)")
		fs.StringVar(&e.codeCoverage, "code-coverage", "", "the code coverage of an instance built with COVER=1: its admin URL (a snapshot is taken; by default the one of an -exposure URL) or a snapshot's folder")
		fs.StringVar(&e.source, "source", "", "the showcase's source, to map code coverage onto endpoints and defects (default: the repository around the working directory)")
		showVersion := fs.Bool("version", false, "print the version and exit")
		fs.StringVar(&e.notRun, "not-run", "", "the tool tested nothing, for this reason (it could not load the contract); REPORT is then its log")
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err}
		}
		if *showVersion {
			_, err := fmt.Fprintln(stdout, "showcase-score", version.String())
			return err
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if fs.NArg() == 0 {
			if len(entries) == 0 {
				return usageError{errors.New("want a report; -h for usage")}
			}
			for name := range set {
				if name != "format" && name != "o" && name != "require" && name != "max-unplanted" {
					return usageError{fmt.Errorf("-%s after the last report: a report's flags go before it", name)}
				}
			}
			break
		}
		e.defectsSet = set["defects"]
		if e.defectsSet && e.exposure != "" {
			return usageError{errors.New("give -defects or -exposure, not both: the exposure names the active defects")}
		}
		if e.baselineExposure != "" && e.baseline == "" {
			return usageError{errors.New("-baseline-exposure without -baseline: whose exposure is it?")}
		}
		e.report, args = fs.Arg(0), fs.Args()[1:]
		entries = append(entries, e)
	}
	if !contains(score.Formats, format) {
		return usageError{fmt.Errorf("-format %q: want one of %s", format, strings.Join(score.Formats, ", "))}
	}
	gated := len(require.ActiveIDs()) > 0 || maxUnplanted >= 0
	if runs, err := trialRuns(entries); err != nil || runs {
		if err != nil {
			return err
		}
		if gated {
			return usageError{errors.New("-require and -max-unplanted judge reports, not runs of showcase-trials")}
		}
		return compareRuns(entries, format, out, stdout)
	}
	var cards []score.Scorecard
	for _, e := range entries {
		sc, err := scoreEntry(e)
		if err != nil {
			return err
		}
		cards = append(cards, sc)
	}
	var buf bytes.Buffer
	var err error
	if len(cards) == 1 {
		err = cards[0].Write(&buf, format)
	} else {
		err = score.Scoreboard{Tools: cards}.Write(&buf, format)
	}
	if err != nil {
		return err
	}
	if out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(out, buf.Bytes(), 0o644)
	}
	if err != nil || !gated {
		return err
	}
	return judge(score.Gate{Require: require, MaxUnplanted: maxUnplanted}, cards, stderr)
}

// judge holds each scorecard against the gate and says on w what failed,
// or that all passed: a gateError when one failed, an error (exit 2) when
// one proves nothing.
func judge(g score.Gate, cards []score.Scorecard, w io.Writer) error {
	failed := 0
	var untestable []string
	for _, sc := range cards {
		v := g.Check(sc)
		name := fmt.Sprintf("%s (%s)", sc.Tool, sc.Report)
		switch {
		case v.Untestable != "":
			untestable = append(untestable, name+": "+v.Untestable)
		case !v.Passed():
			failed++
			fmt.Fprintf(w, "showcase-score: %s failed the gate:\n", name)
			for _, m := range v.Missed {
				fmt.Fprintf(w, "  missed %s\n", m)
			}
			if len(v.Unplanted) > 0 {
				fmt.Fprintf(w, "  %d unplanted findings, at most %d allowed:\n", len(v.Unplanted), g.MaxUnplanted)
				for _, u := range v.Unplanted {
					fmt.Fprintf(w, "    %s\n", u)
				}
			}
		default:
			fmt.Fprintf(w, "showcase-score: %s passed the gate: %s\n", name, sc.Headline())
		}
	}
	if len(untestable) > 0 {
		return errors.New("nothing to judge: " + strings.Join(untestable, "; "))
	}
	if failed > 0 {
		return gateError{failed}
	}
	return nil
}

// scoreEntry reads one report, its instance and its baseline, and scores
// it.
func scoreEntry(e entry) (score.Scorecard, error) {
	inst := score.Instance{Active: e.active}
	if e.exposure != "" {
		var err error
		if inst, err = readExposure(e.exposure); err != nil {
			return score.Scorecard{}, err
		}
	}
	if e.notRun != "" {
		if _, err := os.Stat(e.report); err != nil {
			return score.Scorecard{}, &score.InputError{File: e.report, Msg: "the tool's log: " + strings.TrimPrefix(err.Error(), "stat "+e.report+": ")}
		}
		tool := e.tool
		if tool == "" {
			tool = "a tool"
		}
		return score.NotRun(tool, e.report, e.notRun, inst), nil
	}
	opt := score.Options{Tool: e.tool}
	rep, err := score.ReadFile(e.report, opt)
	if err != nil {
		return score.Scorecard{}, err
	}
	inst.OneRun = oneRun(e.exposure, e.report, inst.Since)
	var base *score.Report
	var baseInst *score.Instance
	if e.baseline != "" {
		b, err := score.ReadFile(e.baseline, opt)
		if err != nil {
			return score.Scorecard{}, err
		}
		base = &b
	}
	if e.baselineExposure != "" {
		bi, err := readExposure(e.baselineExposure)
		if err != nil {
			return score.Scorecard{}, err
		}
		if len(bi.Active.ActiveIDs()) != 0 {
			return score.Scorecard{}, usageError{fmt.Errorf("-baseline-exposure %s: DEFECTS=%s, not none: a baseline runs with every defect off", e.baselineExposure, bi.Active)}
		}
		baseInst = &bi
	}
	sc := score.ScoreAgainst(rep, inst, base, baseInst)
	if err := addCoverage(&sc, e); err != nil {
		return score.Scorecard{}, err
	}
	return sc, nil
}

// addCoverage adds what the instance measured of the run: its API coverage
// and, in a build with it, its code coverage, from the flags or, by
// default, from the admin port of an -exposure URL (where an instance that
// serves neither is passed over).
func addCoverage(sc *score.Scorecard, e entry) error {
	// The admin port of an -exposure URL, with its query: a deployment's
	// /defects?scope=deployment gives its coverage with the same scope.
	var admin *url.URL
	if u, err := url.Parse(e.exposure); err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.HasSuffix(u.Path, "/defects") {
		u.Path = strings.TrimSuffix(u.Path, "/defects")
		admin = u
	}
	auto := admin != nil
	api, code := e.coverage, e.codeCoverage
	if api == "" && auto {
		u := *admin
		u.Path += "/coverage"
		api = u.String()
	}
	if code == "" && auto {
		code = admin.String()
	}
	// Asked for by default, coverage is what an instance serves, if it
	// does: one from before coverage, or built without it, has none, and
	// the scorecard goes without. Asked for by a flag, a failure is an error.
	autoAPI, autoCode := e.coverage == "", e.codeCoverage == ""
	var c score.Coverage
	if api != "" {
		rep, err := readCoverage(api)
		switch {
		case err != nil && autoAPI:
		case err != nil:
			return err
		default:
			c.API = rep
		}
	}
	if code != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		raw, fetched := code, false
		if isURL(code) {
			fetched = true
			dir, err := os.MkdirTemp("", "showcase-codecov-")
			if err != nil {
				return err
			}
			raw = dir
			if err := codecov.Snapshot(ctx, &http.Client{Timeout: time.Minute}, code, dir); err != nil {
				os.RemoveAll(dir)
				if !autoCode {
					return fmt.Errorf("-code-coverage: %w", err)
				}
				raw = ""
			}
		}
		if raw != "" {
			src := e.source
			if src == "" {
				src = codecov.DefaultSource()
			}
			c.Code = codecov.Compute(ctx, raw, src)
			if fetched && c.Code.Missing == "" {
				// Computed whole: the snapshot taken for it is not kept.
				// Where something could not be, it stays, and the report
				// names its folder.
				os.RemoveAll(raw)
				c.Code.Raw = ""
			}
		}
	}
	if c.API == nil && c.Code == nil {
		return nil
	}
	if sc.Coverage != nil {
		c.ToolSaid = sc.Coverage.ToolSaid
	}
	sc.Coverage = &c
	return nil
}

// readCoverage reads an instance's API coverage, its /coverage as a URL
// or a saved file.
func readCoverage(where string) (*coverage.Report, error) {
	data, status, err := fetchOrRead(where)
	switch {
	case err != nil:
		return nil, fmt.Errorf("-coverage: %w", err)
	case status != http.StatusOK:
		return nil, fmt.Errorf("-coverage: %s answered %d", where, status)
	}
	var rep coverage.Report
	if err := json.Unmarshal(data, &rep); err != nil || rep.Version == 0 {
		return nil, &score.InputError{File: where, Msg: fmt.Sprintf("-coverage: not an instance's /coverage (%v)", err)}
	}
	return &rep, nil
}

// fetchOrRead reads where: a URL's answer and its status, or a file (200).
func fetchOrRead(where string) ([]byte, int, error) {
	if !isURL(where) {
		data, err := os.ReadFile(where)
		return data, http.StatusOK, err
	}
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(where)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	return data, res.StatusCode, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isURL says whether an -exposure, -coverage or -code-coverage argument is
// an instance's URL rather than a saved file or folder.
func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// oneRun says why the report and the exposure come from one run, or ""
// when they may not: the exposure was read now from a live instance (a
// URL), and the instance has counted since before the report was last
// written, so the run that wrote it sent its requests to this instance and
// nothing reset the counts since. A saved exposure file says nothing of
// when it was read.
func oneRun(exposure, report string, since *time.Time) string {
	if since == nil || !isURL(exposure) {
		return ""
	}
	fi, err := os.Stat(report)
	if err != nil || fi.ModTime().Before(*since) {
		return ""
	}
	return fmt.Sprintf("the exposure was read from %s after the report was written (%s), and the instance has counted since %s, before it", exposure, fi.ModTime().UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
}

// readExposure reads an instance's ground truth with its exposure, from its
// admin URL or a file.
func readExposure(where string) (score.Instance, error) {
	var data []byte
	if isURL(where) {
		client := &http.Client{Timeout: 10 * time.Second}
		res, err := client.Get(where)
		if err != nil {
			return score.Instance{}, fmt.Errorf("-exposure: %w", err)
		}
		defer res.Body.Close()
		data, err = io.ReadAll(io.LimitReader(res.Body, 16<<20))
		if err != nil {
			return score.Instance{}, fmt.Errorf("-exposure: %w", err)
		}
		if res.StatusCode != http.StatusOK {
			// The instance's own words: a deployment's replica that did
			// not answer is named there.
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(data, &e) == nil && e.Error != "" {
				return score.Instance{}, fmt.Errorf("-exposure: %s answered %s: %s", where, res.Status, e.Error)
			}
			return score.Instance{}, fmt.Errorf("-exposure: %s answered %s", where, res.Status)
		}
	} else {
		var err error
		if data, err = os.ReadFile(where); err != nil {
			return score.Instance{}, &score.InputError{File: where, Msg: "-exposure: " + strings.TrimPrefix(err.Error(), "open "+where+": ")}
		}
	}
	return score.ParseExposure(where, data)
}

// trialRuns says whether the reports are runs of showcase-trials (folders
// with its report.json), to be compared; a mix of runs and reports is
// refused.
func trialRuns(entries []entry) (bool, error) {
	dirs := 0
	for _, e := range entries {
		if fi, err := os.Stat(e.report); err == nil && fi.IsDir() {
			dirs++
		}
	}
	switch {
	case dirs == 0:
		return false, nil
	case dirs < len(entries):
		return false, usageError{errors.New("give reports, or runs of showcase-trials (folders) to compare, not both")}
	}
	return true, nil
}

// compareRuns compares runs of showcase-trials made apart, as one run of
// several tools would: the trials of every run, summarized together, each
// with its own budget. A tool of one name in two runs is two tools: each
// is named apart by its run's folder ("schemathesis (out/st)").
func compareRuns(entries []entry, format, out string, stdout io.Writer) error {
	var runs [][]trials.Trial
	inRuns := map[string]int{}
	given := map[string]bool{}
	for _, e := range entries {
		abs, _ := filepath.Abs(e.report)
		if given[abs] {
			return usageError{fmt.Errorf("%s: the same run given twice", e.report)}
		}
		given[abs] = true
		ts, err := trials.LoadRun(e.report)
		if err != nil {
			return &score.InputError{File: e.report, Msg: err.Error()}
		}
		runs = append(runs, ts)
		seen := map[string]bool{}
		for _, t := range ts {
			if !seen[t.Tool] {
				seen[t.Tool] = true
				inRuns[t.Tool]++
			}
		}
	}
	var all []trials.Trial
	for i, ts := range runs {
		for _, t := range ts {
			if inRuns[t.Tool] > 1 {
				t.Tool = fmt.Sprintf("%s (%s)", t.Tool, filepath.Clean(entries[i].report))
			}
			all = append(all, t)
		}
	}
	var buf bytes.Buffer
	switch format {
	case "json":
		b, err := json.MarshalIndent(trials.Summarize(all, 0), "", "  ")
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
	case "svg":
		f, err := os.CreateTemp("", "trials-*.svg")
		if err != nil {
			return err
		}
		f.Close()
		defer os.Remove(f.Name())
		if err := trials.Chart(all, f.Name()); err != nil {
			return err
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			return err
		}
		buf.Write(b)
	default:
		if err := trials.Summarize(all, 0).WriteMarkdown(&buf, "", ""); err != nil {
			return err
		}
	}
	if out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
