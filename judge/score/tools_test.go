package score_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

func exposureOf(t *testing.T, dir string) score.Instance {
	t.Helper()
	file := filepath.Join(dir, "exposure.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := score.ParseExposure(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// operations lists the findings' operations, in the report's order.
func operations(fs []score.Finding) []string {
	var ops []string
	for _, f := range fs {
		ops = append(ops, f.Operation.String())
	}
	return ops
}

// Every real report lands each finding where a person reading it would:
// the tool and its version as the report names them, the defects reported,
// what is unplanted and where, and the tool's own errors. Each run is
// scored against the exposure of its own run, which never contradicts it.
func TestRealReportsOfThreeTools(t *testing.T) {
	t.Parallel()
	st, af := schemathesis, samples+"/apifuzzer-0.9.13"
	sqli, dast := samples+"/nuclei-3.11.1/time-based-sqli-old/defects-all", samples+"/nuclei-3.11.1/dast/defects-all"
	// nuclei's templates sent GET to every path; where the contract has
	// POST, its JSON exports say GET, and the SARIF names no method: in
	// every format, each finding is on the operation at its path.
	nucleiByPath := []string{
		"GET /performance/inefficient-algorithm", "GET /response-conformance/missing-field",
		"POST /internal-server-errors/improper-unicode-encoding", "GET /security/unauthenticated-access",
		"GET /response-conformance/malformed-json", "GET /response-conformance/incorrect-content-type",
		"POST /internal-server-errors/improper-input-type-handling", "GET /response-conformance/undocumented-status-code",
		"POST /internal-server-errors/exceeding-column-size", "GET /performance/unbounded-result-set",
	}
	for _, c := range []struct {
		dir, file, tool, format string
		opt                     score.Options
		reported                []catalogue.ID
		unplanted               []string // operations, in order
		toolErrors              int
	}{
		{dir: st + "/defects-all-seed3", file: "report.ndjson.gz", tool: "Schemathesis 4.9.5", format: "schemathesis-ndjson", reported: catalogue.All().ActiveIDs()},
		{dir: st + "/defects-all-seed3", file: "junit.xml", tool: "Schemathesis", format: "junit", reported: catalogue.All().ActiveIDs()},
		{dir: st + "/defects-all-seed20240101", file: "report.ndjson.gz", tool: "Schemathesis 4.9.5", format: "schemathesis-ndjson", reported: catalogue.All().ActiveIDs()},
		{dir: st + "/defects-all-seed20240101", file: "junit.xml", tool: "Schemathesis 4.9.5", format: "junit", opt: score.Options{Tool: "Schemathesis 4.9.5"}, reported: catalogue.All().ActiveIDs()},
		{dir: af + "/defects-all", file: "junit.xml.gz", tool: "APIFuzzer 0.9.13", format: "junit", reported: []catalogue.ID{catalogue.ERR01}, toolErrors: 80},
		{dir: sqli, file: "nuclei.sarif", tool: "Nuclei v3.11.1", format: "sarif", unplanted: nucleiByPath},
		{dir: sqli, file: "nuclei.json", tool: "nuclei", format: "nuclei-json", unplanted: nucleiByPath},
		{dir: sqli, file: "nuclei.jsonl", tool: "nuclei v3.11.1", format: "nuclei-jsonl", opt: score.Options{Tool: "nuclei v3.11.1"}, unplanted: nucleiByPath},
		{dir: dast, file: "nuclei.json", tool: "nuclei v3.11.1", format: "json", opt: score.Options{Tool: "nuclei v3.11.1"}},
		{dir: dast, file: "nuclei.jsonl", tool: "nuclei v3.11.1", format: "empty", opt: score.Options{Tool: "nuclei v3.11.1"}},
	} {
		name := filepath.Join(c.dir, c.file)
		rep, err := score.ReadFile(name, c.opt)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		sc := score.Score(rep, exposureOf(t, c.dir), nil)
		if rep.Tool != c.tool || rep.Format != c.format || rep.ToolErrors != c.toolErrors || sc.ToolErrors != c.toolErrors {
			t.Errorf("%s: tool %q, format %s, %d tool errors; want %q, %s, %d", name, rep.Tool, rep.Format, rep.ToolErrors, c.tool, c.format, c.toolErrors)
		}
		if got := reported(sc); !slices.Equal(got, c.reported) {
			t.Errorf("%s: reported %v, want %v", name, got, c.reported)
		}
		if got := operations(sc.Unplanted); !slices.Equal(got, c.unplanted) {
			t.Errorf("%s: unplanted on %q, want %q", name, got, c.unplanted)
		}
		if len(sc.Contradicted) != 0 {
			t.Errorf("%s: its own run's exposure contradicts it: %v", name, sc.Contradicted)
		}
	}

	// APIFuzzer's 90 failures are one finding: a 500 on ERR-01's operation,
	// read from the JSON dump in each <failure>'s message.
	rep := read(t, af+"/defects-all", "junit.xml.gz")
	if len(rep.Findings) != 1 || rep.Findings[0].Count != 90 || rep.Findings[0].Check != "status 500" || rep.Findings[0].Class != catalogue.ServerError {
		t.Errorf("APIFuzzer's failures: %+v", rep.Findings)
	}
	none := read(t, af+"/defects-none", "junit.xml.gz")
	if len(none.Findings) != 0 || none.ToolErrors != 80 || none.Tool != "APIFuzzer 0.9.13" {
		t.Errorf("APIFuzzer against DEFECTS=none: %d findings, %d tool errors, %q", len(none.Findings), none.ToolErrors, none.Tool)
	}
	sc := score.Score(rep, exposureOf(t, af+"/defects-all"), &none)
	if *sc.Total.TPR != 0.1 || *sc.Total.FPR != 0 || len(sc.FalsePositives) != 0 {
		t.Errorf("APIFuzzer: %+v", sc.Total)
	}
	// Its traffic reached CONF-04 and PERF-01 and it did not notice.
	for _, d := range sc.Defects {
		// Its exposure is of version 2, which counts no reach.
		want := map[catalogue.ID]string{catalogue.ERR01: "reported", catalogue.CONF04: "missed, triggered", catalogue.PERF01: "missed, triggered"}[d.ID]
		if want == "" {
			want = "missed, not triggered"
		}
		if d.Verdict() != want {
			t.Errorf("APIFuzzer %s: %s, want %s", d.ID, d.Verdict(), want)
		}
	}

	// Today's Schemathesis against DEFECTS=none: the one false positive is
	// its own (missing_required_header).
	base := read(t, st+"/defects-none-seed20240101", "report.ndjson.gz")
	sc = score.Score(read(t, st+"/defects-all-seed20240101", "report.ndjson.gz"), exposureOf(t, st+"/defects-all-seed20240101"), &base)
	if len(sc.FalsePositives) != 1 || sc.FalsePositives[0].Check != "missing_required_header" || *sc.Total.TPR != 1 || *sc.Total.FPR != 0.1 {
		t.Errorf("Schemathesis: false positives %v, total %+v", sc.FalsePositives, sc.Total)
	}
}

// A report scored against another run's exposure is caught: it reports a
// defect that exposure never saw triggered.
func TestExposureOfAnotherRun(t *testing.T) {
	t.Parallel()
	rep := read(t, samples+"/apifuzzer-0.9.13/defects-all", "junit.xml.gz")
	sc := score.Score(rep, exposureOf(t, samples+"/nuclei-3.11.1/time-based-sqli-old/defects-all"), nil)
	if !slices.Equal(sc.Contradicted, []catalogue.ID{catalogue.ERR01}) || !sc.Defects[1].Contradicted {
		t.Fatalf("contradicted %v", sc.Contradicted)
	}
	var b strings.Builder
	for _, f := range score.Formats {
		b.Reset()
		if err := sc.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "contradict") {
			t.Errorf("%s does not say the exposure contradicts the report", f)
		}
	}
}

// A file is recognised by what it is; one that is no report is refused at
// its line with what it looks like, a missing one as an input error too.
func TestRecognition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, data string
		line       int
		msg        string
	}{
		{"other JSON Lines", "{\"level\":\"info\",\"msg\":\"a\"}\n{\"level\":\"info\",\"msg\":\"b\"}\n", 1, "JSON Lines, but not of a tool this scorer reads (its first object has the keys level, msg)"},
		{"nuclei's JSON Lines with a line that is not a result", "{\"template-id\":\"x\",\"matched-at\":\"http://h/security/unauthenticated-access\"}\n{\"oops\":1}\n", 2, "not a nuclei result: no template-id"},
		{"nuclei's JSON Lines with a broken line", "{\"template-id\":\"x\",\"matched-at\":\"http://h/a\"}\n{\"template-id\":\n", 2, "not a nuclei result"},
		{"a JSON object of another kind", `{"name":"x","results":[]}`, 1, "a JSON object that is not SARIF"},
		{"the ground truth", `{"version":2,"setting":"all","active":[],"defects":[]}`, 1, "give it with -exposure"},
		{"an HTML page", "<!DOCTYPE html>\n<html><head></head></html>", 2, "an HTML page, not JUnit"},
		{"binary", "\x89PNG\r\n\x1a\n\x00\x00", 1, "binary data"},
		{"nuclei's text output", "[time-based-sqli] [http] [critical] http://127.0.0.1:8080/security/unauthenticated-access\n", 1, "nuclei's text output"},
		{"Markdown", "| Hostname/IP | Finding | Severity |\n| --- | --- | --- |\n", 1, "Markdown"},
		{"a tool's log", "banner\n[FTL] Could not create runner\n", 1, "a tool's log"},
		{"not JSON", "{not json at all", 1, "not JSON"},
		{"SARIF without runs", `{"version":"2.1.0"}`, 1, "no runs"},
		{"SARIF with runs that are no array", "{\"version\":\"2.1.0\",\n\"runs\":{}}", 2, "runs is not an array"},
		{"an empty file", "", 0, "must be named with -tool"},
		{"white space", "\n\n  \n", 0, "empty"},
	} {
		_, err := readBytes("r.x", []byte(c.data))
		var ie *score.InputError
		if !errors.As(err, &ie) || ie.File != "r.x" || ie.Line != c.line || !strings.Contains(ie.Msg, c.msg) {
			t.Errorf("%s: %v; want r.x line %d, %q", c.name, err, c.line, c.msg)
		}
	}
	_, err := score.ReadFile("testdata/no-such-report.json", score.Options{})
	var ie *score.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no-such-report.json: no such file") {
		t.Errorf("a missing file: %v", err)
	}
	// Named, an empty file is a report of no findings.
	rep, err := score.Read("empty.jsonl", strings.NewReader(""), score.Options{Tool: "nuclei v3.11.1"})
	if err != nil || len(rep.Findings) != 0 || rep.Tool != "nuclei v3.11.1" {
		t.Errorf("an empty report of a named tool: %+v, %v", rep, err)
	}
}

// The rule that places a finding: the contract's one operation at its
// path, with the method given or without, or another (kept as sent); a
// path that is not the contract's is on no operation.
func TestPathAlone(t *testing.T) {
	t.Parallel()
	csv := "method,path,class\n" +
		",internal-server-errors/improper-unicode-encoding,server-error\n" + // relative, as nuclei's SARIF
		",http://127.0.0.1:8080/performance/unbounded-result-set?limit=9,slow-response\n" +
		",/admin,server-error\n" +
		"GET,/internal-server-errors/exceeding-column-size,server-error\n"
	rep, err := readBytes("r.csv", []byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"POST /internal-server-errors/improper-unicode-encoding", "GET /performance/unbounded-result-set", "/admin", "POST /internal-server-errors/exceeding-column-size"}
	if got := operations(rep.Findings); !slices.Equal(got, want) {
		t.Fatalf("operations %q, want %q", got, want)
	}
	if sent := rep.Findings[3].Sent; sent != "GET" || rep.Findings[0].Sent != "" {
		t.Errorf("the method sent: %q and %q, want GET and none", sent, rep.Findings[0].Sent)
	}
	sc := score.Score(rep, score.Instance{Active: catalogue.All()}, nil)
	if got := reported(sc); !slices.Equal(got, []catalogue.ID{catalogue.ERR02, catalogue.ERR03, catalogue.PERF01}) || len(sc.Unplanted) != 1 {
		t.Errorf("reported %v, unplanted %v", got, sc.Unplanted)
	}
}

// A scoreboard renders in every format: a row per run, the tool that did
// not run marked so, JSON that reads back, SVG that is well-formed with a
// tile per run and defect.
func TestScoreboardFormats(t *testing.T) {
	t.Parallel()
	st := schemathesis + "/defects-all-seed3"
	board := score.Scoreboard{Tools: []score.Scorecard{
		score.Score(read(t, st, "report.ndjson.gz"), exposureOf(t, st), nil),
		score.NotRun("nuclei v3.11.1", "nuclei.log", "it refused the contract", score.Instance{Active: catalogue.All()}),
	}}
	for _, f := range score.Formats {
		var b strings.Builder
		if err := board.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		switch f {
		case "json":
			var got struct {
				Tools []struct {
					Tool   string `json:"tool"`
					NotRun string `json:"not_run"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Tools) != 2 || got.Tools[1].NotRun != "it refused the contract" {
				t.Errorf("json: %v %+v", err, got)
			}
		case "svg":
			dec := xml.NewDecoder(strings.NewReader(out))
			tiles := 0
			for {
				tok, err := dec.Token()
				if err != nil {
					if err != io.EOF {
						t.Errorf("svg: %v", err)
					}
					break
				}
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "title" {
					tiles++
				}
			}
			if tiles != 20 {
				t.Errorf("svg: %d tiles, want 20", tiles)
			}
		case "junit", "sarif":
			// A suite (a run) per tool: Schemathesis's passes, nuclei's
			// proves nothing.
			for _, want := range []string{"Schemathesis 4.9.5", "10 of 10 planted defects reported", "nuclei v3.11.1", "tested nothing: it refused the contract"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s lacks %q:\n%s", f, want, out)
				}
			}
		default:
			for _, want := range []string{"Schemathesis 4.9.5", "10/10", "nuclei v3.11.1 tested nothing: it refused the contract"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s lacks %q:\n%s", f, want, out)
				}
			}
		}
	}
}

// verdictsAndRates is what must not depend on the format a run was read
// from: each defect's verdict and, per category, the counts and rates.
func verdictsAndRates(sc score.Scorecard) string {
	var b strings.Builder
	for _, d := range sc.Defects {
		fmt.Fprintf(&b, "%s %s; ", d.ID, d.Verdict())
	}
	for _, c := range append(sc.Categories, sc.Total) {
		fmt.Fprintf(&b, "\n%s: %d/%d reported, %d unplanted, %d/%d false alarms, TPR %v FPR %v J %v",
			c.Name, c.Reported, c.Active, c.Unplanted, c.FalseAlarms, c.Operations, rateOf(c.TPR), rateOf(c.FPR), rateOf(c.J))
	}
	return b.String()
}

func rateOf(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", *p)
}

// One run, one scorecard: every format a tool wrote for one run gives the
// same verdict per defect and the same rates, with the baseline in any of
// the formats its tool wrote for it. nuclei's three (SARIF names no method,
// its JSON and JSONL the GET its template sent to POST paths) and
// Schemathesis's two.
func TestOneRunOneScorecard(t *testing.T) {
	t.Parallel()
	sqli := samples + "/nuclei-3.11.1/time-based-sqli-old/defects-all"
	view := samples + "/nuclei-3.11.1/view-ba02795"
	for _, c := range []struct {
		name        string
		run         string
		files       []string
		baseline    string // a folder, its files the same names as files'; "" for the run's own
		tool        string
		errorsFPR   string // the errors category's false positive rate, where the baseline is given
		allFPR, tpr string
	}{
		// nuclei's one superseded template raised a false alarm on every
		// operation, with every defect on: as its own baseline, the FPR is
		// 1.00 in every category, whatever the format.
		{name: "nuclei time-based SQLi", run: sqli, files: []string{"nuclei.sarif", "nuclei.json", "nuclei.jsonl"}, tool: "nuclei v3.11.1", errorsFPR: "1.00", allFPR: "1.00", tpr: "0.00"},
		{name: "nuclei DAST through the contract view", run: view + "/nuclei-templates-dast/defects-all", files: []string{"nuclei.json", "nuclei.jsonl"},
			baseline: view + "/nuclei-templates-dast/defects-none", tool: "nuclei v3.11.1", errorsFPR: "0.00", allFPR: "0.00", tpr: "0.00"},
		{name: "Schemathesis seed 20240101", run: schemathesis + "/defects-all-seed20240101", files: []string{"report.ndjson.gz", "junit.xml"},
			baseline: schemathesis + "/defects-none-seed20240101", tool: "Schemathesis 4.9.5", errorsFPR: "0.00", allFPR: "0.10", tpr: "1.00"},
		{name: "Schemathesis seed 3", run: schemathesis + "/defects-all-seed3", files: []string{"report.ndjson.gz", "junit.xml"},
			baseline: schemathesis + "/defects-none-seed20240101", tool: "Schemathesis 4.9.5", errorsFPR: "0.00", allFPR: "0.10", tpr: "1.00"},
	} {
		baseDir := c.baseline
		if baseDir == "" {
			baseDir = c.run
		}
		opt := score.Options{Tool: c.tool}
		first, firstName := "", ""
		for _, file := range c.files {
			rep, err := score.ReadFile(filepath.Join(c.run, file), opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, bfile := range c.files {
				base, err := score.ReadFile(filepath.Join(baseDir, bfile), opt)
				if err != nil {
					t.Fatal(err)
				}
				sc := score.Score(rep, exposureOf(t, c.run), &base)
				got, name := verdictsAndRates(sc), file+" with "+bfile
				if first == "" {
					first, firstName = got, name
					if rateOf(sc.Categories[1].FPR) != c.errorsFPR || rateOf(sc.Total.FPR) != c.allFPR || rateOf(sc.Total.TPR) != c.tpr {
						t.Errorf("%s (%s): errors FPR %s, all FPR %s, TPR %s; want %s, %s, %s", c.name, name,
							rateOf(sc.Categories[1].FPR), rateOf(sc.Total.FPR), rateOf(sc.Total.TPR), c.errorsFPR, c.allFPR, c.tpr)
					}
					continue
				}
				if got != first {
					t.Errorf("%s: %s scores\n%s\nbut %s scores\n%s", c.name, name, got, firstName, first)
				}
			}
		}
	}
}

// The time a report gives each finding, where it gives one: Schemathesis's
// scenario, nuclei's result, the plain report's time column; SARIF and
// JUnit give none. A defect's detection time is its earliest finding's.
func TestFindingTimes(t *testing.T) {
	t.Parallel()
	st := schemathesis + "/defects-all-seed3"
	sqli := samples + "/nuclei-3.11.1/time-based-sqli-old/defects-all"
	for _, c := range []struct {
		dir, file string
		timed     bool
	}{{st, "report.ndjson.gz", true}, {st, "junit.xml", false}, {sqli, "nuclei.jsonl", true}, {sqli, "nuclei.json", true}, {sqli, "nuclei.sarif", false}} {
		rep, err := score.ReadFile(filepath.Join(c.dir, c.file), score.Options{Tool: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if (f.At != nil) != c.timed || c.timed && f.At.Year() != 2026 {
				t.Errorf("%s: %s at %v", c.file, f.Operation, f.At)
				break
			}
		}
	}
	rep := read(t, st, "report.ndjson.gz")
	sc := score.Score(rep, exposureOf(t, st), nil)
	for _, d := range sc.Defects {
		var earliest *time.Time
		for _, f := range d.Findings {
			if earliest == nil || f.At.Before(*earliest) {
				earliest = f.At
			}
		}
		if d.DetectedAt == nil || !d.DetectedAt.Equal(*earliest) {
			t.Errorf("%s detected at %v, its earliest finding at %v", d.ID, d.DetectedAt, earliest)
		}
	}
	csv := "method,path,class,time\nGET,/response-conformance/missing-field,invalid-body,2026-11-25T10:00:02Z\nGET,/response-conformance/missing-field,invalid-body,2026-11-25T10:00:01.5Z\n"
	rep, err := readBytes("r.csv", []byte(csv))
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Count != 2 || rep.Findings[0].At.Format(time.RFC3339Nano) != "2026-11-25T10:00:01.5Z" {
		t.Errorf("the plain report's times: %v %+v", err, rep.Findings)
	}
	if _, err := readBytes("r.csv", []byte("method,path,class,time\nGET,/x,invalid-body,yesterday\n")); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("a time that is not one: %v", err)
	}
}

// The same report and exposure, known to come from one run: the finding
// of a defect the instance never triggered is spurious, not a detection.
// It keeps its contradicted flag; it leaves the reported count and the
// rate; every format names it spurious and says why.
func TestSpuriousInOneRun(t *testing.T) {
	t.Parallel()
	rep := read(t, samples+"/apifuzzer-0.9.13/defects-all", "junit.xml.gz")
	inst := exposureOf(t, samples+"/nuclei-3.11.1/time-based-sqli-old/defects-all")
	apart := score.Score(rep, inst, nil)
	inst.OneRun = "read right after the tool"
	sc := score.Score(rep, inst, nil)
	d := sc.Defects[1]
	if !slices.Equal(sc.Contradicted, []catalogue.ID{catalogue.ERR01}) || !d.Contradicted || d.Reported || len(d.Findings) != 0 ||
		len(d.Spurious) == 0 || sc.Spurious != d.Spurious[0].Count || d.Verdict() != "spurious, never triggered" {
		t.Fatalf("ERR-01 in one run: %+v (contradicted %v, spurious %d)", d, sc.Contradicted, sc.Spurious)
	}
	if !apart.Defects[1].Reported || sc.Total.Reported != apart.Total.Reported-1 {
		t.Errorf("reported: %d in one run, %d apart; want one fewer", sc.Total.Reported, apart.Total.Reported)
	}
	var b strings.Builder
	for _, f := range score.Formats {
		b.Reset()
		if err := sc.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "spurious") {
			t.Errorf("%s does not name the finding spurious", f)
		}
	}
	b.Reset()
	_ = sc.Write(&b, "text")
	if !strings.Contains(b.String(), "never triggered in the run that wrote the report (read right after the tool)") {
		t.Errorf("the text does not say why:\n%s", b.String())
	}
}
