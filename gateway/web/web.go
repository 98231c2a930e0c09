// Package web serves the gateway's pages for people: a front page at / and
// Swagger UI at /docs. Everything is embedded in the binary and served from
// memory, gzipped when the client takes it; assets carry a content hash in
// their names and are cached for a year, pages revalidate by ETag. Swagger
// UI's files ship gzipped and are sent that way; our own are a few KB. Every URL
// in the pages is relative, so the pages also work behind a path prefix.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	swaggerui "github.com/swaggest/swgui/v5/static"

	"github.com/defectshowcase/showcase"
	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/routes"
)

// SwaggerUIVersion is the Swagger UI distribution that github.com/swaggest/swgui
// v1.8.5 ships (Apache-2.0).
const SwaggerUIVersion = "5.21.0"

// Paths and route labels of the pages.
const (
	PathFront    = "/"
	PathDocs     = "/docs"
	PathReadme   = "/README.md" // the project's README, as plain text
	AssetsPrefix = "/assets/"
	RouteAssets  = "/assets/{file}"
)

const allow = "GET, HEAD, OPTIONS"

//go:embed files
var files embed.FS

// Site holds every page and asset, rendered once.
type Site struct {
	pages     map[string]*resource // by path
	assets    map[string]*resource // by file name under AssetsPrefix
	publicURL string               // the base URL files that name one give; "" for the request's
}

// resource is one file. Swagger UI's files ship gzipped and stay in the
// binary until first asked for, so an idle gateway does not hold them; the
// plain bytes are made only if a client ever refuses gzip.
type resource struct {
	contentType  string
	cacheControl string
	page         bool // an HTML page: carries the security headers
	// names holds how the file names the instance's base URL, defaultBase
	// in its bytes, which each request's base replaces: "" when it names
	// none.
	names string

	etag, etagGz string

	gzOnce sync.Once
	gzFile string // in swaggerui.FS; "" when the resource is plain
	gz     []byte

	plainOnce sync.Once
	plain     []byte

	// render makes a collection's bytes at its first request (nil for
	// the others): most instances are never asked for one, and rendering
	// them at start kept the Postman library's code in memory for
	// nothing. Its etag is made with them.
	render func() ([]byte, string, error)
}

// pageCSP lets the pages load only from this origin. Swagger UI sets inline
// styles and shows inline images, nothing else inline runs.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// New renders the pages for the defects that are active, and indexes the
// assets. publicURL, when not "", is the base URL the collections name;
// otherwise each names the scheme and host it was fetched with.
func New(active catalogue.Set, publicURL string) (*Site, error) {
	s := &Site{pages: map[string]*resource{}, assets: map[string]*resource{}, publicURL: publicURL}
	names := map[string]string{} // logical name → file name under AssetsPrefix
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		if _, err := fs.Stat(swaggerui.FS, name+".gz"); err != nil {
			return nil, err
		}
		ext := path.Ext(name)
		file := strings.TrimSuffix(name, ext) + "-" + SwaggerUIVersion + ext // the version names the content
		names[name] = file
		s.assets[file] = &resource{contentType: contentTypeOf(name), cacheControl: immutable, gzFile: name + ".gz",
			etag: `"swagger-ui-` + SwaggerUIVersion + `"`, etagGz: `"swagger-ui-` + SwaggerUIVersion + `-gz"`}
	}
	own := func(name string, b []byte) {
		r := plainResource(contentTypeOf(name), immutable, b)
		ext := path.Ext(name)
		file := strings.TrimSuffix(name, ext) + "." + r.etag[1:11] + ext // the hash names the content
		names[name] = file
		s.assets[file] = r
	}
	favicon, err := fs.ReadFile(swaggerui.FS, "favicon-32x32.png")
	if err != nil {
		return nil, err
	}
	own("favicon.png", favicon)
	for _, name := range []string{"site.css", "front.js", "docs.js"} {
		b, err := files.ReadFile("files/" + name)
		if err != nil {
			return nil, err
		}
		own(name, b)
	}
	vars := []string{"{swagger-ui-version}", SwaggerUIVersion, "{categories}", categoriesHTML(active), "{collections}", collectionsHTML(),
		"{defects}", html.EscapeString(activeText(active))}
	for name, file := range names {
		vars = append(vars, "{asset:"+name+"}", file)
	}
	fill := strings.NewReplacer(vars...)
	for p, name := range map[string]string{PathFront: "front.html", PathDocs: "docs.html"} {
		b, err := files.ReadFile("files/" + name)
		if err != nil {
			return nil, err
		}
		page := fill.Replace(string(b))
		if i := strings.Index(page, "{asset:"); i >= 0 {
			return nil, errors.New(name + ": unknown asset at " + page[i:min(len(page), i+40)])
		}
		r := plainResource("text/html; charset=utf-8", "no-cache", []byte(page))
		r.page = true
		s.pages[p] = r
	}
	s.pages[PathReadme] = plainResource("text/plain; charset=utf-8", "no-cache", showcase.README)
	for _, f := range collectionFiles {
		r := &resource{contentType: f.contentType(), cacheControl: "no-cache", render: f.render}
		r.names = "text"
		if f.postman {
			r.names = "json"
		}
		s.pages[CollectionsPrefix+f.name] = r
	}
	return s, nil
}

const immutable = "public, max-age=31536000, immutable"

// plainResource is one of our own files, a few KB: sent as is.
func plainResource(contentType, cacheControl string, b []byte) *resource {
	sum := sha256.Sum256(b)
	r := &resource{contentType: contentType, cacheControl: cacheControl, etag: `"` + hex.EncodeToString(sum[:])[:20] + `"`}
	r.plainOnce.Do(func() { r.plain = b })
	return r
}

func (r *resource) gzBody() []byte {
	r.gzOnce.Do(func() {
		if r.gzFile != "" {
			r.gz = mustRead(fs.ReadFile(swaggerui.FS, r.gzFile))
		}
	})
	return r.gz
}

func (r *resource) plainBody() []byte {
	r.plainOnce.Do(func() {
		if r.render != nil {
			b, _, err := r.render()
			r.plain = mustRead(b, err)
			sum := sha256.Sum256(r.plain)
			r.etag = `"` + hex.EncodeToString(sum[:])[:20] + `"`
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.gzBody()))
		if err == nil {
			r.plain, err = io.ReadAll(zr)
		}
		r.plain = mustRead(r.plain, err)
	})
	return r.plain
}

// mustRead: the embedded files are part of the binary, and every test
// reads each of them; failing to is a broken build.
func mustRead(b []byte, err error) []byte {
	if err != nil {
		panic("web: embedded asset: " + err.Error())
	}
	return b
}

func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// Route is the route label of path when the site serves it, else "".
func (s *Site) Route(p string) string {
	if _, ok := s.pages[p]; ok {
		return p
	}
	if name, ok := strings.CutPrefix(p, AssetsPrefix); ok {
		if _, ok := s.assets[name]; ok {
			return RouteAssets
		}
	}
	return ""
}

// ServeHTTP serves a page or an asset; anything else is the showcase's 404.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := s.pages[r.URL.Path]
	if name, ok := strings.CutPrefix(r.URL.Path, AssetsPrefix); ok {
		res = s.assets[name]
	}
	if res == nil || r.URL.RawPath != "" {
		routes.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		routes.Options200(w, allow)
		return
	default:
		routes.MethodNotAllowed(w, allow)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{res.contentType}
	h["Cache-Control"] = []string{res.cacheControl}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	if res.page {
		h["Content-Security-Policy"] = []string{pageCSP}
		h["X-Frame-Options"] = []string{"DENY"}
		h["Referrer-Policy"] = []string{"no-referrer"}
		h["Cross-Origin-Opener-Policy"] = []string{"same-origin"}
	}
	if res.render != nil {
		res.plainBody() // a collection's etag is made with its bytes
	}
	body, etag := res.plainBody, res.etag
	if res.gzFile != "" {
		h["Vary"] = []string{"Accept-Encoding"}
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			body, etag = res.gzBody, res.etagGz
			h["Content-Encoding"] = []string{"gzip"}
		}
	}
	base := ""
	if res.names != "" {
		if base = s.baseURL(r); base != defaultBase {
			sum := sha256.Sum256([]byte(base))
			etag = etag[:len(etag)-1] + "-" + hex.EncodeToString(sum[:4]) + `"`
		}
	}
	h["Etag"] = []string{etag}
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b := body()
	if base != "" && base != defaultBase {
		b = bytes.ReplaceAll(b, []byte(defaultBase), escapeBase(base, res.names))
	}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

func (s *Site) baseURL(r *http.Request) string { return BaseURL(s.publicURL, r) }

// BaseURL is the instance's base URL for a document that names it:
// publicURL (PUBLIC_URL) when set, as behind a proxy that changes the host
// or the scheme, else the request's own scheme and host. X-Forwarded-*
// headers are not trusted for it.
func BaseURL(publicURL string, r *http.Request) string {
	if publicURL != "" {
		return publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// escapeBase writes base as the file's syntax needs it: inside a JSON
// string, or as text.
func escapeBase(base, syntax string) []byte {
	if syntax != "json" {
		return []byte(base)
	}
	q, _ := json.Marshal(base) // a string always encodes
	return q[1 : len(q)-1]
}

// acceptsGzip reads an Accept-Encoding value: gzip listed with a non-zero
// weight, or, when gzip is not named, * with one.
func acceptsGzip(v string) bool {
	star := false
	for part := range strings.SplitSeq(v, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		if k, val, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
				q = f
			}
		}
		switch coding {
		case "gzip":
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}

// matches reads If-None-Match: * or a list holding etag (weak or strong).
func matches(v, etag string) bool {
	for tag := range strings.SplitSeq(v, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// activeText says which defects are active, for the front page.
func activeText(active catalogue.Set) string {
	switch {
	case active.IsAll():
		return "All ten planted defects are active (DEFECTS=all, the default)."
	case active.IsMutants():
		// Never the seed: it names the set, and this page is the tool's.
		return "The ten planted defects are switched off, and contract mutants drawn from a seed are planted in their place: which ones is for the answer key on the admin port (docs/mutants.md)."
	case active == catalogue.None():
		return "Every planted defect is switched off (DEFECTS=none): this instance keeps its contract, and a tool should find nothing."
	}
	return "Only these planted defects are active: " + strings.ReplaceAll(active.String(), ",", ", ") + " (DEFECTS=" + active.String() + "); the others are switched off."
}

// categoriesHTML renders the front page's endpoint sections from the
// catalogue, each with its defect and its first trigger as a runnable
// example. The catalogue is ours, but every value is escaped all the same.
func categoriesHTML(active catalogue.Set) string {
	var b strings.Builder
	e := html.EscapeString
	for _, c := range catalogue.Categories {
		b.WriteString("<section class=\"category\">\n<h2>" + e(c.Title) + "</h2>\n")
		for _, ep := range catalogue.EndpointsOf(c.Name) {
			d := catalogue.DefectOf(ep.Defect)
			ex := d.Triggers[0]
			target := exampleTarget(ep, ex) // relative, so the page works behind a path prefix
			n := strconv.Itoa(ep.N)
			request := ep.Method + " /" + target
			body := ""
			if ex.Body != "" {
				request += " " + ex.Body
				body = ` data-body="` + e(ex.Body) + `"`
			}
			status, shows, state, badge := strconv.Itoa(ex.Status), ex.Shows, "defect", string(d.ID)
			if !active.Active(d.ID) {
				status, shows, state, badge = strconv.Itoa(ex.OffStatus), ex.OffShows, "defect off", string(d.ID)+" switched off"
			}
			b.WriteString(`<article class="endpoint" id="endpoint-` + n + `">
<h3><span class="n">` + n + `</span> ` + e(d.Title) + ` <span class="` + state + `">` + e(badge) + `</span></h3>
<p class="op"><code><span class="method">` + e(ep.Method) + `</span> ` + e(ep.Path) + `</code></p>
<p>` + inlineCode(d.Symptom) + `</p>
<div class="example">
<button type="button" class="try" data-method="` + e(ep.Method) + `" data-target="` + e(target) + `"` + body + ` data-expect="` + status + `">Send <code>` + e(request) + `</code></button>
<span class="expect">expect ` + status + `: ` + e(shows) + `</span>
<div class="result" aria-live="polite"><span class="status"></span><pre class="body"></pre></div>
</div>
</article>
`)
		}
		b.WriteString("</section>\n")
	}
	return b.String()
}

// collectionsHTML links the collection files, relative to the front page.
func collectionsHTML() string {
	links := make([]string, len(collectionFiles))
	for i, f := range collectionFiles {
		links[i] = f.link()
	}
	return strings.Join(links, " · ")
}

// exampleTarget is a trigger's request target relative to the front page.
func exampleTarget(ep catalogue.Endpoint, t catalogue.Trigger) string {
	return strings.TrimPrefix(ep.Path, "/") + t.Query
}

// inlineCode escapes text and renders its `code spans` as <code>.
func inlineCode(text string) string {
	parts := strings.Split(text, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + html.EscapeString(p) + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(html.EscapeString(p))
	}
	return b.String()
}
