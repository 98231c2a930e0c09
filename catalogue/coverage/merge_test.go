package coverage_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// replica is a report of one operation, GET /items, with a query
// parameter "sort" of two values and a header, a documented 200 with two
// properties, a 400 and application/json: what a replica counted, in
// the order an instance lists it.
func replica(since time.Time, f func(o *coverage.OperationCovered)) *coverage.Report {
	o := coverage.OperationCovered{Method: "GET", Path: "/items",
		Parameters: []coverage.ParameterSent{
			{In: "query", Name: "sort", Values: []coverage.ValueSent{{Value: "asc"}, {Value: "desc"}}},
			{In: "header", Name: "X-Key"}},
		RequestTypes:  []coverage.MediaCount{},
		Responses:     []coverage.ResponseAnswered{{Status: "200", Properties: []coverage.PropertyCarried{{Name: "id"}, {Name: "name"}}}, {Status: "400"}},
		Statuses:      []coverage.StatusAnswered{},
		StatusClasses: []coverage.ClassAnswered{{Class: "2XX"}, {Class: "4XX"}},
		ResponseTypes: []coverage.MediaCount{{Type: "application/json", Documented: true}},
	}
	f(&o)
	r := &coverage.Report{Since: since, Operations: []coverage.OperationCovered{o}}
	r.Compute()
	return r
}

// Two replicas, each with part of a run; the merge counted by hand. A
// sent sort=asc twice and got 200 with id, and a 404 as text/plain; B
// sent sort=desc with X-Key and got 200 with name, and a 400. Each alone
// covers part of each criterion; together they cover every parameter,
// value, documented status, class and property, and answered one
// undocumented status (404) and type (text/plain).
func TestMergeIsTheUnion(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	a := replica(t0.Add(time.Second), func(o *coverage.OperationCovered) {
		o.Requests = 3
		o.Parameters[0].Sent, o.Parameters[0].Values[0].Sent = 2, 2
		o.Responses[0].Answered, o.Responses[0].Properties[0].Carried = 2, 2
		o.Statuses = []coverage.StatusAnswered{{Status: 200, Response: "200", Answered: 2}, {Status: 404, Answered: 1}}
		o.StatusClasses[0].Answered = 2
		o.ResponseTypes[0].Count = 2
		o.ResponseTypes = append(o.ResponseTypes, coverage.MediaCount{Type: "text/plain", Count: 1})
	})
	a.Requests, a.Undeclared.Paths = 4, 1
	b := replica(t0, func(o *coverage.OperationCovered) {
		o.Requests = 2
		o.Parameters[0].Sent, o.Parameters[0].Values[1].Sent, o.Parameters[1].Sent = 1, 1, 2
		o.Responses[0].Answered, o.Responses[0].Properties[1].Carried = 1, 1
		o.Responses[1].Answered = 1
		o.Statuses = []coverage.StatusAnswered{{Status: 200, Response: "200", Answered: 1}, {Status: 400, Response: "400", Answered: 1}}
		o.StatusClasses[0].Answered, o.StatusClasses[1].Answered = 1, 1
		o.ResponseTypes[0].Count = 2
	})
	b.Requests, b.Undeclared.Methods = 2, 3
	before := mustJSON(t, []*coverage.Report{a, b})

	ab, err := coverage.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	ba, err := coverage.Merge(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if x, y := mustJSON(t, ab), mustJSON(t, ba); x != y {
		t.Errorf("Merge(a, b) and Merge(b, a) differ:\n%s\n%s", x, y)
	}
	if mustJSON(t, []*coverage.Report{a, b}) != before {
		t.Error("Merge changed its inputs")
	}
	o := ab.Operations[0]
	want := map[string]any{
		"requests":     ab.Requests == 6 && o.Requests == 5,
		"since":        ab.Since.Equal(t0),
		"undeclared":   ab.Undeclared == coverage.Undeclared{Paths: 1, Methods: 3},
		"parameters":   o.Parameters[0].Sent == 3 && o.Parameters[0].Values[0].Sent == 2 && o.Parameters[0].Values[1].Sent == 1 && o.Parameters[1].Sent == 2,
		"responses":    o.Responses[0].Answered == 3 && o.Responses[0].Properties[0].Carried == 2 && o.Responses[0].Properties[1].Carried == 1 && o.Responses[1].Answered == 1,
		"statuses":     len(o.Statuses) == 3 && o.Statuses[0] == coverage.StatusAnswered{Status: 200, Response: "200", Answered: 3} && o.Statuses[1].Status == 400 && o.Statuses[2] == coverage.StatusAnswered{Status: 404, Answered: 1},
		"classes":      o.StatusClasses[0].Answered == 3 && o.StatusClasses[1].Answered == 1,
		"types":        len(o.ResponseTypes) == 2 && o.ResponseTypes[0].Count == 4 && o.ResponseTypes[1] == coverage.MediaCount{Type: "text/plain", Count: 1},
		"undocumented": strings.Join(ab.Undocumented(), ",") == "GET /items 404",
	}
	for what, ok := range want {
		if !ok.(bool) {
			t.Errorf("merged %s wrong: %s", what, mustJSON(t, ab))
		}
	}
	// Each criterion's covered targets, by hand: each replica alone, and
	// the union.
	covered := map[string][3]int{ // a, b, merged
		coverage.Paths: {1, 1, 1}, coverage.Operations: {1, 1, 1},
		coverage.Parameters: {1, 2, 2}, coverage.ParameterValues: {1, 1, 2},
		coverage.StatusCodes: {1, 2, 2}, coverage.StatusClasses: {1, 2, 2},
		coverage.ResponseProperties: {1, 1, 2}, coverage.ResponseContentTypes: {1, 1, 1},
		coverage.RequestContentTypes: {0, 0, 0},
	}
	for name, w := range covered {
		for i, r := range []*coverage.Report{a, b, ab} {
			if c, _ := r.Criterion(name); c.Covered != w[i] {
				t.Errorf("%s: report %d covers %d, want %d", name, i, c.Covered, w[i])
			}
		}
	}
	if a.TCL != 3 || b.TCL != 4 || ab.TCL != 6 {
		t.Errorf("TCL: a %d, b %d, merged %d; want 3, 4, 6", a.TCL, b.TCL, ab.TCL)
	}
	if c, tot := ab.Targets(); c != 13 || tot != 13 {
		t.Errorf("merged targets %d/%d, want 13/13 (1+1+2+2+1+2+2+2)", c, tot)
	}
}

func TestMergeRefusesAnotherContract(t *testing.T) {
	a := replica(time.Now(), func(*coverage.OperationCovered) {})
	b := replica(time.Now(), func(o *coverage.OperationCovered) { o.Path = "/other" })
	if _, err := coverage.Merge(a, b); err == nil || !strings.Contains(err.Error(), "not the same contract") {
		t.Errorf("another operation: %v", err)
	}
	c := replica(time.Now(), func(o *coverage.OperationCovered) { o.Parameters[1].Name = "X-Other" })
	if _, err := coverage.Merge(a, c); err == nil || !strings.Contains(err.Error(), "header X-Other is not in every replica's contract") {
		t.Errorf("another parameter: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
