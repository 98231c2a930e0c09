package suite

import (
	"net/http"
	"testing"
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
