package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	postman "github.com/rbretecher/go-postman-collection"

	"github.com/defectshowcase/showcase/catalogue"
)

func newSite(t *testing.T) *Site {
	t.Helper()
	s, err := New(catalogue.All(), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(s *Site, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

var assetRef = regexp.MustCompile(`(?:href|src)="(assets/[^"]+)"`)

// Every asset a page names is served, with its type, and cached for good.
func TestPagesAndTheirAssets(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for _, page := range []string{PathFront, PathDocs} {
		w := get(s, http.MethodGet, page)
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" || w.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("%s: %d %v", page, w.Code, w.Header())
		}
		for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if w.Header().Get(h) == "" {
				t.Errorf("%s: no %s", page, h)
			}
		}
		if strings.Contains(w.Body.String(), "{asset:") || strings.Contains(w.Body.String(), "{categories}") {
			t.Errorf("%s: a placeholder was left", page)
		}
		if strings.Contains(w.Body.String(), "<script>") || strings.Contains(w.Body.String(), " style=") {
			t.Errorf("%s: inline script or style, which the CSP forbids", page)
		}
		refs := assetRef.FindAllStringSubmatch(w.Body.String(), -1)
		if len(refs) < 3 {
			t.Fatalf("%s names %d assets", page, len(refs))
		}
		for _, ref := range refs {
			a := get(s, http.MethodGet, "/"+ref[1])
			if a.Code != 200 || a.Body.Len() == 0 || a.Header().Get("Cache-Control") != immutable {
				t.Errorf("%s → %s: %d, %d bytes, %v", page, ref[1], a.Code, a.Body.Len(), a.Header())
			}
			if route := s.Route("/" + ref[1]); route != RouteAssets {
				t.Errorf("route of %s: %q", ref[1], route)
			}
		}
	}
}

// Swagger UI's files go out gzipped to clients that take it, and plain,
// the same bytes decompressed, to those that do not.
func TestGzipNegotiation(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	bundle := "/assets/swagger-ui-bundle-" + SwaggerUIVersion + ".js"
	plain := get(s, http.MethodGet, bundle)
	if plain.Header().Get("Content-Encoding") != "" || !strings.Contains(plain.Body.String(), "SwaggerUIBundle") {
		t.Fatalf("without Accept-Encoding: %v, %d bytes", plain.Header(), plain.Body.Len())
	}
	for _, tc := range []struct {
		accept string
		gz     bool
	}{
		{"gzip", true}, {"gzip, deflate, br, zstd", true}, {"br;q=1.0, GZIP;q=0.5", true}, {"*", true},
		{"gzip;q=0", false}, {"gzip; q=0.000", false}, {"identity", false}, {"*;q=0", false},
		{"gzip;q=0, *", false}, {"deflate", false}, {"", false},
	} {
		w := get(s, http.MethodGet, bundle, "Accept-Encoding", tc.accept)
		if got := w.Header().Get("Content-Encoding") == "gzip"; got != tc.gz {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.accept, got, tc.gz)
			continue
		}
		if w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", tc.accept, w.Header().Get("Vary"))
		}
		body := w.Body.Bytes()
		if tc.gz {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(body, plain.Body.Bytes()) {
			t.Errorf("Accept-Encoding %q: the content differs", tc.accept)
		}
	}
}

// A cached copy is revalidated with its ETag: 304, no body.
func TestConditionalRequests(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for _, target := range []string{PathFront, PathDocs, "/assets/swagger-ui-" + SwaggerUIVersion + ".css"} {
		for _, enc := range []string{"", "gzip"} {
			first := get(s, http.MethodGet, target, "Accept-Encoding", enc)
			etag := first.Header().Get("ETag")
			if etag == "" {
				t.Fatalf("%s: no ETag", target)
			}
			for _, inm := range []string{etag, `"x", ` + etag, "W/" + etag, "*"} {
				w := get(s, http.MethodGet, target, "Accept-Encoding", enc, "If-None-Match", inm)
				if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
					t.Errorf("%s If-None-Match %s: %d, %d bytes", target, inm, w.Code, w.Body.Len())
				}
			}
			if w := get(s, http.MethodGet, target, "Accept-Encoding", enc, "If-None-Match", `"stale"`); w.Code != 200 || w.Body.Len() == 0 {
				t.Errorf("%s with a stale ETag: %d", target, w.Code)
			}
		}
	}
	gz := get(s, http.MethodGet, "/assets/swagger-ui-"+SwaggerUIVersion+".css", "Accept-Encoding", "gzip").Header().Get("ETag")
	id := get(s, http.MethodGet, "/assets/swagger-ui-"+SwaggerUIVersion+".css").Header().Get("ETag")
	if gz == id {
		t.Errorf("the gzipped and plain representations share the ETag %s", gz)
	}
}

// Methods, unknown files and encoded paths follow the showcase's rules.
func TestMethodsAndUnknownPaths(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if w := get(s, http.MethodHead, PathFront); w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "0" {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
	if w := get(s, http.MethodOptions, PathDocs); w.Code != 200 || w.Header().Get("Allow") != allow || w.Body.Len() != 0 {
		t.Errorf("OPTIONS: %d %v", w.Code, w.Header())
	}
	for _, m := range []string{http.MethodPost, http.MethodDelete, "FROBNICATE"} {
		if w := get(s, m, PathFront); w.Code != 405 || w.Header().Get("Allow") != allow || w.Body.String() != `{"error":"Method Not Allowed"}` {
			t.Errorf("%s: %d %s", m, w.Code, w.Body)
		}
	}
	for _, target := range []string{"/assets/", "/assets/nothing.js", "/docs/", "/assets/swagger-ui-bundle.js", "/assets/..%2Fdocs"} {
		if w := get(s, http.MethodGet, target); w.Code != 404 || w.Body.String() != `{"error":"Not Found"}` {
			t.Errorf("%s: %d %s", target, w.Code, w.Body)
		}
		if route := s.Route(target); route != "" {
			t.Errorf("%s: route %q", target, route)
		}
	}
}

// The front page lists the ten endpoints, each with its defect and a
// runnable example, escaped.
func TestFrontPageCatalogue(t *testing.T) {
	t.Parallel()
	body := get(newSite(t), http.MethodGet, PathFront).Body.String()
	n := 0
	for _, ep := range catalogue.Endpoints {
		n++
		ex := catalogue.DefectOf(ep.Defect).Triggers[0]
		for _, want := range []string{`id="endpoint-` + itoa(ep.N) + `"`, string(ep.Defect), ep.Path, `data-expect="` + itoa(ex.Status) + `"`,
			`data-target="` + strings.TrimPrefix(ep.Path, "/")} {
			if !strings.Contains(body, want) {
				t.Errorf("endpoint %d: no %q", ep.N, want)
			}
		}
	}
	if !strings.Contains(body, "<code>X-API-Key</code>") {
		t.Error("the symptom's code spans are not rendered")
	}
	if n != 10 || strings.Count(body, `<button type="button" class="try"`) != 10 {
		t.Errorf("%d endpoints, %d buttons", n, strings.Count(body, `class="try"`))
	}
	if !strings.Contains(body, `data-body="{&#34;number&#34;:&#34;4111-1111&#34;}"`) {
		t.Error("a JSON example body is not escaped into its attribute")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// With defects switched off the front page says so, and each example
// promises the conformant answer.
func TestFrontPageWithDefectsOff(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.None(), catalogue.All().Without(catalogue.CONF04)} {
		s, err := New(active, "")
		if err != nil {
			t.Fatal(err)
		}
		body := get(s, http.MethodGet, PathFront).Body.String()
		for _, ep := range catalogue.Endpoints {
			ex := catalogue.DefectOf(ep.Defect).Triggers[0]
			status, badge := ex.Status, `<span class="defect">`+string(ep.Defect)+`</span>`
			if !active.Active(ep.Defect) {
				status, badge = ex.OffStatus, `<span class="defect off">`+string(ep.Defect)+` switched off</span>`
			}
			if !strings.Contains(body, badge) || !strings.Contains(body, `data-expect="`+itoa(status)+`"`) {
				t.Errorf("%s, endpoint %d: want %s and expect %d", active, ep.N, badge, status)
			}
		}
		if !strings.Contains(body, "DEFECTS="+active.String()) {
			t.Errorf("%s: the page does not say which defects are active", active)
		}
	}
}

// The pages and assets come from memory: no work per request beyond
// writing the bytes.
func BenchmarkPages(b *testing.B) {
	s, err := New(catalogue.All(), "")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, target, encoding string }{
		{"front", PathFront, ""},
		{"docs", PathDocs, ""},
		{"bundle-gzip", "/assets/swagger-ui-bundle-" + SwaggerUIVersion + ".js", "gzip"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bc.target, nil)
			r.Header.Set("Accept-Encoding", bc.encoding)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				s.ServeHTTP(w, r)
				if w.code != 200 {
					b.Fatal(w.code)
				}
			}
		})
	}
}

type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }

// The collections hold every trigger of the catalogue, each with the answer
// its variant expects, in the description and in a test script; the
// Postman files read back with the library that wrote them.
func TestCollections(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	triggers := 0
	for _, d := range catalogue.Defects {
		triggers += len(d.Triggers)
	}
	front := get(s, http.MethodGet, PathFront).Body.String()
	for _, name := range Collections() {
		rec := get(s, http.MethodGet, CollectionsPrefix+name)
		if rec.Code != 200 {
			t.Fatalf("%s: %d", name, rec.Code)
		}
		if !strings.Contains(front, `href="collections/`+name+`" download`) {
			t.Errorf("the front page does not offer %s", name)
		}
		on := strings.Contains(name, "defects-on")
		body := rec.Body.String()
		if strings.HasSuffix(name, ".http") {
			if n := strings.Count(body, "\n### "); n != triggers || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("%s: %d requests (want %d), %s", name, n, triggers, rec.Header().Get("Content-Type"))
			}
			for _, d := range catalogue.Defects {
				ep := catalogue.EndpointOf(d.ID)
				for _, tr := range d.Triggers {
					status := tr.OffStatus
					if on {
						status = tr.Status
					}
					if !strings.Contains(body, fmt.Sprintf("expect %d", status)) || !strings.Contains(body, ep.Method+" {{baseUrl}}"+d.Target(tr)+"\n") {
						t.Errorf("%s: no request %s %s expecting %d", name, ep.Method, d.Target(tr), status)
					}
				}
			}
			continue
		}
		c, err := postman.ParseCollection(strings.NewReader(body))
		if err != nil || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v (%s)", name, err, rec.Header().Get("Content-Type"))
		}
		var items []*postman.Items
		for _, folder := range c.Items {
			items = append(items, folder.Items...)
		}
		if len(c.Items) != len(catalogue.Categories) || len(items) != triggers || c.Variables[0].Key != "baseUrl" {
			t.Fatalf("%s: %d folders, %d requests (want %d), variables %+v", name, len(c.Items), len(items), triggers, c.Variables)
		}
		i := 0
		for _, cat := range catalogue.Categories {
			for _, ep := range catalogue.EndpointsOf(cat.Name) {
				d := catalogue.DefectOf(ep.Defect)
				for _, tr := range d.Triggers {
					status := tr.OffStatus
					if on {
						status = tr.Status
					}
					it := items[i]
					i++
					desc, _ := it.Request.Description.(string)
					if it.Request.URL.Raw != "{{baseUrl}}"+d.Target(tr) || string(it.Request.Method) != ep.Method ||
						!strings.HasPrefix(desc, fmt.Sprintf("Expect %d", status)) ||
						!strings.Contains(strings.Join(it.Events[0].Script.Exec, ""), fmt.Sprintf("have.status(%d)", status)) ||
						(tr.Body != "") != (it.Request.Body != nil && it.Request.Body.Raw == tr.Body) {
						t.Errorf("%s: %s is not the trigger %s %s expecting %d", name, it.Name, ep.Method, d.Target(tr), status)
					}
				}
			}
		}
	}
}

// The collections name the instance they were fetched from (or PUBLIC_URL),
// not always localhost:8080, and their ETag follows.
func TestCollectionsNameTheirInstance(t *testing.T) {
	t.Parallel()
	own, err := New(catalogue.All(), "")
	if err != nil {
		t.Fatal(err)
	}
	public, err := New(catalogue.All(), "https://showcase.example")
	if err != nil {
		t.Fatal(err)
	}
	get := func(s *Site, host, file string) (string, string) {
		req := httptest.NewRequest("GET", "http://"+host+CollectionsPrefix+file, nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%s: %d", file, rec.Code)
		}
		return rec.Body.String(), rec.Header().Get("Etag")
	}
	for _, c := range []struct {
		site       *Site
		host, want string
	}{{own, "localhost:8080", "http://localhost:8080"}, {own, "10.1.2.3:18080", "http://10.1.2.3:18080"}, {public, "localhost:8080", "https://showcase.example"}} {
		body, _ := get(c.site, c.host, "showcase-defects-on.http")
		if !strings.Contains(body, "@baseUrl = "+c.want+"\n") {
			t.Errorf("%s: the .http file does not name %s", c.host, c.want)
		}
		body, _ = get(c.site, c.host, "showcase-defects-on.postman_collection.json")
		var coll struct {
			Variable []struct{ Key, Value string } `json:"variable"`
		}
		if err := json.Unmarshal([]byte(body), &coll); err != nil || len(coll.Variable) != 1 || coll.Variable[0].Value != c.want {
			t.Errorf("%s: the Postman collection's baseUrl is %+v (%v), want %s", c.host, coll.Variable, err, c.want)
		}
	}
	_, a := get(own, "localhost:8080", "showcase-defects-on.http")
	_, b := get(own, "10.1.2.3:18080", "showcase-defects-on.http")
	if a == b {
		t.Errorf("the same ETag %s for files that name different instances", a)
	}
}

// A collection is rendered at its first request, once, however many
// requests ask at the same time: each gets the same bytes and the same
// ETag, the one its bytes hash to (and the instance's base URL).
func TestCollectionsRenderedOnceOnFirstUse(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	name := CollectionsPrefix + collectionFiles[0].name
	if r := s.pages[name]; r.plain != nil || r.etag != "" {
		t.Fatal("the collection was rendered at start")
	}
	recs := make([]*httptest.ResponseRecorder, 16)
	var wg sync.WaitGroup
	for i := range recs {
		wg.Go(func() { recs[i] = get(s, http.MethodGet, name) })
	}
	wg.Wait()
	want, _, err := collectionFiles[0].render()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want)
	for i, rec := range recs {
		if rec.Code != http.StatusOK || rec.Body.String() != recs[0].Body.String() || rec.Header().Get("Etag") != recs[0].Header().Get("Etag") ||
			!strings.HasPrefix(rec.Header().Get("Etag"), `"`+hex.EncodeToString(sum[:])[:20]+"-") {
			t.Fatalf("request %d: %d, ETag %s, %d bytes: not the collection rendered once", i, rec.Code, rec.Header().Get("Etag"), rec.Body.Len())
		}
	}
}
