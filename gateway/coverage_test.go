package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

// coverageOf asks a built gateway's admin handler for /coverage.
func coverageOf(t *testing.T, built server.Built) *coverage.Report {
	t.Helper()
	rec := httptest.NewRecorder()
	built.Admin["GET "+gateway.PathCoverage].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathCoverage, nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("/coverage: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var rep coverage.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// criteria is a report's criteria as "name covered/total", in order.
func criteria(rep *coverage.Report) []string {
	var out []string
	for _, c := range rep.Criteria {
		out = append(out, fmt.Sprintf("%s %d/%d", c.Name, c.Covered, c.Total))
	}
	return out
}

func send(t *testing.T, base string, client *http.Client, cases ...suite.Case) {
	t.Helper()
	for _, c := range cases {
		r, err := suite.Do(context.Background(), client, base, c)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != 0 && r.Status != c.Status {
			t.Fatalf("%s %s: status %d, want %d", c.Method, c.Target, r.Status, c.Status)
		}
	}
}

// A known sequence of requests gives exactly the coverage it implies, each
// criterion counted by hand from the contract (docs/coverage.md), in one
// process and in front of separate services alike; the statuses and types
// answered undocumented are those of the ground truth (CONF-04's 404,
// CONF-02's text/plain); a reset empties it.
func TestCoverageExact(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"one process", "split"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			built, ts := startMode(t, mode)
			j := "application/json"
			send(t, ts.URL, ts.Client(),
				suite.Case{Target: suite.PathUnauthenticatedAccess, Status: 200},
				suite.Case{Target: suite.PathUnauthenticatedAccess, Header: http.Header{"X-Api-Key": {"k"}}, Status: 200},
				suite.Case{Method: "POST", Target: suite.PathInputTypeHandling, ContentType: j, Body: `{"number":"79927398713"}`, Status: 200},
				suite.Case{Method: "POST", Target: suite.PathInputTypeHandling, ContentType: j, Body: `{"number":"4111-1111"}`, Status: 500},
				suite.Case{Method: "POST", Target: suite.PathColumnSize, ContentType: "text/plain", Body: `x`, Status: 415},
				suite.Case{Method: "POST", Target: suite.PathColumnSize, ContentType: j, Body: `{"text":"abc"}`, Status: 200},
				suite.Case{Target: suite.PathMalformedJSON, Status: 200},
				suite.Case{Target: suite.PathIncorrectContentType, Status: 200},
				suite.Case{Target: suite.PathMissingField, Status: 200},
				suite.Case{Target: suite.PathUndocumentedStatus + "?id=0", Status: 200},
				suite.Case{Target: suite.PathUndocumentedStatus + "?id=1", Status: 404},
				suite.Case{Target: suite.PathUndocumentedStatus, Status: 400},
				suite.Case{Target: suite.PathUnboundedResultSet + "?limit=3", Status: 200},
				suite.Case{Target: suite.PathInefficientAlgorithm + "?n=10&searchTerm=5", Status: 200},
				suite.Case{Method: "DELETE", Target: suite.PathMissingField, Status: 405},
				suite.Case{Target: "/nope", Status: 404},
				suite.Case{Target: "/openapi.json", Status: 200},
			)
			rep := coverageOf(t, built)
			want := []string{
				"paths 9/10", "operations 9/10",
				"request_content_types 2/3",   // ERR-03's never sent
				"response_content_types 8/10", // ERR-03 never answered, CONF-02 never answers JSON
				"parameters 7/8",              // ERR-03's text
				"status_classes 11/20",        // 2XX of all but ERR-03; 4XX of ERR-02 (415) and CONF-04
				"parameter_values 0/0",
				"status_codes 11/23",
				"response_properties 10/35",
			}
			if got := criteria(rep); !slices.Equal(got, want) {
				t.Errorf("criteria:\n got %q\nwant %q", got, want)
			}
			if rep.TCL != 0 || rep.MaxTCL != 6 || rep.Requests != 17 {
				t.Errorf("TCL %d of %d, %d requests; want 0 of 6, 17", rep.TCL, rep.MaxTCL, rep.Requests)
			}
			if rep.Undeclared != (coverage.Undeclared{Paths: 2, Methods: 1}) {
				t.Errorf("undeclared %+v, want 2 paths (/nope, the contract) and 1 method", rep.Undeclared)
			}
			if got, want := rep.Undocumented(), []string{"GET " + suite.PathUndocumentedStatus + " 404"}; !slices.Equal(got, want) {
				t.Errorf("undocumented statuses %q, want %q (CONF-04's)", got, want)
			}
			op := func(path string) coverage.OperationCovered {
				for _, o := range rep.Operations {
					if o.Path == path {
						return o
					}
				}
				t.Fatalf("no operation %s", path)
				return coverage.OperationCovered{}
			}
			if p := op(suite.PathUnauthenticatedAccess).Parameters; len(p) != 1 || p[0].In != "header" || p[0].Name != "X-API-Key" || p[0].Sent != 1 {
				t.Errorf("SEC-01's parameters %+v, want the API key sent once", p)
			}
			if got := op(suite.PathIncorrectContentType).ResponseTypes; !slices.Equal(got, []coverage.MediaCount{
				{Type: "application/json", Documented: true}, {Type: "text/plain", Count: 1}}) {
				t.Errorf("CONF-02's response types %+v, want text/plain undocumented (CONF-02's)", got)
			}
			if got := op(suite.PathColumnSize).RequestTypes; !slices.Equal(got, []coverage.MediaCount{
				{Type: "application/json", Documented: true, Count: 1}, {Type: "text/plain", Count: 1}}) {
				t.Errorf("ERR-02's request types %+v", got)
			}
			person := op(suite.PathMissingField).Responses[0].Properties
			if !slices.Equal(person, []coverage.PropertyCarried{{Name: "id", Carried: 1}, {Name: "name", Carried: 1}, {Name: "age"}}) {
				t.Errorf("CONF-03's Person %+v, want age never carried (CONF-03's)", person)
			}
			if flag := op(suite.PathMalformedJSON).Responses[0]; flag.Answered != 1 || flag.Properties[0].Carried != 0 {
				t.Errorf("CONF-01's answer %+v, want answered once and success never carried: not JSON (CONF-01's)", flag)
			}

			// ERR-03 called: every path and operation, TCL 2.
			send(t, ts.URL, ts.Client(), suite.Case{Method: "POST", Target: suite.PathUnicodeEncoding, ContentType: j, Body: `{"text":"abc"}`, Status: 200})
			rep = coverageOf(t, built)
			if rep.TCL != 2 {
				t.Errorf("TCL %d, want 2: %q", rep.TCL, criteria(rep))
			}

			rec := httptest.NewRecorder()
			built.Admin["POST "+gateway.PathDefectsReset].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, gateway.PathDefectsReset, nil))
			rep = coverageOf(t, built)
			for _, c := range rep.Criteria {
				if c.Covered != 0 && c.Total != 0 {
					t.Errorf("after the reset, %s %d/%d", c.Name, c.Covered, c.Total)
				}
			}
			if rep.Requests != 0 || rep.Undeclared != (coverage.Undeclared{}) || len(rep.Undocumented()) != 0 {
				t.Errorf("after the reset: %d requests, %+v, %q", rep.Requests, rep.Undeclared, rep.Undocumented())
			}
		})
	}
}

// The whole endpoint suite, hostile cases included, gives the same coverage
// in one process and split; with every defect off nothing is answered
// undocumented (no status, no response type), and with them on exactly the
// ground truth's; the suite reaches TCL 3 with them off, the highest the
// contract allows (three operations can answer no 4XX), and 2 with them on
// (CONF-02 never answers JSON).
func TestCoverageOfTheSuite(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.All(), catalogue.None()} {
		t.Run(active.String(), func(t *testing.T) {
			t.Parallel()
			reports := map[string]*coverage.Report{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, mode := range []string{"one process", "split"} {
				built, ts := startModeWith(t, mode, active)
				wg.Go(func() {
					// One at a time: endpoint 10's queue answers 503 only
					// under concurrency, and the counts are to agree.
					for _, ep := range suite.Endpoints() {
						for _, c := range ep.Cases {
							if _, err := suite.Do(context.Background(), ts.Client(), ts.URL, ep.For(c, active)); err != nil {
								t.Error(err)
							}
						}
					}
					mu.Lock()
					defer mu.Unlock()
					reports[mode] = coverageOf(t, built)
				})
			}
			wg.Wait()
			a, b := reports["one process"], reports["split"]
			if a == nil || b == nil {
				t.FailNow()
			}
			a.Since = b.Since // each instance started on its own
			if d := jsonDiff(a, b); d != "" {
				t.Errorf("one process and split differ (-one process +split):\n%s", d)
			}
			var undocumented []string
			for _, o := range a.Operations {
				for _, s := range o.Statuses {
					if s.Response == "" {
						undocumented = append(undocumented, fmt.Sprintf("%s %d", o.Path, s.Status))
					}
				}
				for _, ty := range o.ResponseTypes {
					if !ty.Documented && ty.Count > 0 {
						undocumented = append(undocumented, o.Path+" "+ty.Type)
					}
				}
			}
			want, tcl := []string(nil), 3
			if active.Active(catalogue.CONF01) {
				want = []string{suite.PathIncorrectContentType + " text/plain", suite.PathUndocumentedStatus + " 404"}
				tcl = 2
			}
			if !slices.Equal(undocumented, want) {
				t.Errorf("answered undocumented: %q, want %q", undocumented, want)
			}
			if a.TCL != tcl {
				t.Errorf("TCL %d, want %d: %q", a.TCL, tcl, criteria(a))
			}
		})
	}
}

// startModeWith is startMode with the given defects active.
func startModeWith(t *testing.T, mode string, active catalogue.Set) (server.Built, *httptest.Server) {
	t.Helper()
	env := map[string]string{"DEFECTS": active.String()}
	if mode == "split" {
		sp := startSplitWith(t, active)
		for _, c := range catalogue.Categories {
			env[c.Upstream] = sp.upstreams[c.Name].URL
		}
	}
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, observe.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(built.Handler)
	t.Cleanup(func() {
		ts.Close()
		_ = built.Close()
	})
	return built, ts
}

// Whatever a client sends, the coverage keeps a bounded table: a thousand
// distinct request and response types, statuses and paths leave at most
// 16 undocumented types per operation and direction plus "(other)", and
// undeclared paths as one count; a body over 64 KiB is passed on whole but
// not read for properties.
func TestCoverageBounded(t *testing.T) {
	t.Parallel()
	built, ts := startMode(t, "one process")
	const n = 1000
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			send(t, ts.URL, ts.Client(),
				suite.Case{Method: "POST", Target: suite.PathColumnSize, ContentType: fmt.Sprintf("application/x-%d", i), Body: `{"text":"a"}`},
				suite.Case{Target: fmt.Sprintf("/nowhere/%d", i)})
		})
	}
	wg.Wait()
	big := `{"pad":"` + strings.Repeat("x", 70<<10) + `","text":"abc"}`
	send(t, ts.URL, ts.Client(), suite.Case{Method: "POST", Target: suite.PathColumnSize, ContentType: "application/json", Body: big, Status: 200})
	rep := coverageOf(t, built)
	if rep.Undeclared.Paths != n {
		t.Errorf("undeclared paths %d, want %d", rep.Undeclared.Paths, n)
	}
	for _, o := range rep.Operations {
		if o.Path != suite.PathColumnSize {
			continue
		}
		if len(o.RequestTypes) != 1+16+1 {
			t.Errorf("%d request types, want the documented one, 16 and (other)", len(o.RequestTypes))
		}
		var total uint64
		for _, ty := range o.RequestTypes {
			total += ty.Count
		}
		if total != n+1 {
			t.Errorf("request types count %d requests, want %d", total, n+1)
		}
		if o.Parameters[0].Sent != 0 {
			t.Errorf("text counted %d times: the only JSON body was over 64 KiB", o.Parameters[0].Sent)
		}
	}
}

// The summary a person reads says each criterion's covered/total, the TCL,
// and what was answered undocumented.
func TestCoverageSummary(t *testing.T) {
	t.Parallel()
	built, ts := startMode(t, "one process")
	send(t, ts.URL, ts.Client(), suite.Case{Target: suite.PathUndocumentedStatus + "?id=7", Status: 404})
	rec := httptest.NewRecorder()
	built.Admin["GET "+gateway.PathCoverageText].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathCoverageText, nil))
	body := rec.Body.String()
	for _, want := range []string{"1 requests, TCL 0 of 6", "paths                   1    1/10     10%",
		"parameter values        5    0/0      (nothing to cover)", "GET " + suite.PathUndocumentedStatus + ": status 404 (1)",
		"GET " + suite.PathMalformedJSON + ": never called"} {
		if !strings.Contains(body, want) {
			t.Errorf("summary lacks %q:\n%s", want, body)
		}
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

// jsonDiff lists the lines where a and b, as indented JSON, differ: "" when
// they do not.
func jsonDiff(a, b any) string {
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	la, lb := strings.Split(string(ja), "\n"), strings.Split(string(jb), "\n")
	if len(la) != len(lb) {
		return fmt.Sprintf("%d lines against %d", len(la), len(lb))
	}
	var out []string
	for i := range la {
		if la[i] != lb[i] {
			out = append(out, fmt.Sprintf("line %d (after %q):\n-%s\n+%s", i, strings.TrimSpace(la[max(0, i-3)]), la[i], lb[i]))
		}
	}
	return strings.Join(out, "\n")
}
