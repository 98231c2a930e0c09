package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

func loadContract(t testing.TB) *openapi3.T {
	t.Helper()
	src, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(src)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	return doc
}

// The document's own validation reports exactly its one deliberate defect:
// the global security requirement names a scheme that is not defined.
func TestContractDocument(t *testing.T) {
	t.Parallel()
	doc := loadContract(t)
	err := doc.Validate(context.Background(), openapi3.EnableMultiError())
	if err == nil {
		t.Fatal("the document validates cleanly; the undefined api_key scheme must be reported")
	}
	var problems []string
	var me openapi3.MultiError
	if errors.As(err, &me) {
		for _, e := range me {
			problems = append(problems, e.Error())
		}
	} else {
		problems = []string{err.Error()}
	}
	if len(problems) != 1 || !strings.Contains(problems[0], `"api_key"`) {
		t.Fatalf("want exactly the undefined api_key scheme, got %d problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	t.Logf("document validation: %s", problems[0])
	if doc.OpenAPI != "3.0.2" || doc.Info.Version != "0.1" || len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Fatalf("want OpenAPI 3.0.2, version 0.1, servers [/]; got %s, %s, %v", doc.OpenAPI, doc.Info.Version, doc.Servers)
	}
	if n := doc.Paths.Len(); n != 10 {
		t.Fatalf("%d paths, want the ten endpoints", n)
	}
}

// checker finds the deviations an API-testing tool reports for one
// exchange: the response against the declared responses, server errors,
// requests the contract forbids that were answered 2xx, and operations that
// require an API key answered 2xx without one.
type checker struct {
	router   routers.Router
	needsKey map[string]bool // "METHOD path" of operations requiring ApiKeyAuth
}

// loadServed reads the contract the instance at base serves, as a tool does.
func loadServed(t testing.TB, base string) *openapi3.T {
	t.Helper()
	resp, err := http.Get(base + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	src, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.yaml: %d %v", resp.StatusCode, err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(src)
	if err != nil {
		t.Fatalf("the served contract does not load: %v", err)
	}
	return doc
}

func newChecker(t testing.TB, base string) *checker {
	t.Helper()
	declared := loadServed(t, base)
	needsKey := map[string]bool{}
	for path, item := range declared.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil {
				for _, req := range *op.Security {
					if _, ok := req["ApiKeyAuth"]; ok {
						needsKey[method+" "+path] = true
					}
				}
			}
		}
	}
	// Requests are validated without security: the undefined global scheme
	// would fail every one of them, and the key rule is checked above.
	doc := loadServed(t, base)
	// A tool resolves the relative server "/" against the URL it read the
	// contract from: the instance under test.
	doc.Servers = openapi3.Servers{{URL: base}}
	doc.Security = nil
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			op.Security = nil
		}
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &checker{router: router, needsKey: needsKey}
}

// findings classifies one exchange; nil when the request is for no
// operation of the contract (unknown paths, undeclared methods).
func (ck *checker) findings(ctx context.Context, req *http.Request, body []byte, resp suite.Response) []suite.Finding {
	route, params, err := ck.router.FindRoute(req)
	if err != nil || req.URL.EscapedPath() != route.Path {
		return nil // the router forgives a trailing slash; the contract does not
	}
	var fs []suite.Finding
	ok2xx := resp.Status >= 200 && resp.Status < 300
	if resp.Status >= 500 {
		fs = append(fs, suite.ServerError)
	}
	if ck.needsKey[route.Method+" "+route.Path] && req.Header.Get("X-API-Key") == "" && ok2xx {
		fs = append(fs, suite.AuthBypass)
	}
	req.Body = readCloser(body)
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		// Validation must not rewrite the request: by default it fills in
		// the defaults of absent parameters.
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true},
	}
	invalid := emptyNonStringQuery(route.Operation, req) || openapi3filter.ValidateRequest(ctx, in) != nil
	switch {
	case invalid && ok2xx:
		fs = append(fs, suite.AcceptedInvalid)
	case !invalid && rejectsInput(resp.Status):
		fs = append(fs, suite.RejectedValid)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.Status,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(resp.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		var re *openapi3filter.ResponseError
		switch {
		case errors.As(err, &re) && re.Reason == "status is not supported":
			fs = append(fs, suite.UndocumentedStatus)
		case strings.Contains(err.Error(), "Content-Type"):
			fs = append(fs, suite.WrongContentType)
		default:
			fs = append(fs, suite.InvalidBody)
		}
	}
	return suite.SortedFindings(fs)
}

// emptyNonStringQuery reports whether a query parameter that is not a
// string was sent empty (?limit= or ?limit): no integer, though kin-openapi
// skips such a value instead of validating it.
func emptyNonStringQuery(op *openapi3.Operation, req *http.Request) bool {
	q := req.URL.Query()
	for _, p := range op.Parameters {
		if p.Value.In != openapi3.ParameterInQuery || p.Value.Schema == nil || p.Value.Schema.Value.Type.Is(openapi3.TypeString) {
			continue
		}
		if vs, ok := q[p.Value.Name]; ok && vs[0] == "" {
			return true
		}
	}
	return false
}

// rejectsInput reports whether status refuses a request as invalid input:
// what a request the contract allows must never get. 413 is not among
// them: it is the server's declared size limit (endpoints 3 and 4 declare
// it, endpoint 2's default covers it), met only by bodies over 1 MiB.
func rejectsInput(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// validatorGaps are the cases where kin-openapi's reading of the contract
// differs from the contract itself; the suite's cases state what the
// contract implies, and these adjust for the validator, with the reason.
var validatorGaps = map[string]struct {
	extra, missing []suite.Finding // with the endpoint's defect active, or whatever the mode
	extraOff       []suite.Finding // with it switched off, when it differs
	why            string
}{
	"InefficientAlgorithm/a term beyond 64 bits is found": {extra: []suite.Finding{suite.AcceptedInvalid},
		why: "kin-openapi reads query integers as 64-bit numbers and rejects a valid 21-digit integer"},
	"InefficientAlgorithm/a 4300-digit term finds nothing": {extra: []suite.Finding{suite.AcceptedInvalid},
		why: "kin-openapi reads query integers as 64-bit numbers and rejects a valid 4300-digit integer"},
	"ImproperInputTypeHandling/trailing garbage is invalid JSON": {extra: []suite.Finding{suite.RejectedValid}, extraOff: []suite.Finding{suite.RejectedValid},
		why: "kin-openapi decodes the first JSON value of a body and ignores what follows it"},
}

// The planted deviations, and only they, are found: every case of the
// suite declares the findings its exchange must show.
func TestContractFindings(t *testing.T) {
	t.Parallel()
	checkFindings(t, startEmbedded(t, nil).URL, catalogue.All())
}

// With every defect switched off, a tool finds nothing at all against the
// corrected contract, for valid and invalid inputs alike.
func TestContractFindingsDefectsOff(t *testing.T) {
	t.Parallel()
	checkFindings(t, startEmbedded(t, map[string]string{"DEFECTS": "none"}).URL, catalogue.None())
}

// checkFindings runs the suite against base, which serves with the given
// defects active, and compares what a tool finds against the contract base
// serves with what each case declares.
func checkFindings(t *testing.T, base string, active catalogue.Set) {
	t.Helper()
	ck := newChecker(t, base)
	client := &http.Client{}
	var mu sync.Mutex
	summary := map[string]map[suite.Finding]int{}
	suite.EachFor(t, active, func(ctx context.Context, t *testing.T, ep suite.Endpoint, c suite.Case) {
		resp, err := suite.Do(ctx, client, base, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Verify(resp); err != nil {
			t.Error(err)
		}
		req, err := c.Request(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		got := ck.findings(ctx, req, []byte(c.Body), resp)
		want := c.Findings
		if gap, ok := validatorGaps[ep.Name+"/"+c.Rule]; ok {
			extra := gap.extra
			if ep.Defect != "" && !active.Active(ep.Defect) && gap.extraOff != nil {
				extra = gap.extraOff
			}
			want = append(slices.DeleteFunc(slices.Clone(want), func(f suite.Finding) bool {
				return slices.Contains(gap.missing, f)
			}), extra...)
			t.Logf("validator gap: %s", gap.why)
		}
		want = suite.SortedFindings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s → %d: findings %v, want %v; body %s", req.Method, suite.Excerpt([]byte(c.Target)), resp.Status, got, want, suite.Excerpt(resp.Body))
		}
		mu.Lock()
		defer mu.Unlock()
		if summary[ep.Name] == nil {
			summary[ep.Name] = map[suite.Finding]int{}
		}
		for _, f := range got {
			summary[ep.Name][f]++
		}
	})
	t.Cleanup(func() {
		var b strings.Builder
		for _, ep := range suite.Endpoints() {
			fmt.Fprintf(&b, "\n  %-26s %v", ep.Name, summary[ep.Name])
		}
		t.Logf("findings per endpoint (defects %s):%s", active, b.String())
	})
}

// The corrected contract is a valid document in every combination tested:
// with SEC-01 switched off its one defect, the undefined api_key scheme, is
// gone; otherwise it stays.
func TestCorrectedContractDocument(t *testing.T) {
	t.Parallel()
	settings := map[string]catalogue.Set{"none": catalogue.None()}
	for _, d := range catalogue.Defects {
		settings["all but "+string(d.ID)] = catalogue.All().Without(d.ID)
	}
	for name, set := range settings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := loadServed(t, startEmbedded(t, map[string]string{"DEFECTS": set.String()}).URL)
			err := doc.Validate(context.Background(), openapi3.EnableMultiError())
			if set.Active(catalogue.SEC01) {
				if err == nil || !strings.Contains(err.Error(), `"api_key"`) {
					t.Fatalf("with SEC-01 active the undefined api_key must stay: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("the corrected contract does not validate: %v", err)
			}
			if n := doc.Paths.Len(); n != 10 {
				t.Fatalf("%d paths", n)
			}
		})
	}
}

func readCloser(b []byte) *nopCloser { return &nopCloser{bytes.NewReader(b)} }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// The contract in the views a tool may ask for: with server=absolute it
// names the instance (PUBLIC_URL, else the URL it was fetched from), with
// security=defined it validates cleanly (no undefined api_key), and without
// either it is openapi.yaml byte for byte.
func TestContractViews(t *testing.T) {
	t.Parallel()
	get := func(url string) (int, string, []byte) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), body
	}
	own := startEmbedded(t, nil)
	public := startEmbedded(t, map[string]string{"PUBLIC_URL": "https://showcase.example/"})
	for _, c := range []struct{ base, want string }{{own.URL, own.URL}, {public.URL, "https://showcase.example"}} {
		for _, file := range []string{"/openapi.yaml", "/openapi.json"} {
			status, _, body := get(c.base + file + "?server=absolute&security=defined")
			if status != 200 {
				t.Fatalf("%s: %d %s", file, status, body)
			}
			doc, err := openapi3.NewLoader().LoadFromData(body)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Errorf("%s with security=defined does not validate: %v", file, err)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != c.want || len(doc.Security) != 0 || doc.Paths.Len() != 10 {
				t.Errorf("%s: servers %v, security %v", file, doc.Servers, doc.Security)
			}
		}
	}
	status, ctype, body := get(own.URL + "/openapi.yaml?unrelated=1")
	if want, _ := os.ReadFile("../openapi.yaml"); status != 200 || ctype != "application/yaml" || !bytes.Equal(body, want) {
		t.Errorf("the declared contract is not openapi.yaml byte for byte (%d %s)", status, ctype)
	}
	for _, q := range []string{"server=relative", "security=", "server=absolute&server=absolute"} {
		if status, ctype, body := get(own.URL + "/openapi.json?" + q); status != 400 || ctype != "application/json" || !strings.Contains(string(body), `"error"`) {
			t.Errorf("?%s: %d %s %s", q, status, ctype, body)
		}
	}
}
