package score_test

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// The scorecard as JUnit: a case per defect (failed when missed, skipped
// when off) carrying its operation, CWE, WFC codes and OWASP category,
// and a case for the unplanted findings.
func TestScorecardJUnit(t *testing.T) {
	t.Parallel()
	sc := score.Score(read(t, wfcData, "full.json"), score.Instance{Active: catalogue.All().Without(catalogue.ERR03)}, nil)
	var b strings.Builder
	if err := sc.Write(&b, "junit"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suite    struct {
			Cases []struct {
				Name       string `xml:"name,attr"`
				Properties []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	// ERR-03 is off: it is skipped, and the tool's F100 there is unplanted.
	if doc.Tests != 11 || doc.Failures != 3 || doc.Skipped != 1 {
		t.Errorf("tests %d, failures %d, skipped %d; want 11, 3 (PERF-01, PERF-02, unplanted), 1 (ERR-03)\n%s", doc.Tests, doc.Failures, doc.Skipped, b.String())
	}
	var failed []string
	for _, c := range doc.Suite.Cases {
		if c.Failure != nil {
			failed = append(failed, c.Name+": "+c.Failure.Message)
		}
	}
	if !slices.Equal(failed, []string{"PERF-01 Unbounded result set: missed", "PERF-02 Inefficient algorithm: missed", "unplanted findings: 3 unplanted findings"}) {
		t.Errorf("failed %q", failed)
	}
	sec := doc.Suite.Cases[0]
	var props []string
	for _, p := range sec.Properties {
		props = append(props, p.Name+"="+p.Value)
	}
	if !slices.Equal(props, []string{"operation=GET /security/unauthenticated-access", "cwe=CWE-306", "wfc=F207", "owasp=API2:2023 Broken Authentication"}) {
		t.Errorf("SEC-01's properties %q", props)
	}
	if doc.Suite.Cases[3].Skipped == nil || !strings.Contains(doc.Suite.Cases[10].Failure.Text, "F903") {
		t.Errorf("ERR-03 not skipped, or the unplanted not listed:\n%s", b.String())
	}
}

// The scorecard as SARIF 2.1.0, valid against its schema: a rule per
// defect tagged with its CWE, WFC codes and OWASP category; a pass or a
// fail per active defect; a warning per unplanted finding.
func TestScorecardSARIF(t *testing.T) {
	t.Parallel()
	sc := score.Score(read(t, wfcData, "full.json"), score.Instance{Active: catalogue.All()}, nil)
	var b strings.Builder
	if err := sc.Write(&b, "sarif"); err != nil {
		t.Fatal(err)
	}
	doc, err := sarif.FromString(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(); err != nil {
		t.Fatalf("not valid SARIF: %v", err)
	}
	run := doc.Runs[0]
	rule := run.Tool.Driver.Rules[2]
	if *rule.ID != "ERR-02" || !slices.Equal(rule.Properties.Tags, []string{"errors", "external/cwe/cwe-209", "wfc/F100", "wfc/F209", "owasp-api-2023/API8:2023"}) {
		t.Errorf("ERR-02's rule: %s %v", *rule.ID, rule.Properties.Tags)
	}
	var kinds []string
	for _, r := range run.Results {
		kinds = append(kinds, *r.RuleID+":"+r.Kind)
	}
	want := []string{"SEC-01:pass", "ERR-01:pass", "ERR-02:pass", "ERR-03:pass", "CONF-01:pass", "CONF-02:pass", "CONF-03:pass", "CONF-04:pass", "PERF-01:fail", "PERF-02:fail", "unplanted:fail", "unplanted:fail"}
	if !slices.Equal(kinds, want) {
		t.Errorf("results %v\nwant %v", kinds, want)
	}
}
