package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// What recording the stages costs a request (numbering it, counting its
// operation by status),
// as a share of the cheapest whole request the gateway answers in one
// process (endpoint 7): both measured in the same run, a ratio.
func BenchmarkStageRecording(b *testing.B) {
	built, err := server.Build(Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	g := built.Handler.(*Gateway)
	req := httptest.NewRequest(http.MethodGet, catalogue.EndpointOf(catalogue.CONF03).Path, nil)
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		built.Handler.ServeHTTP(httptest.NewRecorder(), req)
	}
	perRequest := time.Since(start) / time.Duration(b.N)

	const n = 200000
	rec := httptest.NewRecorder()
	start = time.Now()
	for range n {
		i := g.reach.received()
		_, rw := g.reach.writer(rec, req, i)
		rw.count(http.StatusOK, nil)
	}
	perStage := time.Since(start) / n
	b.ReportMetric(float64(perStage.Nanoseconds()), "ns-stages")
	b.ReportMetric(100*float64(perStage)/float64(perRequest), "%-of-request")
}
