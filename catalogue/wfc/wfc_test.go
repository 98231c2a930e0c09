package wfc_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
)

var created = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func key(t *testing.T, setting string, all bool) (wfc.Report, []byte) {
	t.Helper()
	active, err := catalogue.Parse(setting)
	if err != nil {
		t.Fatal(err)
	}
	r := wfc.AnswerKey(active, wfc.Options{Version: "v1.2.3", Created: created, CatalogueCodes: all})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// The answer key with every defect active: the seven faults WFC's schema
// can express, each on its operation under both keys with the defect's
// codes, and what it cannot as warnings; valid against the published
// schema.
func TestAnswerKeyAll(t *testing.T) {
	r, b := key(t, "all", false)
	if p := wfctest.Check(b); len(p) > 0 {
		t.Fatalf("not valid against WFC's schema:\n%s", strings.Join(p, "\n"))
	}
	if r.SchemaVersion != "0.6.0" || r.ToolName != wfc.ToolName || r.ToolVersion != "v1.2.3" || !r.CreationTime.Equal(created) {
		t.Errorf("header: %q %q %q %v", r.SchemaVersion, r.ToolName, r.ToolVersion, r.CreationTime)
	}
	want := map[catalogue.ID][]int{
		catalogue.ERR01: {100}, catalogue.ERR02: {100}, catalogue.ERR03: {100},
		catalogue.CONF01: {101}, catalogue.CONF02: {101}, catalogue.CONF03: {101}, catalogue.CONF04: {101},
	}
	if len(r.Faults.FoundFaults) != len(want) || r.Faults.TotalNumber != 7 {
		t.Fatalf("%d found faults, total %d; want %d and 7", len(r.Faults.FoundFaults), r.Faults.TotalNumber, len(want))
	}
	for _, f := range r.Faults.FoundFaults {
		id := catalogue.ID(strings.TrimSuffix(f.TestCaseID, "/1"))
		e := catalogue.EndpointOf(id)
		if f.OperationID != e.Method+":"+e.Path || f.EndpointID != f.OperationID {
			t.Errorf("%s: operationId %q, endpointId %q; want both %s:%s", id, f.OperationID, f.EndpointID, e.Method, e.Path)
		}
		var codes []int
		for _, c := range f.FaultCategories {
			codes = append(codes, c.Code)
			if c.Context == nil || !strings.Contains(*c.Context, string(id)) {
				t.Errorf("%s: F%d's context %v does not name the defect", id, c.Code, c.Context)
			}
		}
		if !slices.Equal(codes, want[id]) {
			t.Errorf("%s: codes %v, want %v", id, codes, want[id])
		}
	}
	var warned []string
	for _, w := range r.Warnings {
		warned = append(warned, strings.Fields(w.Message)[0])
	}
	if !slices.Equal(warned, []string{"SEC-01", "ERR-02", "PERF-01", "PERF-02"}) || !strings.Contains(r.Warnings[0].Message, "F207") ||
		!strings.Contains(r.Warnings[1].Message, "not under F209") {
		t.Errorf("warnings %v, want SEC-01 (F207), ERR-02 (F209), PERF-01, PERF-02", r.Warnings)
	}
	// A test case per trigger, its status that of an instance with the
	// defect active.
	triggers := 0
	for _, d := range catalogue.Defects {
		triggers += len(d.Triggers)
	}
	rest := r.ProblemDetails.REST
	if r.TotalTests != triggers || len(r.TestCases) != triggers || len(rest.CoveredHTTPStatus) != triggers || len(rest.EndpointIDs) != 10 {
		t.Errorf("%d tests, %d cases, %d covered, %d endpoints; want %d triggers and 10 endpoints", r.TotalTests, len(r.TestCases), len(rest.CoveredHTTPStatus), len(rest.EndpointIDs), triggers)
	}
	if c := rest.CoveredHTTPStatus[0]; c.TestCaseID != "SEC-01/1" || !slices.Equal(c.HTTPStatus, []int{200}) {
		t.Errorf("SEC-01's test case: %+v, want status 200", c)
	}
}

// The codes written as WFC's catalogue has them: SEC-01 is found under
// F207, ERR-02 under F209 too, and the report breaks the published
// schema's code ranges there and nowhere else.
func TestAnswerKeyCatalogueCodes(t *testing.T) {
	r, b := key(t, "all", true)
	if r.Faults.FoundFaults[0].EndpointID != "GET:/security/unauthenticated-access" || r.Faults.FoundFaults[0].FaultCategories[0].Code != 207 {
		t.Fatalf("first found fault %+v, want SEC-01 under F207", r.Faults.FoundFaults[0])
	}
	if r.Faults.TotalNumber != 9 || len(r.Warnings) != 2 {
		t.Errorf("total %d, warnings %v; want 9 and PERF's two", r.Faults.TotalNumber, r.Warnings)
	}
	p := wfctest.Check(b)
	if len(p) != 2 || !strings.Contains(p[0], "faults.foundFaults[0].faultCategories[0].code: 207 is outside") ||
		!strings.Contains(p[1], "faults.foundFaults[2].faultCategories[1].code: 209 is outside") {
		t.Errorf("problems %q, want the two codes outside the ranges", p)
	}
}

// DEFECTS=none: a perfect tool finds nothing; the test cases get the
// answers of the defects switched off.
func TestAnswerKeyNone(t *testing.T) {
	r, b := key(t, "none", false)
	if p := wfctest.Check(b); len(p) > 0 {
		t.Fatalf("not valid: %q", p)
	}
	if len(r.Faults.FoundFaults) != 0 || r.Faults.TotalNumber != 0 || len(r.Warnings) != 0 {
		t.Errorf("found %+v, warnings %v; want none", r.Faults, r.Warnings)
	}
	if c := r.ProblemDetails.REST.CoveredHTTPStatus[0]; !slices.Equal(c.HTTPStatus, []int{401}) {
		t.Errorf("SEC-01's test case off: %+v, want 401", c)
	}
	if !strings.Contains(string(b), `"foundFaults":[]`) || !strings.Contains(string(b), `"testFilePaths":[]`) {
		t.Errorf("empty lists must be written as [], not null: %s", b)
	}
}

// The check fails a document that breaks the schema, each way: it is not
// a check that passes everything.
func TestCheckRefuses(t *testing.T) {
	_, b := key(t, "all", false)
	for _, c := range []struct{ name, want string }{
		{"endpointId", "lacks the required \"endpointId\""},
		{"totalTests", "totalTests: -1 is outside"},
		{"toolName", "toolName: not a string"},
		{"creationTime", "creationTime: not a date-time"},
		{"httpStatus", "httpStatus[0]: 600 is outside"},
		{"categories", "faultCategories: empty"},
		{"testFilePaths", "testFilePaths[1]: repeats"},
		{"rest", "problemDetails.rest: lacks the required \"endpointIds\""},
		{"extra", "extra[0]: lacks the required \"criteria\""},
	} {
		var doc map[string]any
		_ = json.Unmarshal(b, &doc)
		faults := doc["faults"].(map[string]any)["foundFaults"].([]any)
		rest := doc["problemDetails"].(map[string]any)["rest"].(map[string]any)
		switch c.name {
		case "endpointId":
			delete(faults[0].(map[string]any), "endpointId")
		case "totalTests":
			doc["totalTests"] = -1
		case "toolName":
			doc["toolName"] = 7
		case "creationTime":
			doc["creationTime"] = "yesterday"
		case "httpStatus":
			rest["coveredHttpStatus"].([]any)[0].(map[string]any)["httpStatus"] = []any{600}
		case "categories":
			faults[0].(map[string]any)["faultCategories"] = []any{}
		case "testFilePaths":
			doc["testFilePaths"] = []any{"a.py", "a.py"}
		case "rest":
			delete(rest, "endpointIds")
		case "extra":
			doc["extra"] = []any{map[string]any{"toolName": "jacoco"}}
		}
		bad, _ := json.Marshal(doc)
		p := wfctest.Check(bad)
		if len(p) != 1 || !strings.Contains(p[0], c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, p, c.want)
		}
	}
}

func TestParseOperationID(t *testing.T) {
	for _, c := range []struct{ in, method, target string }{
		{"GET:/users/{id}", "GET", "/users/{id}"},
		{"post:/x", "POST", "/x"},
		{"GET:http://localhost:8080/security/unauthenticated-access", "GET", "http://localhost:8080/security/unauthenticated-access"},
		{"/no/method", "", ""},
		{"GET /x", "", ""},
	} {
		m, tg, ok := wfc.ParseOperationID(c.in)
		if m != c.method || tg != c.target || ok != (c.method != "") {
			t.Errorf("ParseOperationID(%q) = %q %q %v", c.in, m, tg, ok)
		}
	}
}

// With the instance's coverage, the answer key carries it as its extra
// coverage, valid against the schema: each criterion with its total, the
// TCL of 6, the undocumented statuses answered without one.
func TestAnswerKeyCoverage(t *testing.T) {
	t.Parallel()
	rep := &coverage.Report{Since: created, Operations: []coverage.OperationCovered{{Method: "GET", Path: "/a", Requests: 2,
		Statuses:      []coverage.StatusAnswered{{Status: 200, Response: "200", Answered: 1}, {Status: 404, Answered: 1}},
		Responses:     []coverage.ResponseAnswered{{Status: "200", Answered: 1}},
		StatusClasses: []coverage.ClassAnswered{{Class: "2XX", Answered: 1}, {Class: "4XX", Answered: 1}}}}}
	rep.Compute()
	r := wfc.AnswerKey(catalogue.All(), wfc.Options{Version: "v1", Created: created, Coverage: rep})
	b, _ := json.Marshal(r)
	if p := wfctest.Check(b); len(p) > 0 {
		t.Fatalf("not valid against WFC's schema:\n%s", strings.Join(p, "\n"))
	}
	if len(r.Extra) != 1 || !strings.HasPrefix(r.Extra[0].ToolName, wfc.TargetToolName+" since 2026-11-26T10:00:00Z") {
		t.Fatalf("extra %+v", r.Extra)
	}
	var got []string
	for _, c := range r.Extra[0].Criteria {
		total := "-"
		if c.Total != nil {
			total = fmt.Sprint(*c.Total)
		}
		got = append(got, fmt.Sprintf("%s %d/%s", c.Name, c.Covered, total))
	}
	want := []string{"API paths 1/1", "API operations 1/1", "API request_content_types 0/0", "API response_content_types 0/0",
		"API parameters 0/0", "API status_classes 2/2", "API parameter_values 0/0", "API status_codes 1/1", "API response_properties 0/0",
		"API TCL 6/6", "API undocumented statuses answered 1/-"}
	if !slices.Equal(got, want) {
		t.Errorf("criteria\n got %q\nwant %q", got, want)
	}
	if _, b := key(t, "all", false); strings.Contains(string(b), `"extra"`) {
		t.Error("without coverage the key has an extra")
	}
}
