package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// discardWriter is a ResponseWriter that keeps the status and drops the
// body: what the handler costs without net/http's own writing.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRequestParallel is the one-process gateway's own cost of a
// request, every defect on, metrics, exposure, reached and API coverage
// counting on, request logs at their default, from as many goroutines as
// -cpu says, each with its own request and writer: GET missing-field
// (endpoint 7, its answer read for its properties) and a POST whose JSON
// body is read for its properties too (endpoint 2, a valid card number).
// It reports the CPU time per request (cpu-ns/op, the process's, garbage
// collection included): run with -cpu 1,2,4,8, it should not grow with
// the cores, which it would if the counters every request touches
// contended for a cache line. ns/op is wall time over all goroutines.
// Built with -tags showcase_nocoverage, the same benchmark runs without
// API coverage counting: showcase-bench -coverage-cost runs the two
// builds in turn for what counting costs.
func BenchmarkRequestParallel(b *testing.B) {
	built, err := server.Build(Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	for _, bc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"GET", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, catalogue.EndpointOf(catalogue.CONF03).Path, nil)
		}},
		{"POST", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, catalogue.EndpointOf(catalogue.ERR01).Path, http.NoBody)
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const body = `{"number":"79927398713"}`
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				req := bc.req()
				w := &discardWriter{h: http.Header{}}
				var rd strings.Reader
				for pb.Next() {
					clear(w.h)
					w.code = 0
					delete(req.Header, "X-Request-Id") // a client's request has none: one is made
					if req.Method == http.MethodPost {
						rd.Reset(body)
						req.Body, req.ContentLength = io.NopCloser(&rd), int64(len(body))
					}
					built.Handler.ServeHTTP(w, req)
					if w.code != http.StatusOK {
						b.Errorf("status %d", w.code)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
