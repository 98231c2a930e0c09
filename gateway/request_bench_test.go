package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
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
// "floor", a minimal handler of the same answer through the same harness,
// is what the harness costs at each -cpu. The garbage collector is tuned
// as in the binaries (server.TuneGC); a cycle's fixed cost grows with
// GOMAXPROCS, so make bench runs it again with GOGC=off (and GOMEMLIMIT
// as a backstop): the request's own cost, without the collector's.
// Built with -tags showcase_nocoverage, the same benchmark runs without
// API coverage counting: showcase-bench -coverage-cost runs the two
// builds in turn for what counting costs.
func BenchmarkRequestParallel(b *testing.B) {
	server.TuneGC(os.Getenv) // as the binaries run
	built, err := server.Build(Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	// floor is the minimal handler of the same answer, through the same
	// harness: what the harness itself costs per request at each -cpu (on
	// a machine with fewer cores than -cpu, idle threads spinning for work
	// show up in the CPU time too).
	body := []byte(`{"id":"123","name":"Alice"}`)
	floor := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	for _, bc := range []struct {
		name    string
		req     func() *http.Request
		handler http.Handler
	}{
		{"floor", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, catalogue.EndpointOf(catalogue.CONF03).Path, nil)
		}, floor},
		{"GET", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, catalogue.EndpointOf(catalogue.CONF03).Path, nil)
		}, built.Handler},
		{"POST", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, catalogue.EndpointOf(catalogue.ERR01).Path, http.NoBody)
			r.Header.Set("Content-Type", "application/json")
			return r
		}, built.Handler},
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
					bc.handler.ServeHTTP(w, req)
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
