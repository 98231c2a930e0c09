package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

// startMode serves the gateway with its admin handlers at hand: every
// category in-process ("one process"), or in front of the four services
// ("split").
func startMode(t *testing.T, mode string) (server.Built, *httptest.Server) {
	t.Helper()
	return startModeWith(t, mode, catalogue.All())
}

// truthOf asks a built gateway's admin handler for /defects.
func truthOf(t *testing.T, built server.Built) catalogue.Truth {
	t.Helper()
	rec := httptest.NewRecorder()
	built.Admin["GET "+gateway.PathDefects].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathDefects, nil))
	var truth catalogue.Truth
	if err := json.Unmarshal(rec.Body.Bytes(), &truth); err != nil {
		t.Fatal(err)
	}
	return truth
}

// The requests each operation received are counted exactly under
// concurrency, in one process and in front of separate services alike: by
// the status class the client got, other methods apart, and nothing for
// paths that are not an operation's (an encoded form, a trailing slash).
// A reset empties them.
func TestReachedExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"one process", "split"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			built, ts := startMode(t, mode)
			var cases []suite.Case
			for _, def := range catalogue.Defects {
				e := catalogue.EndpointOf(def.ID)
				tr := def.Triggers[0]
				c := suite.Trigger(def, tr)
				other := http.MethodDelete
				cases = append(cases, c, suite.Case{Method: other, Target: e.Path}, suite.Case{Method: http.MethodOptions, Target: e.Path},
					suite.Case{Method: e.Method, Target: e.Path + "/"}, suite.Case{Method: e.Method, Target: strings.Replace(e.Path, "-", "%2D", 1)})
			}
			type key struct {
				path, class string
			}
			var mu sync.Mutex
			got := map[key]uint64{}
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Go(func() {
					for i := range 40 {
						c := cases[(g*40+i)%len(cases)]
						res, err := suite.Do(t.Context(), ts.Client(), ts.URL, c)
						if err != nil {
							t.Error(err)
							return
						}
						path, _, _ := strings.Cut(c.Target, "?")
						e, ok := endpointAtPath(path)
						if !ok {
							continue
						}
						k := key{e.Path, fmt.Sprintf("%dxx", res.Status/100)}
						if c.Method != e.Method {
							k.class = "other"
						}
						mu.Lock()
						got[k]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			truth := truthOf(t, built)
			var total uint64
			for _, d := range truth.Defects {
				r := d.Reached
				if r == nil {
					t.Fatalf("%s: no reached counts", d.ID)
				}
				var sum uint64
				for _, c := range catalogue.StatusClasses {
					if r.ByStatus[c] != got[key{d.Operation.Path, c}] {
						t.Errorf("%s: %s %d, the clients got %d", d.ID, c, r.ByStatus[c], got[key{d.Operation.Path, c}])
					}
					sum += r.ByStatus[c]
				}
				if r.Count != sum || r.OtherMethods != got[key{d.Operation.Path, "other"}] || r.Count == 0 || r.First == nil {
					t.Errorf("%s: %+v; the clients sent %d with another method", d.ID, r, got[key{d.Operation.Path, "other"}])
				}
				total += r.Count + r.OtherMethods
			}
			t.Logf("%d requests to the operations counted of %d sent", total, 16*40)

			rec := httptest.NewRecorder()
			built.Admin["POST "+gateway.PathDefectsReset].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, gateway.PathDefectsReset, nil))
			for _, d := range truthOf(t, built).Defects {
				if r := d.Reached; r.Count != 0 || r.OtherMethods != 0 || r.First != nil {
					t.Errorf("%s after a reset: %+v", d.ID, r)
				}
			}
		})
	}
}

// endpointAtPath is the operation at exactly this path.
func endpointAtPath(path string) (catalogue.Endpoint, bool) {
	for _, e := range catalogue.Endpoints {
		if e.Path == path {
			return e, true
		}
	}
	return catalogue.Endpoint{}, false
}

// Each stage's first request is numbered among the instance's requests
// since the reset, in one process and split alike: the operation's first
// request and the defect's first trigger name the request that did it,
// and later requests do not move them.
func TestFirstRequestIndexes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"one process", "split"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			built, ts := startMode(t, mode)
			send := func(c suite.Case) {
				t.Helper()
				if _, err := suite.Do(t.Context(), ts.Client(), ts.URL, c); err != nil {
					t.Fatal(err)
				}
			}
			rec := httptest.NewRecorder()
			built.Admin["POST "+gateway.PathDefectsReset].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, gateway.PathDefectsReset, nil))
			for round := range 2 {
				send(suite.Case{Target: "/openapi.json"})
				for _, def := range catalogue.Defects {
					send(suite.Trigger(def, def.Triggers[0]))
				}
				truth := truthOf(t, built)
				if want := uint64(11 * (round + 1)); truth.Requests == nil || *truth.Requests != want {
					t.Errorf("round %d: requests %v, want %d", round, truth.Requests, want)
				}
				for i, d := range truth.Defects {
					want := uint64(i + 2) // the contract first, then each defect's trigger in turn
					if r := d.Reached.FirstRequest; r == nil || *r != want {
						t.Errorf("round %d: %s reached first by request %v, want %d", round, d.ID, r, want)
					}
					if x := d.Exposure.FirstRequest; x == nil || *x != want {
						t.Errorf("round %d: %s triggered first by request %v, want %d", round, d.ID, x, want)
					}
				}
			}
		})
	}
}

// A request its client gave up on before the answer (here: a timeout
// shorter than PERF-01's held second) reached its operation with no
// answer: counted in the operation's requests and in no_answer, under no
// status class, no status and no response in the API coverage, while what
// it sent counts. One process and split alike.
func TestGivenUpOnIsNoAnswer(t *testing.T) {
	t.Parallel()
	e := catalogue.EndpointOf(catalogue.PERF01)
	for _, mode := range []string{"one process", "split"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			built, ts := startMode(t, mode)
			impatient := &http.Client{Timeout: 200 * time.Millisecond}
			if res, err := impatient.Get(ts.URL + e.Path + "?limit=5000"); err == nil {
				res.Body.Close()
				t.Fatalf("the held answer came within 200 ms: %d", res.StatusCode)
			}
			var r *catalogue.Reached
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				for _, d := range truthOf(t, built).Defects {
					if d.ID == catalogue.PERF01 {
						r = d.Reached
					}
				}
				if r != nil && r.Count > 0 || time.Now().After(deadline) {
					break
				}
			}
			if r == nil || r.Count != 1 || r.NoAnswer != 1 || r.FirstRequest == nil || r.First == nil {
				t.Fatalf("reached after a request given up on: %+v, want count 1, no_answer 1, a first request", r)
			}
			for class, n := range r.ByStatus {
				if n != 0 {
					t.Errorf("by_status[%s] = %d, want 0: no status reached the client", class, n)
				}
			}
			var op *coverage.OperationCovered
			rep := coverageOf(t, built)
			for i := range rep.Operations {
				if rep.Operations[i].Path == e.Path {
					op = &rep.Operations[i]
				}
			}
			if op.Requests != 1 || op.NoAnswer != 1 || len(op.Statuses) != 0 {
				t.Errorf("coverage of %s: requests %d, no_answer %d, statuses %+v; want 1, 1, none", e.Path, op.Requests, op.NoAnswer, op.Statuses)
			}
			for _, c := range op.StatusClasses {
				if c.Answered != 0 {
					t.Errorf("class %s answered %d, want 0", c.Class, c.Answered)
				}
			}
			for _, p := range op.Parameters {
				if p.Name == "limit" && p.Sent != 1 {
					t.Errorf("limit sent %d, want 1: what the client sent reached the operation", p.Sent)
				}
			}
			var sum strings.Builder
			if err := rep.Summary(&sum); err != nil {
				t.Fatal(err)
			}
			if want := "GET " + e.Path + ": 1 of 1"; !strings.Contains(sum.String(), want) || strings.Contains(sum.String(), "status 499") {
				t.Errorf("the summary does not name the request given up on (%q), or lists a 499:\n%s", want, sum.String())
			}
		})
	}
}
