package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
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
