package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/catalogue"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

// syncBuffer is a log output safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %s", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// requestsByService sums showcase_http_requests_total per service label.
func requestsByService(t *testing.T, reg *prometheus.Registry) (map[string]float64, []string) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
		if mf.GetName() != "showcase_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service" {
					sums[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sums, names
}

func get(t *testing.T, client *http.Client, url string, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// Embedded mode: one registry, each request counted once by the service
// that answered it, and the same series names as the services alone.
func TestEmbeddedMetricsCountOnce(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ts := startEmbeddedWith(t, nil, &observe.Telemetry{Registry: reg, Writer: io.Discard, JSON: true})
	paths := map[string]int{
		suite.PathUnauthenticatedAccess:                      3,
		suite.PathMissingField:                               5,
		suite.PathUndocumentedStatus + "?id=7":               2,
		suite.PathUnboundedResultSet + "?limit=2":            4,
		suite.PathInefficientAlgorithm + "?n=9&searchTerm=1": 1,
		"/openapi.yaml":                                      2,
		"/nowhere":                                           6,
	}
	for p, n := range paths {
		for range n {
			get(t, ts.Client(), ts.URL+p, nil)
		}
	}
	got, names := requestsByService(t, reg)
	want := map[string]float64{"security-svc": 3, "conformance-svc": 7, "performance-svc": 5, "gateway": 8}
	for svc, n := range want {
		if got[svc] != n {
			t.Errorf("service %s counted %v requests, want %v (all: %v)", svc, got[svc], n, got)
		}
	}
	if _, ok := got["errors-svc"]; ok {
		t.Errorf("errors-svc counted requests it never got: %v", got)
	}

	// A service alone registers no name the embedded registry lacks.
	alone := prometheus.NewRegistry()
	svc, err := conformancesvc.New(conformancesvc.Config{Telemetry: &observe.Telemetry{Registry: alone, Writer: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	httptest.NewRecorder()
	svc.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", suite.PathMissingField, nil))
	_, aloneNames := requestsByService(t, alone)
	for _, n := range aloneNames {
		if !slices.Contains(names, n) {
			t.Errorf("series %s exists alone but not embedded", n)
		}
	}
}

// The gateway keeps a sane incoming X-Request-Id or makes one, passes it
// upstream and returns it; the service logs it.
func TestRequestIDThroughTheGateway(t *testing.T) {
	t.Parallel()
	var upstreamLog syncBuffer
	svc, err := conformancesvc.New(conformancesvc.Config{Telemetry: &observe.Telemetry{Registry: prometheus.NewRegistry(), Writer: &upstreamLog, JSON: true, Requests: observe.LogAll}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(svc.Handler())
	t.Cleanup(up.Close)
	gw := startEmbedded(t, map[string]string{"UPSTREAM_CONFORMANCE": up.URL})

	for _, tt := range []struct {
		rule, sent string
		kept       bool
	}{
		{"a sane ID is kept", "client-id_42:abc.def", true},
		{"an absent ID is made", "", false},
		{"an ID with spaces is replaced", "two words", false},
		{"an ID with markup is replaced", "<script>", false},
		{"a 129-character ID is replaced", strings.Repeat("x", 129), false},
	} {
		h := http.Header{}
		if tt.sent != "" {
			h.Set(observe.HeaderRequestID, tt.sent)
		}
		resp := get(t, gw.Client(), gw.URL+suite.PathMissingField, h)
		ids := resp.Header.Values(observe.HeaderRequestID)
		if len(ids) != 1 || !observe.SaneRequestID(ids[0]) || (ids[0] == tt.sent) != tt.kept {
			t.Errorf("%s: sent %q, got %q", tt.rule, tt.sent, ids)
			continue
		}
		found := false
		for _, line := range upstreamLog.lines(t) {
			if line["requestID"] == ids[0] {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the service did not log request ID %q", tt.rule, ids[0])
		}
	}
}

// One log line per request; the planted crash is one line at error level
// with its cause; other lines carry route, method, status and duration.
func TestRequestLogLines(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	ts := startEmbeddedWith(t, nil, &observe.Telemetry{Registry: prometheus.NewRegistry(), Writer: &logs, JSON: true, Requests: observe.LogAll})
	before := len(logs.lines(t)) // start-up lines
	get(t, ts.Client(), ts.URL+suite.PathMissingField, nil)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+suite.PathInputTypeHandling, strings.NewReader(`{"number":"12a"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(observe.HeaderRequestID, "crash-1")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, ts.Client(), ts.URL+"/nowhere", nil)

	lines := logs.lines(t)[before:]
	if len(lines) != 3 {
		t.Fatalf("%d log lines for 3 requests:\n%v", len(lines), lines)
	}
	crash := lines[1]
	if crash["level"] != "ERROR" || crash["service"] != "errors-svc" || !strings.Contains(crash["panic"].(string), "'a'") {
		t.Errorf("the crash line: %v", crash)
	}
	for i, want := range []struct{ service, route string }{
		{"conformance-svc", suite.PathMissingField}, {"errors-svc", suite.PathInputTypeHandling}, {"gateway", "unmatched"},
	} {
		l := lines[i]
		if l["service"] != want.service || l["route"] != want.route || l["method"] == nil || l["requestID"] == nil ||
			l["status"] == nil || l["duration"] == nil {
			t.Errorf("line %d lacks a field: %v", i, l)
		}
	}
}

// The admin endpoints: alive, ready while the upstreams are, not ready when
// one is down or the process is stopping.
func TestAdminEndpoints(t *testing.T) {
	t.Parallel()
	sp := startSplit(t)
	env := map[string]string{}
	for _, c := range catalogue.Categories {
		env[c.Upstream] = sp.upstreams[c.Name].URL
	}
	reg := prometheus.NewRegistry()
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, &observe.Telemetry{Registry: reg, Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = built.Close() })
	admin := server.NewAdmin(reg, built.Ready, observe.Discard().Service("t").Logger, false)
	status := func(path string) int {
		rec := httptest.NewRecorder()
		admin.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	if s := status("/healthz"); s != 200 {
		t.Errorf("/healthz %d", s)
	}
	if s := status("/readyz"); s != 200 {
		t.Errorf("/readyz %d with every upstream up", s)
	}
	if s := status("/metrics"); s != 200 {
		t.Errorf("/metrics %d", s)
	}
	if s := status("/nope"); s != 404 {
		t.Errorf("/nope %d", s)
	}
	sp.upstreams["performance"].Close()
	if err := built.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "performance") {
		t.Errorf("readiness with the performance service down: %v", err)
	}
	if s := status("/readyz"); s != 503 {
		t.Errorf("/readyz %d with an upstream down, want 503", s)
	}
	admin.Stopping()
	if s := status("/healthz"); s != 200 {
		t.Errorf("/healthz %d while stopping: still alive", s)
	}
}
