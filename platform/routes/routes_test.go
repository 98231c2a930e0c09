package routes_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

func newRouter(logs io.Writer, reg *prometheus.Registry, which observe.LogRequests) http.Handler {
	tel := &observe.Telemetry{Registry: reg, Writer: logs, JSON: true, Requests: which}
	return routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/a/get", Handler: func(w http.ResponseWriter, _ *http.Request) {
			respond.JSON(w, http.StatusOK, []byte(`{"ok":true}`))
		}},
		{Method: http.MethodPost, Pattern: "/a/post", Handler: func(w http.ResponseWriter, _ *http.Request) {
			respond.JSON(w, http.StatusCreated, []byte(`{}`))
		}},
		{Method: http.MethodGet, Pattern: "/a/panic", Handler: func(http.ResponseWriter, *http.Request) {
			panic("the cause")
		}},
	}, nil, tel.Service("test-svc"))
}

func TestRouter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, method, path string
		status             int
		allow, body        string
	}{
		{"a GET route answers", "GET", "/a/get", 200, "", `{"ok":true}`},
		{"HEAD runs the GET handler without a body", "HEAD", "/a/get", 200, "", ``},
		{"OPTIONS lists the methods of a GET route", "OPTIONS", "/a/get", 200, "GET, HEAD, OPTIONS", ``},
		{"OPTIONS lists the methods of a POST route", "OPTIONS", "/a/post", 200, "OPTIONS, POST", ``},
		{"another method is 405 with Allow", "PUT", "/a/get", 405, "GET, HEAD, OPTIONS", `{"error":"Method Not Allowed"}`},
		{"GET on a POST route is 405", "GET", "/a/post", 405, "OPTIONS, POST", `{"error":"Method Not Allowed"}`},
		{"a non-standard method on a route is 405", "BREW", "/a/get", 405, "GET, HEAD, OPTIONS", `{"error":"Method Not Allowed"}`},
		{"a non-standard method elsewhere is 404", "BREW", "/nowhere", 404, "", `{"error":"Not Found"}`},
		{"an unknown path is 404", "GET", "/nowhere", 404, "", `{"error":"Not Found"}`},
		{"a trailing slash is unknown", "GET", "/a/get/", 404, "", `{"error":"Not Found"}`},
		{"letter case matters", "GET", "/A/GET", 404, "", `{"error":"Not Found"}`},
		{"a panic is a JSON 500 with its cause", "GET", "/a/panic", 500, "", `{"success":false,"error":"the cause"}`},
	}
	var logs bytes.Buffer
	h := newRouter(&logs, prometheus.NewRegistry(), observe.LogAll)
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		body := rec.Body.String()
		if tt.method == "HEAD" {
			body = "" // the recorder keeps what net/http would discard
		}
		if rec.Code != tt.status || rec.Header().Get("Allow") != tt.allow || body != tt.body {
			t.Errorf("%s: %s %s = %d Allow %q %s; want %d Allow %q %s", tt.rule, tt.method, tt.path,
				rec.Code, rec.Header().Get("Allow"), body, tt.status, tt.allow, tt.body)
		}
		if tt.body != "" && rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", tt.rule, rec.Header().Get("Content-Type"))
		}
	}
	if n := strings.Count(logs.String(), `"panic":"the cause"`); n != 1 {
		t.Errorf("the panic was logged %d times with its cause, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "\n"); n != len(tests) {
		t.Errorf("%d log lines for %d requests, want one each:\n%s", n, len(tests), logs.String())
	}
	if strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("a stack trace reached the log:\n%s", logs.String())
	}
}

// LOG_REQUESTS: every request has its line with all, the 5xx alone with
// errors (the default), none with none.
func TestLogRequests(t *testing.T) {
	t.Parallel()
	var def observe.LogRequests
	if b, _ := def.MarshalText(); string(b) != "errors" {
		t.Errorf("the default is %s, want errors", b)
	}
	for _, c := range []struct {
		which    string
		lines    int
		statuses string
	}{{"all", 4, "200 404 405 500"}, {"errors", 1, "500"}, {"none", 0, ""}} {
		var which observe.LogRequests
		if err := which.UnmarshalText([]byte(c.which)); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		h := newRouter(&logs, prometheus.NewRegistry(), which)
		for _, r := range []string{"GET /a/get", "GET /nowhere", "PUT /a/get", "GET /a/panic"} {
			m, p, _ := strings.Cut(r, " ")
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, p, nil))
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if m := regexp.MustCompile(`"status":(\d+)`).FindStringSubmatch(l); m != nil {
				got = append(got, m[1])
			}
		}
		if strings.Join(got, " ") != c.statuses || strings.Count(logs.String(), "\n") != c.lines {
			t.Errorf("LOG_REQUESTS=%s: lines for statuses %q, want %q:\n%s", c.which, got, c.statuses, logs.String())
		}
	}
	var bad observe.LogRequests
	if err := bad.UnmarshalText([]byte("some")); err == nil {
		t.Error("LOG_REQUESTS=some was taken")
	}
}

// net/http's own abort signal still aborts the connection.
func TestRouterPassesAbortHandler(t *testing.T) {
	t.Parallel()
	h := routes.New([]routes.Route{{Method: http.MethodGet, Pattern: "/abort", Handler: func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}}}, nil, nil)
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/abort", nil))
}

func TestNewRejectsBadTables(t *testing.T) {
	t.Parallel()
	for name, table := range map[string][]routes.Route{
		"unsupported method": {{Method: "BREW", Pattern: "/x", Handler: http.NotFound}},
		"duplicate method":   {{Method: "POST", Pattern: "/x", Handler: http.NotFound}, {Method: "POST", Pattern: "/x", Handler: http.NotFound}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			routes.New(table, nil, nil)
		}()
	}
}

// Every request is counted once under its route pattern, method and status;
// unknown paths and invented methods collapse into one value each, so a
// fuzzer's random paths add no series.
func TestMetricsLabels(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := newRouter(io.Discard, reg, observe.LogAll)
	send := func(method, path string) {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
	}
	send("GET", "/a/get")
	send("GET", "/a/get")
	send("POST", "/a/post")
	send("DELETE", "/a/get")
	send("GET", "/a/panic")
	send("OPTIONS", "/a/post")
	want := map[string]float64{
		`route="/a/get",method="GET",code="200"`:      2,
		`route="/a/post",method="POST",code="201"`:    1,
		`route="/a/get",method="DELETE",code="405"`:   1,
		`route="/a/panic",method="GET",code="500"`:    1,
		`route="/a/post",method="OPTIONS",code="200"`: 1,
	}
	got := counts(t, reg)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d series, want %d: %v", len(got), len(want), got)
	}

	before := seriesCount(t, reg)
	for i := range 10000 {
		send("GET", fmt.Sprintf("/random/%d/%x", i, i*7919))
		if i%100 == 0 {
			send(fmt.Sprintf("M%d", i), "/a/get")
			send(fmt.Sprintf("M%d", i), fmt.Sprintf("/r%d", i))
		}
	}
	after := seriesCount(t, reg)
	// Three label sets appear (unmatched GET 404, OTHER 405 on a route,
	// unmatched OTHER 404), each a counter and a histogram; the rest of the
	// 10,200 requests add nothing.
	if after-before != 6 {
		t.Fatalf("random paths grew the metrics from %d to %d, want exactly 6 more", before, after)
	}
	got = counts(t, reg)
	if got[`route="unmatched",method="GET",code="404"`] != 10000 ||
		got[`route="/a/get",method="OTHER",code="405"`] != 100 ||
		got[`route="unmatched",method="OTHER",code="404"`] != 100 {
		t.Fatalf("collapsed counts wrong: %v", got)
	}
}

// counts maps "route,method,code" label sets to showcase_http_requests_total.
func counts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "showcase_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["service"] != "test-svc" {
				t.Errorf("service label %q", l["service"])
			}
			out[fmt.Sprintf("route=%q,method=%q,code=%q", l["route"], l["method"], l["code"])] = m.GetCounter().GetValue()
		}
	}
	return out
}

func seriesCount(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		n += len(mf.GetMetric())
	}
	return n
}

// A route with a planted defect serves the variant its switch picks, once,
// and exports the choice.
func TestVariantChosenAtBuild(t *testing.T) {
	t.Parallel()
	say := func(text string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { respond.JSON(w, http.StatusOK, []byte(text)) }
	}
	table := []routes.Route{
		{Method: http.MethodGet, Pattern: "/a", Defect: "X-01", Planted: say(`"planted"`), Conformant: say(`"conformant"`)},
		{Method: http.MethodGet, Pattern: "/b", Defect: "X-02", Planted: say(`"planted"`), Conformant: say(`"conformant"`)},
	}
	asked := map[string]int{}
	reg := prometheus.NewRegistry()
	tel := &observe.Telemetry{Registry: reg, Writer: io.Discard}
	h := routes.New(table, func(d string) bool { asked[d]++; return d == "X-01" }, tel.Service("t"))
	for path, want := range map[string]string{"/a": `"planted"`, "/b": `"conformant"`} {
		for range 3 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Body.String() != want {
				t.Errorf("%s: %s, want %s", path, rec.Body, want)
			}
		}
	}
	if asked["X-01"] != 1 || asked["X-02"] != 1 {
		t.Errorf("the switch was asked %v times; want once per route, at build", asked)
	}
	want := "\n# HELP showcase_defect_active Whether a planted defect is active (1) or switched off with DEFECTS (0).\n# TYPE showcase_defect_active gauge\n" +
		"showcase_defect_active{defect=\"X-01\",service=\"t\"} 1\nshowcase_defect_active{defect=\"X-02\",service=\"t\"} 0\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "showcase_defect_active"); err != nil {
		t.Error(err)
	}
	for name, bad := range map[string]routes.Route{
		"no conformant variant": {Method: http.MethodGet, Pattern: "/c", Defect: "X-03", Planted: say(`1`)},
		"a handler as well":     {Method: http.MethodGet, Pattern: "/c", Defect: "X-03", Planted: say(`1`), Conformant: say(`1`), Handler: say(`1`)},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			routes.New([]routes.Route{bad}, nil, nil)
		}()
	}
}

// A planted variant's request counts as triggering its defect only where
// the variant calls observe.Triggered: in the counter (which exists at zero
// for every defect, switched off too), in the process's exposure log with
// the first request as the example, and on the request's log line. The
// defect is named on the answer only when the request asks for it.
func TestTriggeredCounted(t *testing.T) {
	t.Parallel()
	table := []routes.Route{
		{Method: http.MethodGet, Pattern: "/a", Defect: "X-01",
			Planted: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("show") != "" {
					observe.Triggered(w, r)
				}
				respond.JSON(w, http.StatusOK, []byte(`"planted"`))
			},
			Conformant: func(w http.ResponseWriter, r *http.Request) {
				observe.Triggered(w, r) // outside a planted variant: nothing
				respond.JSON(w, http.StatusOK, []byte(`"conformant"`))
			}},
		{Method: http.MethodGet, Pattern: "/b", Defect: "X-02",
			Planted:    func(w http.ResponseWriter, r *http.Request) { observe.Triggered(w, r) },
			Conformant: func(w http.ResponseWriter, r *http.Request) { observe.Triggered(w, r) }},
		{Method: http.MethodGet, Pattern: "/c", Handler: func(w http.ResponseWriter, r *http.Request) { observe.Triggered(w, r) }},
	}
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	tel := &observe.Telemetry{Registry: reg, Writer: &logs, JSON: true, Exposure: observe.NewExposureLog(), Requests: observe.LogAll}
	h := routes.New(table, func(d string) bool { return d == "X-01" }, tel.Service("t"))
	get := func(target string, header http.Header) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		maps.Copy(req.Header, header)
		h.ServeHTTP(rec, req)
		return rec
	}
	start := time.Now()
	get("/a", nil)
	first := get("/a?show=1&n=1", http.Header{"X-Request-Id": {"first-one"}})
	asked := get("/a?show=1&n=2", http.Header{observe.HeaderReportTriggered: {"1"}})
	get("/b", nil)
	get("/c", nil)
	if first.Header().Get(observe.HeaderTriggered) != "" {
		t.Errorf("named the defect to a request that did not ask: %v", first.Header())
	}
	if got := asked.Header().Get(observe.HeaderTriggered); got != "X-01" {
		t.Errorf("asked, the answer names %q, want X-01", got)
	}
	want := "\n# HELP showcase_defect_triggered_total Requests that triggered a planted defect: its planted code ran and produced its symptom. Never reset.\n# TYPE showcase_defect_triggered_total counter\n" +
		"showcase_defect_triggered_total{defect=\"X-01\",service=\"t\"} 2\nshowcase_defect_triggered_total{defect=\"X-02\",service=\"t\"} 0\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "showcase_defect_triggered_total"); err != nil {
		t.Error(err)
	}
	since, seen := tel.Exposure.Snapshot()
	e, ok := seen["X-01"]
	if len(seen) != 1 || !ok || e.Count != 2 || e.Method != "GET" || e.Target != "/a?show=1&n=1" || e.RequestID != "first-one" ||
		e.First.Before(start) || e.Last.Before(e.First) || time.Since(e.Last) < 0 || since.After(start) {
		t.Errorf("exposure log %v since %v, want X-01 twice, first GET /a?show=1&n=1 first-one", seen, since)
	}
	if n := strings.Count(logs.String(), `"defect":"X-01"`); n != 2 {
		t.Errorf("%d log lines name the defect, want the 2 triggering requests:\n%s", n, logs.String())
	}
	if reset := tel.Exposure.Reset(); reset.Before(e.Last) {
		t.Errorf("reset at %v, before the last exposure %v", reset, e.Last)
	}
	if _, seen := tel.Exposure.Snapshot(); len(seen) != 0 {
		t.Errorf("after reset: %v", seen)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "showcase_defect_triggered_total"); err != nil {
		t.Errorf("the counter must not reset: %v", err)
	}
}
