// Package suite is the endpoint behaviour suite: every rule of the
// specification and the behaviour notes as a table of requests and the
// answers they must get. It knows only a base URL, so the same cases run
// against the gateway in embedded mode, in front of separate services, and
// against a deployment.
package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// Finding is a deviation from the declared contract that an API-testing
// tool should report for a case: a class of check of the catalogue.
type Finding = catalogue.Class

// The findings a case can show (see catalogue.Class).
const (
	UndocumentedStatus = catalogue.UndocumentedStatus
	WrongContentType   = catalogue.WrongContentType
	InvalidBody        = catalogue.InvalidBody
	ServerError        = catalogue.ServerError
	AcceptedInvalid    = catalogue.AcceptedInvalid
	RejectedValid      = catalogue.RejectedValid
	AuthBypass         = catalogue.AuthBypass
)

// Trigger is the request of a defect's trigger: its operation's method,
// the trigger's target, and its JSON body, if any.
func Trigger(d catalogue.Defect, tr catalogue.Trigger) Case {
	c := Case{Method: catalogue.EndpointOf(d.ID).Method, Target: d.Target(tr), Body: tr.Body}
	if tr.Body != "" {
		c.ContentType = "application/json"
	}
	return c
}

// Case is one request and what must come back.
type Case struct {
	Rule        string      // the rule it checks, used as the subtest name
	Method      string      // GET when empty
	Target      string      // path and raw query, sent as is
	ContentType string      // request Content-Type; none when empty
	Body        string      // request body
	Header      http.Header // further request headers
	Status      int
	Type        string            // response Content-Type; application/json when empty, NoContentType for none
	Want        Check             // the body; nil checks nothing more
	WantHeader  map[string]string // response headers that must be exactly so
	Findings    []Finding         // contract deviations this exchange shows
	Slow        bool              // takes about a second by design
	// Off is the answer with the endpoint's defect switched off, when it
	// differs; findings are then always none.
	Off *Expect
}

// Expect is an answer a case must get.
type Expect struct {
	Status     int
	Type       string // as Case.Type
	Want       Check
	WantHeader map[string]string
}

// off is c with its answer when the defect is switched off.
func (c Case) off(status int, want Check) Case {
	c.Off = &Expect{Status: status, Want: want, WantHeader: c.WantHeader}
	return c
}

// NoContentType as Case.Type wants no Content-Type header at all.
const NoContentType = "none"

// Endpoint groups the cases of one endpoint (or of the routing around them).
type Endpoint struct {
	Name   string
	Defect catalogue.ID // its planted defect; "" for the routing around them
	Cases  []Case
}

// For is c as it must answer when the active defects are active: with the
// endpoint's defect switched off, its Off answer and no finding at all.
func (ep Endpoint) For(c Case, active catalogue.Set) Case {
	if ep.Defect == "" || active.Active(ep.Defect) {
		return c
	}
	if c.Off != nil {
		c.Status, c.Type, c.Want, c.WantHeader = c.Off.Status, c.Off.Type, c.Off.Want, c.Off.WantHeader
	}
	c.Findings, c.Slow = nil, false
	return c
}

// Response is what a case got.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request builds the case's request against base.
func (c Case) Request(ctx context.Context, base string) (*http.Request, error) {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+c.Target, body)
	if err != nil {
		return nil, err
	}
	if c.ContentType != "" {
		req.Header.Set("Content-Type", c.ContentType)
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	return req, nil
}

// Do sends c to base and reads the whole answer.
func Do(ctx context.Context, client *http.Client, base string, c Case) (Response, error) {
	req, err := c.Request(ctx, base)
	if err != nil {
		return Response{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Verify compares a response with the case's expectations.
func (c Case) Verify(r Response) error {
	var errs []string
	if r.Status != c.Status {
		errs = append(errs, fmt.Sprintf("status %d, want %d", r.Status, c.Status))
	}
	wantType := c.Type
	switch wantType {
	case "":
		wantType = "application/json"
	case NoContentType:
		wantType = ""
	}
	if got := r.Header.Get("Content-Type"); got != wantType {
		errs = append(errs, fmt.Sprintf("Content-Type %q, want %q", got, wantType))
	}
	for k, v := range c.WantHeader {
		if got := r.Header.Get(k); got != v {
			errs = append(errs, fmt.Sprintf("header %s %q, want %q", k, got, v))
		}
	}
	if c.Want != nil {
		if err := c.Want(r.Body); err != nil {
			errs = append(errs, "body: "+err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s %s: %s; body %s", c.method(), c.Target, strings.Join(errs, "; "), Excerpt(r.Body))
	}
	return nil
}

func (c Case) method() string {
	if c.Method == "" {
		return http.MethodGet
	}
	return c.Method
}

// Excerpt is the start of a body, for failure messages.
func Excerpt(b []byte) string {
	if len(b) > 200 {
		return strconv.Quote(string(b[:200])) + "…"
	}
	return strconv.Quote(string(b))
}

// Each runs fn for every case, one parallel subtest per endpoint and rule,
// with a context bounded to a minute.
func Each(t *testing.T, fn func(ctx context.Context, t *testing.T, ep Endpoint, c Case)) {
	t.Helper()
	EachFor(t, catalogue.All(), fn)
}

// EachFor is Each with the given defects active: each case as Endpoint.For
// makes it.
func EachFor(t *testing.T, active catalogue.Set, fn func(ctx context.Context, t *testing.T, ep Endpoint, c Case)) {
	t.Helper()
	eachIn(t, active, "", fn)
}

// eachIn is EachFor over one category's endpoints ("" for all, the routing
// around them included).
func eachIn(t *testing.T, active catalogue.Set, category string, fn func(ctx context.Context, t *testing.T, ep Endpoint, c Case)) {
	t.Helper()
	for _, ep := range Endpoints() {
		if category != "" && (ep.Defect == "" || catalogue.EndpointOf(ep.Defect).Category != category) {
			continue
		}
		t.Run(ep.Name, func(t *testing.T) {
			t.Parallel()
			for _, c := range ep.Cases {
				t.Run(c.Rule, func(t *testing.T) {
					t.Parallel()
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					fn(ctx, t, ep, ep.For(c, active))
				})
			}
		})
	}
}

// Run runs every case against base and verifies each answer.
func Run(t *testing.T, base string, client *http.Client) {
	t.Helper()
	RunFor(t, base, client, catalogue.All())
}

// RunFor runs every case against base, which serves with the given
// defects active, and verifies each answer.
func RunFor(t *testing.T, base string, client *http.Client, active catalogue.Set) {
	t.Helper()
	runIn(t, base, client, active, "")
}

// RunCategory runs the cases of one category's endpoints against base,
// which serves that category's routes with the given defects active: a
// service runs its part of the suite against its own router.
func RunCategory(t *testing.T, base string, client *http.Client, active catalogue.Set, category string) {
	t.Helper()
	if _, ok := catalogue.CategoryNamed(category); !ok {
		t.Fatalf("no category %q", category)
	}
	runIn(t, base, client, active, category)
}

// Settings are the settings a category's part of the suite runs with:
// every defect active, every defect off, and each of the category's
// defects off alone.
func Settings(category string) []catalogue.Set {
	sets := []catalogue.Set{catalogue.All(), catalogue.None()}
	for _, e := range catalogue.EndpointsOf(category) {
		sets = append(sets, catalogue.All().Without(e.Defect))
	}
	return sets
}

func runIn(t *testing.T, base string, client *http.Client, active catalogue.Set, category string) {
	t.Helper()
	eachIn(t, active, category, func(ctx context.Context, t *testing.T, ep Endpoint, c Case) {
		r, err := Do(ctx, client, base, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Verify(r); err != nil {
			t.Error(err)
		}
		if ep.Defect != "" && !active.Active(ep.Defect) {
			return // Outcome knows the planted behaviour only
		}
		if err := Outcome(c.method(), c.Target, r.Status, r.Header, r.Body); err != nil {
			t.Errorf("not an allowed outcome: %v", err)
		}
	})
}

// Check inspects a response body.
type Check func(body []byte) error

// Exactly wants these bytes and no others.
func Exactly(want string) Check {
	return func(b []byte) error {
		if string(b) != want {
			return fmt.Errorf("want exactly %q", want)
		}
		return nil
	}
}

// JSONEqual wants a JSON document equal to want, key order aside.
func JSONEqual(want string) Check {
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		panic("suite: bad expected JSON " + want)
	}
	return func(b []byte) error {
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			return fmt.Errorf("not JSON: %v", err)
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("want JSON %s", want)
		}
		return nil
	}
}

// FailureWithError wants exactly {"success": false, "error": <a string>}.
func FailureWithError() Check {
	return func(b []byte) error {
		var g map[string]any
		if err := json.Unmarshal(b, &g); err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		if len(g) != 2 || g["success"] != false {
			return fmt.Errorf(`want only "success": false and "error"`)
		}
		if _, ok := g["error"].(string); !ok {
			return fmt.Errorf(`"error" is not a string`)
		}
		return nil
	}
}

// Items wants an object of exactly n properties item_0 … item_<n-1>, each a string.
func Items(n int) Check {
	return func(b []byte) error {
		var g map[string]any
		if err := json.Unmarshal(b, &g); err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		if len(g) != n {
			return fmt.Errorf("%d properties, want %d", len(g), n)
		}
		for i := range n {
			if _, ok := g["item_"+strconv.Itoa(i)].(string); !ok {
				return fmt.Errorf("item_%d missing or not a string", i)
			}
		}
		return nil
	}
}

// Empty wants no body at all.
func Empty() Check { return Exactly("") }

// SortedFindings returns fs sorted, for comparison.
func SortedFindings(fs []Finding) []Finding {
	out := append([]Finding(nil), fs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// bodyOfSize is a JSON object whose total size is exactly n bytes.
func bodyOfSize(key string, n int) string {
	head := `{"` + key + `":"`
	return head + strings.Repeat("1", n-len(head)-2) + `"}`
}

// RunService runs a category's part of the suite against the router build
// returns, once for each of Settings(category), in parallel.
func RunService(t *testing.T, category string, build func(t *testing.T, active catalogue.Set) http.Handler) {
	t.Helper()
	for _, active := range Settings(category) {
		t.Run("DEFECTS="+active.String(), func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(build(t, active))
			t.Cleanup(ts.Close)
			RunCategory(t, ts.URL, ts.Client(), active, category)
		})
	}
}

// Raw writes req on a new connection to addr exactly as given, bytes the
// client library would refuse to send included, and reads the answer.
func Raw(t testing.TB, addr, req string) (status int, body string) {
	t.Helper()
	res := RawAnswer(t, addr, req, false)
	return res.Status, string(res.Body)
}

// RawAnswer is Raw with the whole answer; with halfClose the client closes
// its sending side once req is written, as a client whose body breaks off
// may.
func RawAnswer(t testing.TB, addr, req string, halfClose bool) Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Shape is what two deployments' answers must share beyond status and
// content type: a JSON object's keys and the types of their values, or the
// body's text when it is not an object.
func Shape(body []byte) string {
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return strings.TrimSpace(string(body))
	}
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		keys = append(keys, fmt.Sprintf("%s:%T", k, v))
	}
	sort.Strings(keys)
	return "{" + strings.Join(keys, ",") + "}"
}
