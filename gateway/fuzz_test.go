package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

var fuzzPaths = []string{
	suite.PathUnauthenticatedAccess, suite.PathInputTypeHandling, suite.PathColumnSize, suite.PathUnicodeEncoding,
	suite.PathMalformedJSON, suite.PathIncorrectContentType, suite.PathMissingField, suite.PathUndocumentedStatus,
	suite.PathUnboundedResultSet, suite.PathInefficientAlgorithm, "/openapi.yaml", "/nowhere",
}

var fuzzMethods = []string{"GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "BREW"}

// fuzzGateway is one embedded gateway for every input; items cost a
// microsecond so endpoint 9 is fast under the fuzzer.
var fuzzGateway = sync.OnceValue(func() http.Handler {
	return fuzzHandler(map[string]string{"ITEM_COST": "1us", "SQLITE_MAX_ROWS": "1000"})
})

// fuzzGatewayOff is one embedded gateway with every defect switched off.
var fuzzGatewayOff = sync.OnceValue(func() http.Handler {
	return fuzzHandler(map[string]string{"DEFECTS": "none", "SQLITE_MAX_ROWS": "1000"})
})

func fuzzHandler(env map[string]string) http.Handler {
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, observe.Discard())
	if err != nil {
		panic(err)
	}
	return built.Handler
}

// fuzzRequest builds the request of one fuzz input.
func fuzzRequest(method, path, query, contentType string, body []byte) *http.Request {
	req := &http.Request{
		Method: method, URL: &url.URL{Path: path, RawQuery: query}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Host: "fuzz", RemoteAddr: "127.0.0.1:1",
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// Every handler answers any request with one of its specified outcomes:
// no crash (the process would die), no hang, no unspecified answer.
func FuzzEndpoints(f *testing.F) {
	f.Add(uint8(1), uint8(1), "", "application/json", []byte(`{"number":"79927398713"}`))
	f.Add(uint8(1), uint8(1), "", "application/json", []byte(`{"number":"12a"}`))
	f.Add(uint8(1), uint8(2), "", "application/json", []byte(`{"text":"0123456789abcdef"}`))
	f.Add(uint8(1), uint8(3), "", "application/json", []byte(`{"text":"héllo"}`))
	f.Add(uint8(1), uint8(3), "", "text/plain", []byte(`{"text":"a"}`))
	f.Add(uint8(0), uint8(7), "id=0;x", "", []byte(nil))
	f.Add(uint8(0), uint8(8), "limit=%EF%BC%94", "", []byte(nil))
	f.Add(uint8(0), uint8(9), "n=101&searchTerm=354224848179261915075", "", []byte(nil))
	f.Add(uint8(2), uint8(8), "limit=-1", "", []byte(nil))
	f.Add(uint8(7), uint8(0), "", "", []byte(nil))
	f.Add(uint8(0), uint8(11), "x=1", "", []byte(nil))
	f.Fuzz(func(t *testing.T, m, p uint8, query, contentType string, body []byte) {
		method, path := fuzzMethods[int(m)%len(fuzzMethods)], fuzzPaths[int(p)%len(fuzzPaths)]
		if path == suite.PathInefficientAlgorithm {
			if n, ok := queryInt(query, "n"); ok && n > 3000 {
				t.Skip("n above 3000 is slow by design; the suite covers it")
			}
		}
		req := fuzzRequest(method, path, query, contentType, body)
		rec := httptest.NewRecorder()
		fuzzGateway().ServeHTTP(rec, req)
		got := rec.Body.Bytes()
		if method == http.MethodHead {
			got = nil // net/http drops it; the recorder keeps it
		}
		if err := suite.Outcome(method, path, rec.Code, rec.Header(), got); err != nil {
			t.Fatalf("%s %s?%s (%q, %q) → %d %s: %v", method, path, query, contentType, body, rec.Code, suite.Excerpt(rec.Body.Bytes()), err)
		}
	})
}

// With every defect switched off, no request of any shape gets a server
// error, and every JSON answer is valid JSON: the negative control has no
// accidental defect for a fuzzer to find.
func FuzzEndpointsDefectsOff(f *testing.F) {
	f.Add(uint8(1), uint8(1), "", "application/json", []byte(`{"number":"12a"}`))
	f.Add(uint8(1), uint8(2), "", "application/json", []byte(`{"text":"`+strings.Repeat("é", 256)+`"}`))
	f.Add(uint8(1), uint8(3), "", "application/json", []byte(`{"text":"héllo"}`))
	f.Add(uint8(1), uint8(3), "", "application/json", []byte(`{"text":5}`))
	f.Add(uint8(0), uint8(7), "id=00", "", []byte(nil))
	f.Add(uint8(0), uint8(8), "limit=1001", "", []byte(nil))
	f.Add(uint8(0), uint8(9), "n=100000&searchTerm=354224848179261915075", "", []byte(nil))
	f.Add(uint8(0), uint8(9), "n=1&searchTerm=-0", "", []byte(nil))
	f.Fuzz(func(t *testing.T, m, p uint8, query, contentType string, body []byte) {
		method, path := fuzzMethods[int(m)%len(fuzzMethods)], fuzzPaths[int(p)%len(fuzzPaths)]
		req := fuzzRequest(method, path, query, contentType, body)
		rec := httptest.NewRecorder()
		fuzzGatewayOff().ServeHTTP(rec, req)
		b := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s (%q, %q) → %d %s: a server error with every defect off", method, path, query, contentType, body, rec.Code, suite.Excerpt(b))
		}
		if method != http.MethodHead && rec.Header().Get("Content-Type") == "application/json" && !json.Valid(b) {
			t.Fatalf("%s %s?%s → %d: invalid JSON %s", method, path, query, rec.Code, suite.Excerpt(b))
		}
	})
}

func queryInt(query, name string) (int64, bool) {
	v, ok := reqparse.QueryFirst(query, name)
	if !ok {
		return 0, false
	}
	n, ok := reqparse.ParseInt(v)
	if !ok || !n.IsInt64() {
		return 1 << 62, ok
	}
	return n.Int64(), true
}

// fuzzRouting is a gateway proxying every category to a recording upstream.
var fuzzRouting = sync.OnceValue(func() *routingRig {
	rig := &routingRig{hits: map[string]int{}}
	env := map[string]string{}
	for _, c := range catalogue.Categories {
		name := c.Name
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rig.mu.Lock()
			rig.hits[name]++
			rig.mu.Unlock()
			w.WriteHeader(299)
		}))
		env[c.Upstream] = srv.URL
	}
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, observe.Discard())
	if err != nil {
		panic(err)
	}
	rig.handler = built.Handler
	return rig
})

type routingRig struct {
	handler http.Handler
	mu      sync.Mutex
	hits    map[string]int
}

// No path reaches an upstream other than its own category's, and a path
// outside every category reaches none.
func FuzzGatewayRouting(f *testing.F) {
	for _, s := range []string{"/security/x", "/security/../performance/x", "/securityx", "//security/x", "/%73ecurity/x",
		"/security%2F..%2Fperformance", "/performance", "/", "/openapi.yaml", "/response-conformance/%2e%2e/x", "/metrics"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !strings.HasPrefix(raw, "/") {
			raw = "/" + raw
		}
		u, err := url.ParseRequestURI(raw)
		if err != nil {
			t.Skip()
		}
		rig := fuzzRouting()
		rig.mu.Lock()
		defer rig.mu.Unlock()
		clear(rig.hits)
		req := &http.Request{Method: "GET", URL: u, Header: http.Header{}, Host: "fuzz", RemoteAddr: "127.0.0.1:1",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}
		rec := httptest.NewRecorder()
		rig.mu.Unlock()
		rig.handler.ServeHTTP(rec, req)
		rig.mu.Lock()
		var owner string
		for _, c := range catalogue.Categories {
			if u.Path == c.Prefix || strings.HasPrefix(u.Path, c.Prefix+"/") {
				owner = c.Name
			}
		}
		for name, n := range rig.hits {
			if n > 0 && name != owner {
				t.Fatalf("%q (path %q) reached the %s upstream; its owner is %q", raw, u.Path, name, owner)
			}
		}
		if owner != "" && rec.Code != 299 && rec.Code != http.StatusBadGateway {
			t.Fatalf("%q: %d, want the %s upstream's answer", raw, rec.Code, owner)
		}
		if owner == "" && rec.Code == 299 {
			t.Fatalf("%q belongs to no category but was proxied", raw)
		}
	})
}
