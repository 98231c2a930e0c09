// Package gateway presents the four categories under one base URL and serves
// the declared contract. Each category is either proxied to an upstream
// service or, when no upstream is configured, served by the service's router
// in-process.
package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Category is a row of the prefix table.
type Category struct {
	Name   string // security, errors, conformance, performance
	Prefix string // the path prefix it owns
	Env    string // the variable naming its upstream URL
}

// Categories is the gateway's only prefix table.
var Categories = []Category{
	{Name: "security", Prefix: "/security", Env: "UPSTREAM_SECURITY"},
	{Name: "errors", Prefix: "/internal-server-errors", Env: "UPSTREAM_ERRORS"},
	{Name: "conformance", Prefix: "/response-conformance", Env: "UPSTREAM_CONFORMANCE"},
	{Name: "performance", Prefix: "/performance", Env: "UPSTREAM_PERFORMANCE"},
}

// ParseUpstreams reads each category's upstream URL from the environment;
// a category without one is served in-process.
func ParseUpstreams(env *server.Env) (map[string]*url.URL, error) {
	ups := map[string]*url.URL{}
	for _, c := range Categories {
		raw := env.String(c.Env, "")
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%s=%q: want an http(s) URL of scheme, host and port only, such as http://security-svc:8081", c.Env, raw)
		}
		u.Path = ""
		ups[c.Name] = u
	}
	return ups, nil
}

// Gateway routes requests by the prefix table.
type Gateway struct {
	rows     []row
	contract *Contract
}

type row struct {
	prefix  string
	handler http.Handler
}

// New builds the gateway from one handler per category name: a proxy from
// NewProxy or a service's own router.
func New(handlers map[string]http.Handler, contract *Contract) (*Gateway, error) {
	g := &Gateway{contract: contract}
	for _, c := range Categories {
		h, ok := handlers[c.Name]
		if !ok {
			return nil, fmt.Errorf("no handler for category %q", c.Name)
		}
		g.rows = append(g.rows, row{prefix: c.Prefix, handler: h})
	}
	return g, nil
}

const contractAllow = "GET, HEAD, OPTIONS"

// ServeHTTP dispatches on the decoded path. A category's handler only knows
// that category's routes, so no path trick (dot segments, doubled or encoded
// slashes) can reach another category through it.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	for _, rw := range g.rows {
		if strings.HasPrefix(path, rw.prefix) && (len(path) == len(rw.prefix) || path[len(rw.prefix)] == '/') {
			rw.handler.ServeHTTP(w, r)
			return
		}
	}
	if r.URL.RawPath == "" { // the contract lives at exact, unencoded paths
		switch path {
		case "/openapi.yaml":
			g.serveContract(w, r, "application/yaml", g.contract.YAML)
			return
		case "/openapi.json":
			g.serveContract(w, r, respond.ContentTypeJSON, g.contract.JSON)
			return
		}
	}
	routes.NotFound(w, r)
}

func (g *Gateway) serveContract(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		respond.Raw(w, http.StatusOK, contentType, body)
	case http.MethodOptions:
		routes.Options200(w, contractAllow)
	default:
		routes.MethodNotAllowed(w, contractAllow)
	}
}

// categoryAttr is the log attribute naming a category.
func categoryAttr(name string) slog.Attr { return slog.String("category", name) }
