package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// What API coverage costs a whole request in one process, with it and
// without it, alternated in blocks within the same run so that the ratio
// does not depend on what else the machine does: a GET whose answer is read
// for its properties (endpoint 7) and a POST whose JSON body is too
// (endpoint 2, a valid card number).
func BenchmarkCoverage(b *testing.B) {
	built, err := server.Build(Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	g := built.Handler.(*Gateway)
	for _, bc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"GET", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, catalogue.EndpointOf(catalogue.CONF03).Path, nil)
		}},
		{"POST", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, catalogue.EndpointOf(catalogue.ERR01).Path, strings.NewReader(`{"number":"79927398713"}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const block = 500
			var on, off time.Duration
			var n int
			b.ReportAllocs()
			for b.Loop() {
				// One request counted as b.N's, then a block each way.
				built.Handler.ServeHTTP(httptest.NewRecorder(), bc.req())
				if n%block == 0 {
					for _, disabled := range []bool{false, true} {
						g.cov.disabled = disabled
						start := time.Now()
						for range block {
							built.Handler.ServeHTTP(httptest.NewRecorder(), bc.req())
						}
						if disabled {
							off += time.Since(start)
						} else {
							on += time.Since(start)
						}
					}
					g.cov.disabled = false
				}
				n++
			}
			blocks := (n + block - 1) / block
			perOn, perOff := on/time.Duration(blocks*block), off/time.Duration(blocks*block)
			b.ReportMetric(float64(perOn.Nanoseconds()), "ns-with")
			b.ReportMetric(float64(perOff.Nanoseconds()), "ns-without")
			b.ReportMetric(100*(float64(perOn)/float64(perOff)-1), "%-cost")
		})
	}
}
