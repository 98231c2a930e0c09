package score_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
	"github.com/defectshowcase/showcase/judge/score"
)

const wfcData = "testdata/wfc"

// The test reports are written to WFC's published schema: the only
// problems are the codes its ranges leave out, which WFC's catalogue
// defines and tools write (F207, F209, F210).
func TestWFCTestReportsValid(t *testing.T) {
	t.Parallel()
	for file, want := range map[string][]string{
		"full.json":         {"foundFaults[0].faultCategories[0].code: 207", "foundFaults[2].faultCategories[1].code: 209", "foundFaults[9].faultCategories[0].code: 210"},
		"defects-none.json": nil,
		"no-tests.json":     nil,
	} {
		var got []string
		for _, p := range wfctest.Check(readData(t, file)) {
			got = append(got, strings.TrimPrefix(strings.SplitN(p, " is outside", 2)[0], "faults."))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: problems %q, want %q", file, got, want)
		}
	}
}

// A whole WFC report with test cases and coverage: every code lands where
// a person reading it would put it. F100 on the three errors; F101 on the
// four conformance defects, each by its context; F207 on SEC-01; F102 a
// face of ERR-01 and PERF-01; F209 on ERR-02 by its CWE; the tool's own
// 903 (a slow answer, in the schema's range for tools' codes) and F210 on
// a path of no operation, unplanted under their codes.
func TestWFCFull(t *testing.T) {
	t.Parallel()
	rep := read(t, wfcData, "full.json")
	if rep.Format != "wfc" || rep.FormatVersion != "0.6.0" || rep.Tool != "ExampleFuzzer 2.1.0" || rep.Truncated != "" || rep.NoTests {
		t.Fatalf("format %q %q, tool %q, truncated %q, no tests %v", rep.Format, rep.FormatVersion, rep.Tool, rep.Truncated, rep.NoTests)
	}
	sc := score.Score(rep, score.Instance{Active: catalogue.All()}, nil)
	want := "SEC-01 reported [auth-bypass] []; ERR-01 reported [server-error] [accepted-invalid-request]; " +
		"ERR-02 reported [ server-error] []; ERR-03 reported [server-error] []; CONF-01 reported [invalid-body] []; " +
		"CONF-02 reported [wrong-content-type] []; CONF-03 reported [invalid-body] []; CONF-04 reported [undocumented-status] []; " +
		"PERF-01 missed [] [accepted-invalid-request]; PERF-02 missed [] []; unplanted []"
	if got := verdictsOf(sc); got != want {
		t.Errorf("verdicts\n got %s\nwant %s", got, want)
	}
	var checks []string
	for _, d := range sc.Defects {
		for _, f := range d.Findings {
			checks = append(checks, fmt.Sprintf("%s:%s", d.ID, f.Check))
		}
	}
	if !slices.Equal(checks, []string{"SEC-01:F207", "ERR-01:F100", "ERR-02:F100", "ERR-02:F209", "ERR-03:F100", "CONF-01:F101", "CONF-02:F101", "CONF-03:F101", "CONF-04:F101"}) {
		t.Errorf("findings %v", checks)
	}
	var unplanted []string
	for _, f := range sc.Unplanted {
		unplanted = append(unplanted, fmt.Sprintf("%s %s line %d: %s", f.Operation, f.Check, f.Line, f.Detail))
	}
	if !slices.Equal(unplanted, []string{"GET /admin F210 line 82: undeclared endpoint answered", "GET /performance/inefficient-algorithm F903 line 90: response took 1204 ms"}) {
		t.Errorf("unplanted %q", unplanted)
	}
	if f := sc.Defects[2].Findings[1]; f.CWE != 209 || f.Detail != "CHECK constraint failed: length(text) < 16" || f.Operation.Path != "/internal-server-errors/exceeding-column-size" {
		t.Errorf("ERR-02's F209, written with the server before the path: %+v", f)
	}
	var text strings.Builder
	if err := sc.Write(&text, "text"); err != nil || !strings.Contains(text.String(), "report: testdata/wfc/full.json (WFC, schema 0.6.0)") {
		t.Errorf("the text scorecard names the schema read: %v\n%s", err, text.String())
	}
	var js strings.Builder
	if err := sc.Write(&js, "json"); err != nil || !strings.Contains(js.String(), `"format_version": "0.6.0"`) {
		t.Errorf("the JSON scorecard names the schema read: %v", err)
	}
}

// Cut short in its sixth fault, a report is read for the five before it.
func TestWFCCut(t *testing.T) {
	t.Parallel()
	rep := read(t, wfcData, "cut.json")
	sc := score.Score(rep, score.Instance{Active: catalogue.All()}, nil)
	if got := reported(sc); !slices.Equal(got, []catalogue.ID{catalogue.SEC01, catalogue.ERR01, catalogue.ERR02, catalogue.ERR03, catalogue.CONF01}) {
		t.Errorf("reported %v, want the five faults before the cut", got)
	}
	if !strings.Contains(rep.Truncated, "cut short in line 53") || rep.NoTests || sc.TestedNothing {
		t.Errorf("truncated %q, no tests %v", rep.Truncated, rep.NoTests)
	}
}

// The same tool against DEFECTS=none, as the baseline: nothing found, no
// false positive; a report that ran no test says itself it tested nothing.
func TestWFCBaselineAndNoTests(t *testing.T) {
	t.Parallel()
	base := read(t, wfcData, "defects-none.json")
	sc := score.Score(read(t, wfcData, "full.json"), score.Instance{Active: catalogue.All()}, &base)
	if len(sc.FalsePositives) != 0 || sc.Total.FPR == nil || *sc.Total.FPR != 0 || base.NoTests {
		t.Errorf("false positives %v, FPR %v", sc.FalsePositives, sc.Total.FPR)
	}
	none := read(t, wfcData, "no-tests.json")
	nsc := score.Score(none, score.Instance{Active: catalogue.All()}, nil)
	if !none.NoTests || !nsc.TestedNothing || none.FormatVersion != "0.5.0" || !strings.Contains(nsc.Headline(), "made no test") {
		t.Errorf("no tests %v, tested nothing %v, version %q, %q", none.NoTests, nsc.TestedNothing, none.FormatVersion, nsc.Headline())
	}
	// The instance's count decides over the report's word.
	counted := score.Score(none, score.Instance{Active: catalogue.All(), Reached: map[catalogue.ID]uint64{catalogue.SEC01: 3}, Exposure: map[catalogue.ID]uint64{}}, nil)
	if counted.TestedNothing {
		t.Error("the instance counted requests: the run tested something")
	}
}

// The answer key, read as any WFC report, scores as a perfect tool that
// speaks WFC: everything WFC can say, nothing unplanted; with the
// catalogue's codes, SEC-01 too.
func TestAnswerKeyScores(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		setting string
		codes   bool
		want    []catalogue.ID
	}{
		{"all", false, []catalogue.ID{catalogue.ERR01, catalogue.ERR02, catalogue.ERR03, catalogue.CONF01, catalogue.CONF02, catalogue.CONF03, catalogue.CONF04}},
		{"all", true, []catalogue.ID{catalogue.SEC01, catalogue.ERR01, catalogue.ERR02, catalogue.ERR03, catalogue.CONF01, catalogue.CONF02, catalogue.CONF03, catalogue.CONF04}},
		{"conformance", false, []catalogue.ID{catalogue.CONF01, catalogue.CONF02, catalogue.CONF03, catalogue.CONF04}},
		{"none", false, nil},
	} {
		active, _ := catalogue.Parse(c.setting)
		b, _ := json.Marshal(wfc.AnswerKey(active, wfc.Options{Version: "test", Created: time.Now(), CatalogueCodes: c.codes}))
		rep, err := readBytes("key.json", b)
		if err != nil {
			t.Fatal(err)
		}
		sc := score.Score(rep, score.Instance{Active: active}, nil)
		if got := reported(sc); !slices.Equal(got, c.want) || len(sc.Unplanted) != 0 || rep.Tool != wfc.ToolName+" test" {
			t.Errorf("%s (catalogue codes %v): reported %v, unplanted %v, tool %q; want %v", c.setting, c.codes, got, sc.Unplanted, rep.Tool, c.want)
		}
	}
}

// Where a WFC report is refused, and why, at its line.
func TestWFCRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, data string
		line       int
		msg        string
	}{
		{"schema 1", "{\"toolName\":\"x\",\n\"schemaVersion\":\"1.0.0\",\"faults\":{\"foundFaults\":[]}}", 2, `WFC schema version "1.0.0": this reader knows 0.x`},
		{"no schema version", `{"toolName":"x","faults":{"foundFaults":[]}}`, 1, "without its schemaVersion"},
		{"faults not an object", "{\"schemaVersion\":\"0.6.0\",\"toolName\":\"x\",\n\"faults\":[]}", 2, "faults is not an object"},
		{"foundFaults not an array", "{\"schemaVersion\":\"0.6.0\",\"toolName\":\"x\",\"faults\":{\n\"foundFaults\":{}}}", 2, "foundFaults is not an array"},
		{"a fault without categories", "{\"schemaVersion\":\"0.6.0\",\"toolName\":\"x\",\"faults\":{\"foundFaults\":[\n{\"operationId\":\"GET:/a\",\"testCaseId\":\"t\",\"faultCategories\":[]}]}}", 2, "found fault 0 (GET:/a) has no faultCategories"},
		{"a code that is no integer", "{\"schemaVersion\":\"0.6.0\",\"toolName\":\"x\",\"faults\":{\"foundFaults\":[\n{\"operationId\":\"GET:/a\",\"faultCategories\":[{\"code\":\"F100\"}]}]}}", 2, "found fault 0"},
		{"more after it", "{\"schemaVersion\":\"0.6.0\",\"toolName\":\"x\",\"faults\":{\"foundFaults\":[]}}\n{}", 2, "more after the document"},
	} {
		_, err := readBytes("r.json", []byte(c.data))
		var ie *score.InputError
		if !errors.As(err, &ie) || ie.Line != c.line || !strings.Contains(ie.Msg, c.msg) {
			t.Errorf("%s: %v; want line %d, %q", c.name, err, c.line, c.msg)
		}
	}
}

// An operation as tools write it: verb and path, a server before the path,
// the verb in lower case, "VERB /path", or none at all.
func TestWFCOperations(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"GET:/response-conformance/missing-field":                        "GET /response-conformance/missing-field",
		"get:http://127.0.0.1:8080/response-conformance/missing-field?x": "GET /response-conformance/missing-field",
		"GET /response-conformance/missing-field":                        "GET /response-conformance/missing-field",
		"/response-conformance/missing-field":                            "GET /response-conformance/missing-field",
		"":                                                               "(no operation)",
	} {
		doc := fmt.Sprintf(`{"schemaVersion":"0.6.0","toolName":"x","faults":{"foundFaults":[{"operationId":%q,"testCaseId":"t","faultCategories":[{"code":101,"context":"missing age"}]}]}}`, id)
		rep, err := readBytes("r.json", []byte(doc))
		if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Operation.String() != want {
			t.Errorf("%q: %+v %v; want on %s", id, rep.Findings, err, want)
		}
	}
}

func readData(t *testing.T, file string) []byte {
	t.Helper()
	rep, err := os.ReadFile(wfcData + "/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
