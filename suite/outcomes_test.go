package suite

import (
	"net/http"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
)

// Every case of the suite is an allowed outcome, and a few wrong answers
// are not: the validator can fail.
func TestOutcomeAcceptsTheSuiteAndRejectsOthers(t *testing.T) {
	t.Parallel()
	json := http.Header{"Content-Type": {"application/json"}}
	for _, bad := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", PathMissingField, 200, `{"id":"123","name":"Alice","age":3}`},
		{"GET", PathMissingField, 500, `{"success":false,"error":"x"}`},
		{"POST", PathInputTypeHandling, 200, `{"success":true,"extra":1}`},
		{"GET", PathUnboundedResultSet + "?limit=5", 200, `{"item_0":"a","item_2":"b"}`},
		{"GET", "/nope", 200, `{}`},
		{"GET", PathInefficientAlgorithm, 200, `{"foundAt":[3,1]}`},
	} {
		if Outcome(bad.method, bad.path, bad.status, json, []byte(bad.body)) == nil {
			t.Errorf("%s %s %d %s was accepted", bad.method, bad.path, bad.status, bad.body)
		}
	}
}

// The suite covers every defect of the catalogue, one endpoint group each,
// and the findings its cases show are exactly the classes the catalogue
// says detect the defect (slow-response from the cases that take a second
// by design).
func TestSuiteAgreesWithTheCatalogue(t *testing.T) {
	t.Parallel()
	seen := map[catalogue.ID]bool{}
	for _, ep := range Endpoints() {
		if ep.Defect == "" {
			continue
		}
		if seen[ep.Defect] {
			t.Errorf("%s has two endpoint groups", ep.Defect)
		}
		seen[ep.Defect] = true
		classes := map[catalogue.Class]bool{}
		for _, c := range ep.Cases {
			for _, f := range c.Findings {
				classes[f] = true
			}
			if c.Slow {
				classes[catalogue.SlowResponse] = true
			}
			if path, _, _ := strings.Cut(c.Target, "?"); path != catalogue.EndpointOf(ep.Defect).Path && !strings.EqualFold(strings.TrimSuffix(path, "/"), catalogue.EndpointOf(ep.Defect).Path) {
				t.Errorf("%s: case %q targets %s", ep.Defect, c.Rule, c.Target)
			}
		}
		want := catalogue.DefectOf(ep.Defect).Classes
		if len(classes) != len(want) {
			t.Errorf("%s: the cases show %v, the catalogue says %v", ep.Defect, classes, want)
		}
		for _, c := range want {
			if !classes[c] {
				t.Errorf("%s: no case shows %s, which the catalogue says detects it", ep.Defect, c)
			}
		}
	}
	if len(seen) != len(catalogue.Defects) {
		t.Errorf("the suite covers %d of %d defects", len(seen), len(catalogue.Defects))
	}
}
