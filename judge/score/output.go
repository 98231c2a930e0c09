package score

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/defectshowcase/showcase/catalogue"
)

// The scorecard as CI systems take test results: JUnit XML (GitLab's test
// reports, Jenkins) and SARIF 2.1.0 (code scanning). Each planted defect
// is a test case (a rule), failed when active and missed, skipped when
// off, and carries the field's names for it: its operation, CWE, WFC
// fault codes and OWASP API Top 10 category.

// codes are a defect's names in the field's vocabularies, as key and value.
func codes(id catalogue.ID) [][2]string {
	d := catalogue.DefectOf(id)
	e := catalogue.EndpointOf(id)
	out := [][2]string{{"operation", e.Method + " " + e.Path}}
	if d.CWE != 0 {
		out = append(out, [2]string{"cwe", fmt.Sprintf("CWE-%d", d.CWE)})
	}
	wfc, owasp, _ := d.Codes()
	var labels []string
	for _, c := range wfc {
		labels = append(labels, c.Label)
	}
	if len(labels) > 0 {
		out = append(out, [2]string{"wfc", strings.Join(labels, ",")})
	}
	if owasp != nil {
		out = append(out, [2]string{"owasp", owasp.ID + " " + owasp.Name})
	}
	return out
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName  string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitMessage   `xml:"failure"`
	Error      *junitMessage   `xml:"error"`
	Skipped    *junitMessage   `xml:"skipped"`
	Out        string          `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Type    string `xml:"type,attr,omitempty"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes a test suite per scorecard: a case per planted defect
// and one for the unplanted findings. A run that tested nothing has every
// case in error: it proves nothing either way.
func writeJUnit(w io.Writer, cards []Scorecard) error {
	all := junitSuites{Name: "defect showcase"}
	for _, sc := range cards {
		suite := junitSuite{Name: sc.title(), Properties: []junitProperty{{"report", sc.reportName()}, {"headline", sc.Headline()}}}
		for _, n := range sc.Notes() {
			suite.Properties = append(suite.Properties, junitProperty{"note", n})
		}
		for _, kv := range sc.Coverage.properties() {
			suite.Properties = append(suite.Properties, junitProperty{kv[0], kv[1]})
		}
		untested := ""
		if sc.NotRun != "" || sc.TestedNothing {
			untested = sc.Headline()
		}
		for _, d := range sc.Defects {
			c := junitCase{ClassName: "showcase." + d.Category, Name: fmt.Sprintf("%s %s", d.ID, d.Title)}
			for _, kv := range codes(d.ID) {
				c.Properties = append(c.Properties, junitProperty{kv[0], kv[1]})
			}
			switch {
			case !d.Active:
				c.Skipped = &junitMessage{Message: "off in the instance (DEFECTS=" + sc.Setting + ")"}
				suite.Skipped++
			case untested != "":
				c.Error = &junitMessage{Type: "tested nothing", Message: untested}
				suite.Errors++
			case !d.Reported:
				c.Failure = &junitMessage{Type: "missed", Message: d.Verdict(), Text: fmt.Sprintf("%s was not reported on %s: %s", d.ID, d.Operation, d.Verdict())}
				suite.Failures++
			default:
				c.Out = d.Verdict() + " by " + checks(d.Findings)
			}
			suite.Cases = append(suite.Cases, c)
		}
		c := junitCase{ClassName: "showcase.unplanted", Name: "unplanted findings"}
		if len(sc.Unplanted) > 0 {
			var lines []string
			for _, f := range sc.Unplanted {
				lines = append(lines, findingLine(f))
			}
			c.Failure = &junitMessage{Type: "unplanted", Message: plural(len(sc.Unplanted), "unplanted finding"), Text: strings.Join(lines, "\n")}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
		suite.Tests = len(suite.Cases)
		all.Tests += suite.Tests
		all.Failures += suite.Failures
		all.Errors += suite.Errors
		all.Skipped += suite.Skipped
		all.Suites = append(all.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeSARIF writes a run per scorecard: a rule per planted defect, tagged
// with its CWE, WFC codes and OWASP category, and a result per active
// defect: "pass" when reported, "fail" when missed, at its operation; and
// a warning per unplanted finding.
func writeSARIF(w io.Writer, cards []Scorecard) error {
	doc := sarif.NewReport()
	for _, sc := range cards {
		run := sarif.NewRunWithInformationURI("showcase-score", "https://github.com/defectshowcase/showcase/blob/main/docs/scoring.md")
		props := sarif.NewPropertyBag().Add("scored_tool", sc.Tool).Add("report", sc.reportName()).Add("setting", sc.Setting).
			Add("headline", sc.Headline()).Add("notes", append([]string{}, sc.Notes()...))
		for _, kv := range sc.Coverage.properties() {
			props.Add(kv[0], kv[1])
		}
		run.WithProperties(props)
		for _, ds := range sc.Defects {
			d := catalogue.DefectOf(ds.ID)
			props := sarif.NewPropertyBag()
			tags := []string{ds.Category}
			for _, kv := range codes(d.ID) {
				props.Add(kv[0], kv[1])
				switch kv[0] {
				case "cwe":
					tags = append(tags, "external/cwe/"+strings.ToLower(kv[1]))
				case "wfc":
					for _, c := range strings.Split(kv[1], ",") {
						tags = append(tags, "wfc/"+c)
					}
				case "owasp":
					tags = append(tags, "owasp-api-2023/"+strings.Fields(kv[1])[0])
				}
			}
			run.AddRule(string(d.ID)).WithName(d.Title).WithShortDescription(sarif.NewMultiformatMessageString().WithText(d.Title)).
				WithFullDescription(sarif.NewMultiformatMessageString().WithText(d.Symptom)).WithProperties(props.WithTags(tags))
		}
		run.AddRule("unplanted").WithName("Unplanted finding").WithShortDescription(sarif.NewMultiformatMessageString().WithText("A finding that matches no planted defect"))
		untested := sc.NotRun != "" || sc.TestedNothing
		for _, d := range sc.Defects {
			if !d.Active {
				continue
			}
			res := sarif.NewRuleResult(string(d.ID)).WithLocations([]*sarif.Location{operationLocation(d.Operation)})
			switch {
			case untested:
				res.WithKind("review").WithLevel("none").WithMessage(sarif.NewTextMessage(sc.Headline()))
			case d.Reported:
				res.WithKind("pass").WithLevel("none").WithMessage(sarif.NewTextMessage(fmt.Sprintf("%s %s by %s", d.ID, d.Verdict(), checks(d.Findings))))
			default:
				res.WithKind("fail").WithLevel("error").WithMessage(sarif.NewTextMessage(fmt.Sprintf("%s %s missed on %s: %s", d.ID, d.Title, d.Operation, d.Verdict())))
			}
			run.AddResult(res)
		}
		for _, f := range sc.Unplanted {
			run.AddResult(sarif.NewRuleResult("unplanted").WithKind("fail").WithLevel("warning").
				WithMessage(sarif.NewTextMessage("unplanted: " + findingLine(f))).WithLocations([]*sarif.Location{operationLocation(f.Operation)}))
		}
		doc.AddRun(run)
	}
	return doc.PrettyWrite(w)
}

func operationLocation(op Operation) *sarif.Location {
	return sarif.NewLocation().WithLogicalLocations([]*sarif.LogicalLocation{sarif.NewLogicalLocation().WithFullyQualifiedName(op.String()).WithKind("function")})
}
