package coverage_test

import (
	"fmt"
	"mime"
	"slices"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/contract"
	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// totals is what a model offers per criterion, counted as Compute counts
// it on a report with nothing covered.
func totals(m *coverage.Model) map[string]int {
	rep := &coverage.Report{}
	for _, o := range m.Operations {
		oc := coverage.OperationCovered{Method: o.Method, Path: o.Path}
		for _, p := range o.Parameters {
			ps := coverage.ParameterSent{In: p.In, Name: p.Name}
			for _, v := range p.Values {
				ps.Values = append(ps.Values, coverage.ValueSent{Value: v})
			}
			oc.Parameters = append(oc.Parameters, ps)
		}
		for _, t := range o.RequestTypes {
			oc.RequestTypes = append(oc.RequestTypes, coverage.MediaCount{Type: t, Documented: true})
		}
		for _, t := range o.ResponseTypes {
			oc.ResponseTypes = append(oc.ResponseTypes, coverage.MediaCount{Type: t, Documented: true})
		}
		for _, r := range o.Responses {
			ra := coverage.ResponseAnswered{Status: r.Status}
			for _, p := range r.Properties {
				ra.Properties = append(ra.Properties, coverage.PropertyCarried{Name: p})
			}
			oc.Responses = append(oc.Responses, ra)
		}
		for _, c := range coverage.Classes {
			oc.StatusClasses = append(oc.StatusClasses, coverage.ClassAnswered{Class: c})
		}
		rep.Operations = append(rep.Operations, oc)
	}
	rep.Compute()
	out := map[string]int{}
	for _, c := range rep.Criteria {
		out[c.Name] = c.Total
	}
	return out
}

// The declared contract's model, counted by hand from openapi.yaml: ten
// operations on ten paths; parameters X-API-Key (ApiKeyAuth; the undefined
// api_key names none), number, text twice, id, limit, n and searchTerm;
// three JSON request bodies; 23 documented responses (ERR-01 and CONF-01
// have only default) with 35 declared properties (ItemMap declares none);
// no enum or boolean parameter. With CONF-04 off its 404 is documented: one
// response and one property more.
func TestModelOfTheContract(t *testing.T) {
	t.Parallel()
	declared, err := contract.Declared()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		active                catalogue.Set
		responses, properties int
	}{{catalogue.All(), 23, 35}, {catalogue.None(), 24, 36}} {
		served, err := declared.For(tc.active)
		if err != nil {
			t.Fatal(err)
		}
		m, err := coverage.FromContract(served.JSON)
		if err != nil {
			t.Fatal(err)
		}
		got := totals(m)
		want := map[string]int{coverage.Paths: 10, coverage.Operations: 10, coverage.Parameters: 8, coverage.ParameterValues: 0,
			coverage.RequestContentTypes: 3, coverage.ResponseContentTypes: 10, coverage.StatusClasses: 20,
			coverage.StatusCodes: tc.responses, coverage.ResponseProperties: tc.properties}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s total %d, want %d", tc.active, k, got[k], v)
			}
		}
		var params []string
		for _, o := range m.Operations {
			for _, p := range o.Parameters {
				params = append(params, p.In+" "+p.Name)
			}
		}
		if w := []string{"header X-API-Key", "body number", "body text", "body text", "query id", "query limit", "query n", "query searchTerm"}; !slices.Equal(params, w) {
			t.Errorf("parameters %q, want %q", params, w)
		}
		for i, e := range catalogue.Endpoints {
			if o := m.Operations[i]; o.Method != e.Method || o.Path != e.Path {
				t.Errorf("operation %d is %s %s, want the catalogue's %s %s", i, o.Method, o.Path, e.Method, e.Path)
			}
		}
	}
}

// A contract using what the showcase's does not: enums and booleans in the
// query, a header and a body, parameters by $ref and at the path's level
// (overridden by the operation's), allOf, a status range, a response by
// $ref, a non-JSON body, and a security scheme's query key.
const rich = `{
 "paths": {
  "/a": {
   "parameters": [{"$ref": "#/components/parameters/Verbose"}, {"name": "mode", "in": "query", "schema": {"type": "string"}}],
   "post": {
    "operationId": "postA",
    "security": [{"Key": []}],
    "parameters": [{"name": "mode", "in": "query", "schema": {"type": "string", "enum": ["fast", "slow", 3]}},
                   {"name": "X-Flag", "in": "header", "schema": {"type": "boolean"}}],
    "requestBody": {"content": {
      "application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"properties": {"kind": {"enum": ["x", 1, true]}}}]}},
      "text/plain; charset=utf-8": {"schema": {"type": "string"}}}},
    "responses": {
      "201": {"$ref": "#/components/responses/Made"},
      "4xx": {"description": "no", "content": {"application/problem+json": {"schema": {"properties": {"title": {}, "detail": {}}}}}},
      "default": {"description": "else"}
    }
   },
   "get": {"responses": {"200": {"description": "ok", "content": {"text/csv": {}}}}}
  }
 },
 "components": {
  "parameters": {"Verbose": {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}},
  "schemas": {"Base": {"properties": {"on": {"type": "boolean"}, "name": {"type": "string"}}}},
  "responses": {"Made": {"description": "made", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Base"}}}}},
  "securitySchemes": {"Key": {"type": "apiKey", "in": "query", "name": "key"}}
 }
}`

func TestModelOfARicherContract(t *testing.T) {
	t.Parallel()
	m, err := coverage.FromContract([]byte(rich))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Operations) != 2 {
		t.Fatalf("%d operations, want 2", len(m.Operations))
	}
	post := m.Operations[0]
	var params []string
	for _, p := range post.Parameters {
		params = append(params, fmt.Sprintf("%s %s %s", p.In, p.Name, strings.Join(p.Values, "|")))
	}
	want := []string{"query mode fast|slow|3", "header X-Flag true|false", "query verbose true|false",
		`body on true|false`, "body name ", `body kind "x"|1|true`, "query key "}
	if !slices.Equal(params, want) {
		t.Errorf("parameters\n got %q\nwant %q", params, want)
	}
	if !slices.Equal(post.RequestTypes, []string{"application/json", "text/plain"}) {
		t.Errorf("request types %q", post.RequestTypes)
	}
	var responses []string
	for _, r := range post.Responses {
		responses = append(responses, r.Status+" "+strings.Join(r.Types, ",")+" "+strings.Join(r.Properties, ","))
	}
	if w := []string{"201 application/json on,name", "4XX application/problem+json title,detail", "default  "}; !slices.Equal(responses, w) {
		t.Errorf("responses\n got %q\nwant %q", responses, w)
	}
	for status, want := range map[int]string{201: "201", 404: "4XX", 499: "4XX", 200: "default", 500: "default"} {
		i, ok := post.Matches(status)
		if !ok || post.Responses[i].Status != want {
			t.Errorf("%d falls under %v %v, want %s", status, i, ok, want)
		}
	}
	if _, ok := m.Operations[1].Matches(404); ok {
		t.Error("GET /a documents only 200: 404 is undocumented")
	}
	if got := totals(m)[coverage.ParameterValues]; got != 3+2+2+2+3+2 { // GET /a has the path's verbose too
		t.Errorf("parameter values total %d, want 14", got)
	}
}

func TestModelRefuses(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"a templated path":  `{"paths": {"/a/{id}": {"get": {"responses": {"200": {"description": ""}}}}}}`,
		"a dangling $ref":   `{"paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/Nope"}], "responses": {}}}}}`,
		"a remote $ref":     `{"paths": {"/a": {"get": {"responses": {"200": {"$ref": "other.yaml#/x"}}}}}}`,
		"a status key":      `{"paths": {"/a": {"get": {"responses": {"20": {"description": ""}}}}}}`,
		"paths not a map":   `{"paths": []}`,
		"not JSON":          `paths: {}`,
		"a $ref to itself":  `{"paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/P"}], "responses": {}}}}, "components": {"parameters": {"P": {"$ref": "#/components/parameters/P"}}}}`,
		"an operation list": `{"paths": {"/a": {"get": []}}}`,
	} {
		if _, err := coverage.FromContract([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The TCL is the highest level whose criteria, and every lower level's, are
// all covered; a criterion with nothing to cover does not hold it back.
func TestTCL(t *testing.T) {
	t.Parallel()
	full := func() *coverage.Report {
		return &coverage.Report{Operations: []coverage.OperationCovered{{
			Method: "POST", Path: "/a", Requests: 2,
			Parameters:    []coverage.ParameterSent{{In: "query", Name: "q", Sent: 1, Values: []coverage.ValueSent{{Value: "true", Sent: 1}}}},
			RequestTypes:  []coverage.MediaCount{{Type: "application/json", Documented: true, Count: 2}, {Type: "text/plain", Count: 5}},
			Responses:     []coverage.ResponseAnswered{{Status: "200", Answered: 1, Properties: []coverage.PropertyCarried{{Name: "p", Carried: 1}}}, {Status: "400", Answered: 1}},
			StatusClasses: []coverage.ClassAnswered{{Class: "2XX", Answered: 1}, {Class: "4XX", Answered: 1}},
			ResponseTypes: []coverage.MediaCount{{Type: "application/json", Documented: true, Count: 2}},
		}}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *coverage.Report)
		tcl    int
	}{
		{"everything", func(*coverage.Report) {}, 6},
		{"a property never carried", func(r *coverage.Report) { r.Operations[0].Responses[0].Properties[0].Carried = 0 }, 5},
		{"a value never sent", func(r *coverage.Report) { r.Operations[0].Parameters[0].Values[0].Sent = 0 }, 4},
		{"no values to send", func(r *coverage.Report) { r.Operations[0].Parameters[0].Values = nil }, 6},
		{"a documented status never answered", func(r *coverage.Report) { r.Operations[0].Responses[1].Answered = 0 }, 4},
		{"no 4XX", func(r *coverage.Report) { r.Operations[0].StatusClasses[1].Answered = 0 }, 3},
		{"a parameter never sent", func(r *coverage.Report) { r.Operations[0].Parameters[0].Sent = 0 }, 3},
		{"the request type never sent", func(r *coverage.Report) { r.Operations[0].RequestTypes[0].Count = 0 }, 2},
		{"never called", func(r *coverage.Report) { r.Operations[0].Requests = 0 }, 0},
	} {
		r := full()
		tc.mutate(r)
		r.Compute()
		if r.TCL != tc.tcl || r.MaxTCL != 6 {
			t.Errorf("%s: TCL %d of %d, want %d", tc.name, r.TCL, r.MaxTCL, tc.tcl)
		}
		// Computing again gives the same: Compute is idempotent.
		before := fmt.Sprint(r.Criteria)
		r.Compute()
		if fmt.Sprint(r.Criteria) != before {
			t.Errorf("%s: a second Compute changed the criteria", tc.name)
		}
	}
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"": "", "  ": "", "application/JSON; charset=utf-8": "application/json", "text/plain": "text/plain",
		"not a type;;": coverage.Invalid, "a/" + strings.Repeat("b", 200): "a/" + strings.Repeat("b", 98),
	} {
		if got := coverage.MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", in, got, want)
		}
	}
	// The fast path for a plain type answers what mime.ParseMediaType
	// does, on plain types and on near misses.
	for _, in := range []string{"application/json", "application/vnd.api+json", "text/plain", "a/b/c", "/json", "json/", "a//b",
		"Application/json", "application/json ", " application/json", "application/json;", "x/y!#$%&'*+-.^_`|~9", "x/y@z", "x/y(z)", "ü/x", "a/" + strings.Repeat("b", 98), "a/" + strings.Repeat("b", 99)} {
		want := coverage.Invalid
		if mt, _, err := mime.ParseMediaType(in); err == nil {
			want = mt[:min(len(mt), 100)]
		}
		if got := coverage.MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q (mime.ParseMediaType's)", in, got, want)
		}
	}
	for in, want := range map[string]bool{"application/json": true, "application/vnd.api+json": true, "text/json": false, "+json": false, "": false} {
		if coverage.IsJSON(in) != want {
			t.Errorf("IsJSON(%q) = %v", in, !want)
		}
	}
}
