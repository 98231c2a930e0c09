package suite

import (
	"net/http"
	"slices"
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

// The suite covers every defect of the catalogue, one endpoint group each;
// every finding its cases show is a class the catalogue credits to the
// defect (a primary class or a face), and every primary class is shown by
// a case (slow-response by the cases that take a second by design).
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
		d := catalogue.DefectOf(ep.Defect)
		shown := map[catalogue.Class]bool{}
		for _, c := range ep.Cases {
			for _, f := range c.Findings {
				shown[f] = true
				if !slices.Contains(d.Classes, f) && !slices.Contains(d.Faces, f) {
					t.Errorf("%s: case %q shows %s, which the catalogue does not credit to it", d.ID, c.Rule, f)
				}
			}
			if c.Slow {
				shown[catalogue.SlowResponse] = true
			}
			if path, _, _ := strings.Cut(c.Target, "?"); path != catalogue.EndpointOf(ep.Defect).Path && !strings.EqualFold(strings.TrimSuffix(path, "/"), catalogue.EndpointOf(ep.Defect).Path) {
				t.Errorf("%s: case %q targets %s", ep.Defect, c.Rule, c.Target)
			}
		}
		for _, c := range d.Classes {
			if !shown[c] {
				t.Errorf("%s: no case shows %s, which the catalogue says detects it", d.ID, c)
			}
		}
	}
	if len(seen) != len(catalogue.Defects) {
		t.Errorf("the suite covers %d of %d defects", len(seen), len(catalogue.Defects))
	}
}
