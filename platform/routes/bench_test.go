package routes_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/platform/observe"
)

// BenchmarkRouterWithTelemetry is one request through the route table with
// its logging, metrics and request ID: the per-request cost every service
// pays. It reports allocations.
func BenchmarkRouterWithTelemetry(b *testing.B) {
	h := newRouter(io.Discard, prometheus.NewRegistry(), observe.LogAll)
	req := httptest.NewRequest(http.MethodGet, "/a/get", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
