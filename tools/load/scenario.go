// Package load is the showcase's load test: a mix of requests to the ten
// endpoints, bad input and unknown paths, sent at a constant arrival rate
// (an open model: a slow answer does not hold back the next request) with
// vegeta's library, every answer checked against the statuses the
// specification allows, and a report per kind of request.
package load

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// Kind is one kind of request of the scenario.
type Kind struct {
	Name   string
	Weight int    // its share of the mix: Weight out of the sum of all weights
	Method string // GET when empty
	Path   string // the operation's path; for unknown paths, a prefix
	// Query and Body make one request's raw query and JSON body ("" for
	// none), the sizes drawn from the scenario's random source.
	Query, Body func(*rand.Rand) string
	// Allowed are the statuses the specification allows, with the planted
	// defect on or switched off (DEFECTS): the load test checks the
	// service answers as specified, not which defects are active.
	Allowed []int
	// Matches says whether a sent request (method, URL) was of this kind.
	Matches func(method string, u *url.URL) bool
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func jsonString(s string) string { return fmt.Sprintf("%q", s) }

// operation matches requests to the operation at method and path.
func operation(method, path string) func(string, *url.URL) bool {
	return func(m string, u *url.URL) bool { return m == method && u.Path == path }
}

var (
	fibPath  = catalogue.EndpointOf(catalogue.PERF02).Path
	badInput = func(m string, u *url.URL) bool {
		return m == "GET" && u.Path == fibPath && u.Query().Get("n") == "ten"
	}
)

// Scenario is the mix: each kind with its weight, its sizes and the
// statuses it may get. Every operation of the catalogue is in it
// (TestScenarioCoversTheCatalogue).
var Scenario = []Kind{
	{Name: "missing-field", Weight: 12, Path: catalogue.EndpointOf(catalogue.CONF03).Path, Allowed: []int{200}},
	{Name: "unauthenticated-access", Weight: 8, Path: catalogue.EndpointOf(catalogue.SEC01).Path, Allowed: []int{200, 401}},
	{Name: "malformed-json", Weight: 6, Path: catalogue.EndpointOf(catalogue.CONF01).Path, Allowed: []int{200}},
	{Name: "incorrect-content-type", Weight: 6, Path: catalogue.EndpointOf(catalogue.CONF02).Path, Allowed: []int{200}},
	{Name: "undocumented-status-code", Weight: 8, Path: catalogue.EndpointOf(catalogue.CONF04).Path,
		Query:   func(r *rand.Rand) string { return "id=" + pick(r, "0", "0", "1", "42", "abc") },
		Allowed: []int{200, 400, 404}},
	{Name: "improper-input-type-handling", Weight: 10, Method: "POST", Path: catalogue.EndpointOf(catalogue.ERR01).Path,
		Body: func(r *rand.Rand) string {
			return `{"number":` + pick(r, `"79927398713"`, `"4539148803436467"`, `"1234567812345678"`, `"1234-5678"`, `79927398713`) + `}`
		},
		Allowed: []int{200, 400, 500}},
	{Name: "exceeding-column-size", Weight: 10, Method: "POST", Path: catalogue.EndpointOf(catalogue.ERR02).Path,
		Body: func(r *rand.Rand) string {
			return `{"text":` + jsonString(strings.Repeat("x", pick(r, 1, 8, 15, 16, 40, 255))) + `}`
		},
		Allowed: []int{200, 500}},
	{Name: "improper-unicode-encoding", Weight: 10, Method: "POST", Path: catalogue.EndpointOf(catalogue.ERR03).Path,
		Body: func(r *rand.Rand) string {
			return `{"text":` + jsonString(pick(r, "hello", "plain ascii text", "héllo", "naïve café", "😀")) + `}`
		},
		Allowed: []int{200, 500}},
	{Name: "unbounded-result-set", Weight: 15, Path: catalogue.EndpointOf(catalogue.PERF01).Path,
		Query:   func(r *rand.Rand) string { return fmt.Sprint("limit=", pick(r, 10, 50, 100, 250, 500, 1000)) },
		Allowed: []int{200}},
	{Name: "inefficient-algorithm", Weight: 5, Path: fibPath,
		Query: func(r *rand.Rand) string {
			return fmt.Sprintf("n=%d&searchTerm=%d", pick(r, 10, 100, 1000, 5000, 10000, 30000), pick(r, 0, 1, 55, 6765))
		},
		// 503 with Retry-After: the service sheds load past its bound on
		// concurrent slow requests, as the contract declares.
		Allowed: []int{200, 503},
		Matches: func(m string, u *url.URL) bool { return operation("GET", fibPath)(m, u) && !badInput(m, u) }},
	{Name: "bad input", Weight: 5, Path: fibPath,
		Query:   func(*rand.Rand) string { return "n=ten&searchTerm=1" },
		Allowed: []int{400}, Matches: badInput},
	{Name: "unknown path", Weight: 5, Path: "/no-such-path/",
		Allowed: []int{404},
		Matches: func(_ string, u *url.URL) bool { return strings.HasPrefix(u.Path, "/no-such-path/") }},
}

// method is the kind's method, GET when none is set.
func (k Kind) method() string {
	if k.Method == "" {
		return "GET"
	}
	return k.Method
}

// matches says whether a request was of this kind.
func (k Kind) matches(method string, u *url.URL) bool {
	if k.Matches != nil {
		return k.Matches(method, u)
	}
	return operation(k.method(), k.Path)(method, u)
}

// allowed says whether the specification allows status for this kind.
func (k Kind) allowed(status int) bool {
	for _, s := range k.Allowed {
		if s == status {
			return true
		}
	}
	return false
}

// target is one request of this kind against base.
func (k Kind) target(r *rand.Rand, base string) (method, target, body string) {
	target = base + k.Path
	if k.Name == "unknown path" {
		target += fmt.Sprint(r.IntN(1_000_000))
	}
	if k.Query != nil {
		target += "?" + k.Query(r)
	}
	if k.Body != nil {
		body = k.Body(r)
	}
	return k.method(), target, body
}

// kindOf is the kind of a sent request, or nil.
func kindOf(kinds []Kind, method, rawURL string) *Kind {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	for i := range kinds {
		if kinds[i].matches(method, u) {
			return &kinds[i]
		}
	}
	return nil
}

// Only is the part of the Scenario with these kinds' names, in the
// Scenario's order, their weights kept.
func Only(names []string) ([]Kind, error) {
	var kinds []Kind
	for _, name := range names {
		i := slices.IndexFunc(Scenario, func(k Kind) bool { return k.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("no kind %q in the mix", name)
		}
		kinds = append(kinds, Scenario[i])
	}
	return kinds, nil
}
