package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// Requests generated from the contract an instance serves, the way a
// fuzzer reads it, rather than written by hand: for every operation a valid
// baseline (every parameter and property at a typical value, the API key
// where one is required), then one change at a time, every parameter and
// property through the boundaries and typical values its schema names and
// through values that break one constraint (a bound, a length, the pattern,
// the type, presence, additional properties, the key). kin-openapi decides
// which of them the contract allows; the checker of contract_test.go then
// reports what a tool would: a request the contract allows refused as
// invalid input, one it forbids accepted, a 5xx, an undeclared status, a
// wrong content type or body.
//
// With an endpoint's defect switched off, nothing may be found there. With
// it active, only the kinds of finding its defect shows in the suite may
// be, and at least one of them is.

// genRequest is one generated request.
type genRequest struct {
	op     string // "GET /path"
	change string // what differs from the operation's baseline
	method string
	path   string
	query  []queryParam
	header http.Header
	body   *string // nil: none
}

type queryParam struct{ name, value string }

func (g genRequest) target() string {
	if len(g.query) == 0 {
		return g.path
	}
	parts := make([]string, len(g.query))
	for i, p := range g.query {
		parts[i] = url.QueryEscape(p.name) + "=" + url.QueryEscape(p.value)
	}
	return g.path + "?" + strings.Join(parts, "&")
}

// asCase is g as the suite sends it.
func (g genRequest) asCase() suite.Case {
	c := suite.Case{Method: g.method, Target: g.target(), Header: g.header}
	if g.body != nil {
		c.Body = *g.body
	}
	return c
}

// sendAll calls send for every request, eight at a time, each with a
// context bounded to a minute.
func sendAll(reqs []genRequest, send func(ctx context.Context, i int, g genRequest)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, g := range reqs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			send(ctx, i, g)
		}()
	}
	wg.Wait()
}

// request is g as the checker reads it (it sets the body itself).
func (g genRequest) request(ctx context.Context, base string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, g.method, base+g.target(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = g.header.Clone()
	return req, nil
}

// generateRequests derives the requests for every operation of doc.
func generateRequests(doc *openapi3.T, apiKey string) []genRequest {
	var out []genRequest
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		ops := doc.Paths.Value(path).Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			out = append(out, operationRequests(method, path, ops[method], apiKey)...)
		}
	}
	return out
}

func operationRequests(method, path string, op *openapi3.Operation, apiKey string) []genRequest {
	base := genRequest{op: method + " " + path, change: "baseline", method: method, path: path, header: http.Header{}}
	var out []genRequest
	vary := func(change string, edit func(g *genRequest)) {
		g := base
		g.change = change
		g.query = slices.Clone(base.query)
		g.header = base.header.Clone()
		edit(&g)
		out = append(out, g)
	}

	if needsAPIKey(op) {
		base.header.Set("X-API-Key", apiKey)
	}
	var params []*openapi3.Parameter
	for _, p := range op.Parameters {
		if p.Value.In == openapi3.ParameterInQuery && p.Value.Schema != nil {
			params = append(params, p.Value)
			base.query = append(base.query, queryParam{p.Value.Name, typicalQueryValue(p.Value.Schema.Value)})
		}
	}
	var object *openapi3.Schema
	if op.RequestBody != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			object = mt.Schema.Value
			base.header.Set("Content-Type", "application/json")
			body := string(mustJSON(typicalObject(object)))
			base.body = &body
		}
	}
	out = append(out, base)

	if needsAPIKey(op) {
		vary("without the API key", func(g *genRequest) { g.header.Del("X-API-Key") })
		vary("with another API key", func(g *genRequest) { g.header.Set("X-API-Key", apiKey+"-not") })
	}
	for i, p := range params {
		vary(p.Name+" absent", func(g *genRequest) { g.query = slices.Delete(g.query, i, i+1) })
		for _, v := range queryCandidates(p.Schema.Value) {
			vary(fmt.Sprintf("%s=%q", p.Name, v), func(g *genRequest) { g.query[i].value = v })
		}
	}
	if object != nil {
		withProperty := func(g *genRequest, name string, raw json.RawMessage) {
			obj := typicalObject(object)
			if raw == nil {
				delete(obj, name)
			} else {
				obj[name] = raw
			}
			body := string(mustJSON(obj))
			g.body = &body
		}
		for _, name := range slices.Sorted(maps.Keys(object.Properties)) {
			vary(name+" absent", func(g *genRequest) { withProperty(g, name, nil) })
			for _, raw := range jsonCandidates(object.Properties[name].Value) {
				vary(name+"="+suite.Excerpt(raw), func(g *genRequest) { withProperty(g, name, raw) })
			}
		}
		vary("an additional property", func(g *genRequest) { withProperty(g, "additional", json.RawMessage(`"x"`)) })
		for _, raw := range []string{`{}`, `[]`, `"text"`, `1`, `null`} {
			vary("the body "+raw, func(g *genRequest) { g.body = &raw })
		}
		vary("no body", func(g *genRequest) { g.body = nil; g.header.Del("Content-Type") })
	}
	return out
}

func needsAPIKey(op *openapi3.Operation) bool {
	if op.Security == nil {
		return false
	}
	for _, req := range *op.Security {
		if _, ok := req["ApiKeyAuth"]; ok {
			return true
		}
	}
	return false
}

// typicalQueryValue is a parameter's baseline: a small integer inside its
// bounds, or a short text.
func typicalQueryValue(s *openapi3.Schema) string {
	if !s.Type.Is(openapi3.TypeInteger) {
		return "text"
	}
	v := 10.0
	if s.Min != nil {
		v = math.Max(v, *s.Min)
	}
	if s.Max != nil {
		v = math.Min(v, *s.Max)
	}
	return strconv.FormatInt(int64(v), 10)
}

// queryCandidates are an integer parameter's boundaries, typical values and
// values that are no integer at all, as query text: within 64 bits, where
// kin-openapi reads integers.
func queryCandidates(s *openapi3.Schema) []string {
	if !s.Type.Is(openapi3.TypeInteger) {
		return []string{"", "text", "0"}
	}
	set := map[int64]bool{0: true, 1: true, -1: true, 10: true, math.MaxInt64: true, math.MinInt64: true}
	for _, b := range []*float64{s.Min, s.Max} {
		if b != nil {
			set[int64(*b)-1], set[int64(*b)], set[int64(*b)+1] = true, true, true
		}
	}
	if d, ok := s.Default.(float64); ok {
		set[int64(d)] = true
	}
	var out []string
	for _, v := range slices.Sorted(maps.Keys(set)) {
		out = append(out, strconv.FormatInt(v, 10))
	}
	return append(out, "+7", "007", "", "1.5", "1e3", "abc", " 7", "7 ", "0x10", "1_000", "٣")
}

// typicalObject is a body with every property at its baseline value.
func typicalObject(s *openapi3.Schema) map[string]json.RawMessage {
	obj := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		obj[name] = typicalJSON(p.Value)
	}
	return obj
}

// typicalJSON is the first of a property's candidates the schema allows.
func typicalJSON(s *openapi3.Schema) json.RawMessage {
	for _, c := range jsonCandidates(s) {
		var v any
		if json.Unmarshal(c, &v) == nil && s.VisitJSON(v) == nil {
			return c
		}
	}
	panic("no candidate fits the schema")
}

// jsonCandidates are a property's typical and boundary values, and values
// of other types. Strings: digits, words, the empty string, non-ASCII in
// several scripts, digits of other scripts, a final newline, a NUL, a lone
// surrogate, and the lengths around maxLength, and long texts.
func jsonCandidates(s *openapi3.Schema) []json.RawMessage {
	var texts []string
	if s.Type.Is(openapi3.TypeString) {
		texts = []string{"79927398713", "hello", "", "0", "12a4", "4111-1111", "héllo", "hi 😀", "٧٩٩٢٧٣", "７９９", "123\n", " 123",
			strings.Repeat("9", 300), strings.Repeat("a", 300)}
		if s.MaxLength != nil {
			n := int(*s.MaxLength)
			texts = append(texts, strings.Repeat("a", n-1), strings.Repeat("a", n), strings.Repeat("é", n), strings.Repeat("a", n+1))
		}
		if s.MinLength > 0 {
			texts = append(texts, strings.Repeat("a", int(s.MinLength)-1))
		}
	}
	var out []json.RawMessage
	for _, t := range texts {
		out = append(out, mustJSON(t))
	}
	if s.Type.Is(openapi3.TypeString) {
		// What JSON can say and Go strings cannot hold as such: a NUL, and
		// a lone surrogate (decoded as U+FFFD).
		out = append(out, json.RawMessage(`"12\u00003"`), json.RawMessage(`"a\ud800b"`))
	}
	for _, raw := range []string{`5`, `-5`, `1.5`, `79927398713`, `true`, `null`, `["1"]`, `{"a":"1"}`} {
		out = append(out, json.RawMessage(raw))
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkGenerated sends the requests generated from the contract base
// serves, with the given defects active, and checks what a tool finds.
func checkGenerated(t *testing.T, base string, active catalogue.Set) {
	t.Helper()
	ck := newChecker(t, base)
	reqs := generateRequests(loadServed(t, base), suite.DemoAPIKey)
	// What a tool may report while a defect is active: the classes of
	// check the catalogue credits to it, its primary ones and its faces.
	defectOf := map[string]catalogue.ID{}
	planted := map[catalogue.ID][]suite.Finding{}
	for _, d := range catalogue.Defects {
		defectOf[catalogue.EndpointOf(d.ID).Path] = d.ID
		planted[d.ID] = slices.Concat(d.Classes, d.Faces)
	}

	type result struct {
		g        genRequest
		status   int
		findings []suite.Finding
	}
	results := make([]result, len(reqs))
	client := &http.Client{}
	sendAll(reqs, func(ctx context.Context, i int, g genRequest) {
		c := g.asCase()
		resp, err := suite.Do(ctx, client, base, c)
		if err != nil {
			t.Errorf("%s, %s: %v", g.op, g.change, err)
			return
		}
		req, err := g.request(ctx, base)
		if err != nil {
			t.Error(err)
			return
		}
		results[i] = result{g: g, status: resp.Status, findings: ck.findings(ctx, req, []byte(c.Body), resp)}
	})

	seen := map[catalogue.ID]int{}
	perOp := map[string]int{}
	for _, r := range results {
		if r.g.op == "" {
			continue // its error is reported above
		}
		perOp[r.g.op]++
		id := defectOf[r.g.path]
		switch {
		case !active.Active(id):
			if len(r.findings) > 0 {
				t.Errorf("%s, %s → %d: %v, with %s switched off", r.g.op, r.g.change, r.status, r.findings, id)
			}
		default:
			for _, f := range r.findings {
				if !slices.Contains(planted[id], f) {
					t.Errorf("%s, %s → %d: %s, which %s does not plant (it shows %v)", r.g.op, r.g.change, r.status, f, id, planted[id])
				}
			}
			if len(r.findings) > 0 {
				seen[id]++
			}
		}
	}
	for _, d := range catalogue.Defects {
		if active.Active(d.ID) && seen[d.ID] == 0 {
			t.Errorf("%s is active, and no generated request showed it", d.ID)
		}
	}
	t.Logf("%d generated requests (per operation %v); requests showing each active defect: %v", len(results), perOp, seen)
}

// With every defect switched off, no generated request finds anything.
func TestGeneratedRequestsDefectsOff(t *testing.T) {
	t.Parallel()
	checkGenerated(t, startEmbedded(t, map[string]string{"DEFECTS": "none"}).URL, catalogue.None())
}

// With every defect active, generated requests find each planted defect,
// and nothing else.
func TestGeneratedRequests(t *testing.T) {
	t.Parallel()
	checkGenerated(t, startEmbedded(t, nil).URL, catalogue.All())
}

// Each defect switched off alone: its endpoint is clean, and the other
// nine are found as before.
func TestGeneratedRequestsEachDefectOffAlone(t *testing.T) {
	t.Parallel()
	for _, d := range catalogue.Defects {
		t.Run(string(d.ID), func(t *testing.T) {
			t.Parallel()
			active := catalogue.All().Without(d.ID)
			checkGenerated(t, startEmbedded(t, map[string]string{"DEFECTS": active.String()}).URL, active)
		})
	}
}

// The split deployment answers every generated request exactly as the one
// process does, with every defect active and with every one switched off.
func TestGeneratedRequestsModesAgree(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.All(), catalogue.None()} {
		t.Run("defects "+active.String(), func(t *testing.T) {
			t.Parallel()
			emb := startEmbedded(t, map[string]string{"DEFECTS": active.String()})
			sp := startSplitWith(t, active)
			reqs := generateRequests(loadServed(t, emb.URL), suite.DemoAPIKey)
			sendAll(reqs, func(ctx context.Context, _ int, g genRequest) {
				a, err := suite.Do(ctx, emb.Client(), emb.URL, g.asCase())
				if err != nil {
					t.Error(err)
					return
				}
				b, err := suite.Do(ctx, sp.gateway.Client(), sp.gateway.URL, g.asCase())
				if err != nil {
					t.Error(err)
					return
				}
				if err := sameAnswer(a, b); err != nil {
					t.Errorf("%s, %s: %v", g.op, g.change, err)
				}
			})
			t.Logf("%d generated requests answered alike", len(reqs))
		})
	}
}
