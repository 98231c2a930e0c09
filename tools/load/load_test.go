package load

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// Every operation of the catalogue is in the mix, by its method and path.
func TestScenarioCoversTheCatalogue(t *testing.T) {
	for _, e := range catalogue.Endpoints {
		found := false
		for _, k := range Scenario {
			if k.method() == e.Method && k.Path == e.Path && k.Weight > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s is not in the load test's mix", e.Method, e.Path)
		}
	}
}

// Each kind's requests are recognised as that kind and no other, whatever
// sizes are drawn.
func TestEveryRequestIsOfItsKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range Scenario {
		for range 50 {
			method, target, _ := k.target(rng, "http://h")
			got := kindOf(Scenario, method, target)
			if got == nil || got.Name != k.Name {
				t.Fatalf("%s %s: recognised as %v, want %s", method, target, got, k.Name)
			}
			u, _ := url.Parse(target)
			n := 0
			for _, other := range Scenario {
				if other.matches(method, u) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%s %s matches %d kinds", method, target, n)
			}
		}
	}
}

// The percentiles are nearest-rank, computed by hand for ten latencies.
func TestQuantileIsNearestRank(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 10; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.9, 9 * time.Millisecond}, {0.91, 10 * time.Millisecond}, {0.99, 10 * time.Millisecond}, {1, 10 * time.Millisecond}, {0, time.Millisecond}} {
		if got := quantile(l, c.q); got != c.want {
			t.Errorf("quantile %v of 1..10 ms: %v, want %v", c.q, got, c.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("the quantile of nothing is not 0")
	}
}

// Against a server that answers everything with 404 the run fails, and
// the report names a kind and the answer; the rate is held and progress
// is printed. The pace is held, not the count: vegeta ends an attack when
// its duration is up, so on a starved machine (CI runs this beside the
// e2e tests) the last few requests due may not be sent; it never sends
// more than are due.
func TestRunFailsOnAnswersNotSpecified(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var progress bytes.Buffer
	r, err := Run(context.Background(), Options{Base: srv.URL, Rate: 200, Duration: 1500 * time.Millisecond, Seed: 7, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Failed() || len(r.Unexpected) == 0 || !strings.Contains(r.Unexpected[0], "answered 404") {
		t.Fatalf("failed %v, unexpected %v", r.Failed(), r.Unexpected)
	}
	if r.Requests < 270 || r.Requests > 300 || uint64(r.StatusCodes["404"]) != r.Requests {
		t.Errorf("%d requests, codes %v; want 270-300, every one 404", r.Requests, r.StatusCodes)
	}
	allowed := 0
	for _, k := range r.Kinds {
		may404 := k.Name == "unknown path" || k.Name == "undocumented-status-code" // the kinds whose Allowed has 404
		if may404 && k.Unexpected != 0 || !may404 && k.Unexpected != k.Count {
			t.Errorf("%s: %d unexpected of %d", k.Name, k.Unexpected, k.Count)
		}
		allowed += k.Count - k.Unexpected
	}
	if r.Success != float64(allowed)/float64(r.Requests) {
		t.Errorf("success %v, want %d/%d", r.Success, allowed, r.Requests)
	}
	if !strings.Contains(progress.String(), "sent ") {
		t.Errorf("no progress line: %q", progress.String())
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !strings.Contains(text.String(), "not as specified") {
		t.Errorf("the report does not say what was not as specified:\n%s", text.String())
	}
}

// A request with no answer (a closed server) is a failure too.
func TestRunFailsWithoutAnswers(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	r, err := Run(context.Background(), Options{Base: srv.URL, Rate: 50, Duration: 200 * time.Millisecond, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Failed() || !strings.Contains(r.Unexpected[0], "no answer") {
		t.Fatalf("failed %v, unexpected %v", r.Failed(), r.Unexpected)
	}
}

// Only keeps the kinds named, and refuses a name not in the mix.
func TestOnlyTheKindsNamed(t *testing.T) {
	kinds, err := Only([]string{"missing-field", " unknown path"})
	if err != nil || len(kinds) != 2 || kinds[0].Name != "missing-field" || kinds[1].Name != "unknown path" {
		t.Fatalf("%v %v", kinds, err)
	}
	if _, err := Only([]string{"no-such-kind"}); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
