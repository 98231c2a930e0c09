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

// What a mutant costs a request, each as a ratio to the same request
// through a gateway without a mutant set, measured in one run on one
// operation (endpoint 7, the cheapest): a request its mutant's condition
// does not meet (the body and query read, the conditions asked), and one
// it meets and rewrites (the answer buffered, parsed and rewritten). A
// gateway without a mutant set has no layer: its requests pay one nil
// check.
func BenchmarkMutantCost(b *testing.B) {
	build := func(defects string) http.Handler {
		built, err := server.Build(Program(), func(k string) string {
			if k == "DEFECTS" {
				return defects
			}
			return ""
		}, observe.Discard())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = built.Close() })
		return built.Handler
	}
	// A set with a wrong-type mutant on endpoint 7 under accept-json.
	var setting string
	for seed := uint64(0); setting == ""; seed++ {
		for _, m := range catalogue.Mutants(seed, catalogue.DefaultMutants).Mutants() {
			if m.Endpoint().N == 7 && m.ID() == catalogue.ID("wrong-type:GET "+m.Endpoint().Path+":accept-json") {
				setting = catalogue.Mutants(seed, catalogue.DefaultMutants).String()
			}
		}
	}
	path := catalogue.Endpoints[6].Path
	none, mutated := build("none"), build(setting)
	plain := httptest.NewRequest(http.MethodGet, path, nil)
	meets := httptest.NewRequest(http.MethodGet, path, nil)
	meets.Header.Set("Accept", "application/json")
	per := func(h http.Handler, r *http.Request, n int) time.Duration {
		start := time.Now()
		for range n {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK || (r == meets && h == mutated && !strings.Contains(rec.Body.String(), `"id":0`)) {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
		return time.Since(start) / time.Duration(n)
	}
	b.ReportAllocs()
	var base, passed, rewritten time.Duration
	for b.Loop() {
		const n = 2000
		base += per(none, plain, n)
		passed += per(mutated, plain, n)
		rewritten += per(mutated, meets, n)
	}
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "ns/request-none")
	b.ReportMetric(float64(passed)/float64(base), "x-not-met")
	b.ReportMetric(float64(rewritten)/float64(base), "x-rewritten")
}
