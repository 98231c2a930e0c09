// Package gateway presents the four categories under one base URL and serves
// the declared contract. Each category is either proxied to an upstream
// service or, when no upstream is configured, served by the service's router
// in-process.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/contract"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway/web"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

// parseUpstreamURL reads a category's upstream URL: scheme, host and port
// only.
func parseUpstreamURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, errors.New("want an http(s) URL of scheme, host and port only, such as http://security-svc:8081")
	}
	u.Path = ""
	return u, nil
}

// parsePublicURL reads the instance's public base URL: scheme, host and
// perhaps a path, without a trailing slash.
func parsePublicURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New("want an http(s) URL of scheme, host and perhaps a path, such as https://showcase.example")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Handler serves one category: an Upstream or a service's own router. Ready
// reports whether it can serve.
type Handler interface {
	http.Handler
	Ready(ctx context.Context) error
}

// Gateway routes requests by the catalogue's category prefixes.
type Gateway struct {
	rows      []row
	contract  *contract.Views
	publicURL string // the base URL a contract with an absolute server names; "" for the request's own
	site      *web.Site
	own       http.Handler // the pages, the contract and unknown paths, logged and measured as the gateway's
	reach     *reachLog    // the requests each operation received
	cov       *coverageLog // what they covered of the contract
	mut       *mutants     // the contract mutants planted; nil without a mutant set
}

type row struct {
	name    string
	prefix  string
	handler Handler
}

// New builds the gateway from one handler per category name. in measures
// and logs what the gateway answers itself; each category's handler measures
// its own requests, so nothing is counted twice.
// publicURL, when not "", is the base URL the contract names when a tool
// asks for an absolute server (the request's own otherwise).
func New(handlers map[string]Handler, served *contract.Contract, publicURL string, active catalogue.Set, in *observe.Instruments) (*Gateway, error) {
	site, err := web.New(active, publicURL)
	if err != nil {
		return nil, fmt.Errorf("pages: %w", err)
	}
	views := served.Views()
	model, err := coverage.FromContract(served.JSON)
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	g := &Gateway{contract: views, publicURL: publicURL, site: site, reach: newReachLog(), cov: newCoverageLog(model), mut: newMutants(active, in)}
	for _, c := range catalogue.Categories {
		h, ok := handlers[c.Name]
		if !ok {
			return nil, fmt.Errorf("no handler for category %q", c.Name)
		}
		g.rows = append(g.rows, row{name: c.Name, prefix: c.Prefix, handler: h})
	}
	g.own = in.Middleware(g.ownRoute)(http.HandlerFunc(g.serveOwn))
	return g, nil
}

const contractAllow = "GET, HEAD, OPTIONS"

// ServeHTTP dispatches on the decoded path. A category's handler only knows
// that category's routes, so no path trick (dot segments, doubled or encoded
// slashes) can reach another category through it.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Only the gateway asks a service to name the defect a request
	// triggered; a client that asks gets nothing more for it.
	delete(r.Header, observe.HeaderReportTriggered)
	n := g.reach.received()
	path := r.URL.Path
	for _, rw := range g.rows {
		if strings.HasPrefix(path, rw.prefix) && (len(path) == len(rw.prefix) || path[len(rw.prefix)] == '/') {
			w, reached := g.reach.writer(w, r, n)
			if reached != nil {
				// The exposure the request triggers says which request it
				// was: the writer tells it (RequestIndex).
				if op := g.cov.byPath[r.URL.Path]; op != nil && reached.own {
					reached.cov = g.cov.start(&reached.covData, op, r)
				}
			} else {
				g.cov.undeclaredPaths.Add(1)
			}
			if ms := g.mutantsFor(reached, path); ms != nil {
				g.mut.serve(w, r, ms, rw.handler)
			} else {
				rw.handler.ServeHTTP(w, r)
			}
			if reached != nil {
				reached.done()
			}
			return
		}
	}
	g.cov.undeclaredPaths.Add(1)
	g.own.ServeHTTP(w, r)
}

// mutantsFor are the mutants planted on the operation a request with its
// method reached; nil for any other request, and always without a mutant
// set.
func (g *Gateway) mutantsFor(reached *reachWriter, path string) []catalogue.Mutant {
	if g.mut == nil || reached == nil || !reached.own {
		return nil
	}
	return g.mut.byPath[path]
}

// ownRoute is the route label of what the gateway answers itself.
func (g *Gateway) ownRoute(r *http.Request) string {
	if r.URL.RawPath != "" {
		return routes.Unmatched
	}
	if r.URL.Path == "/openapi.yaml" || r.URL.Path == "/openapi.json" {
		return r.URL.Path
	}
	if route := g.site.Route(r.URL.Path); route != "" {
		return route
	}
	return routes.Unmatched
}

func (g *Gateway) serveOwn(w http.ResponseWriter, r *http.Request) {
	switch route := g.ownRoute(r); route {
	case "/openapi.yaml", "/openapi.json":
		g.serveContract(w, r, route)
	case routes.Unmatched:
		routes.NotFound(w, r)
	default:
		g.site.ServeHTTP(w, r)
	}
}

// serveContract serves the contract in the view the query asks for:
// server=absolute names the instance's base URL as its server,
// security=defined leaves out the global requirement of the undefined
// api_key scheme. Without them it is the declared contract, byte for byte;
// other parameters are ignored.
func (g *Gateway) serveContract(w http.ResponseWriter, r *http.Request, route string) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		routes.Options200(w, contractAllow)
		return
	default:
		routes.MethodNotAllowed(w, contractAllow)
		return
	}
	var view contract.View
	q := r.URL.Query()
	for _, p := range []struct {
		name, value string
		set         *bool
	}{{"server", "absolute", &view.AbsoluteServer}, {"security", "defined", &view.DefinedSecurity}} {
		switch v, ok := q[p.name]; {
		case !ok:
		case len(v) == 1 && v[0] == p.value:
			*p.set = true
		default:
			respond.Error(w, http.StatusBadRequest, fmt.Sprintf("%s: the only value is %s", p.name, p.value))
			return
		}
	}
	c, err := g.contract.Render(view, web.BaseURL(g.publicURL, r))
	if err != nil { // a contract without servers: not one the gateway serves
		respond.Error(w, http.StatusInternalServerError, "the contract cannot be served in this view")
		return
	}
	if route == "/openapi.yaml" {
		respond.Raw(w, http.StatusOK, "application/yaml", c.YAML)
		return
	}
	respond.Raw(w, http.StatusOK, respond.ContentTypeJSON, c.JSON)
}

// Ready checks every category at once: an upstream answers its probe, an
// in-process service its own check.
func (g *Gateway) Ready(ctx context.Context) error {
	errs := make([]error, len(g.rows))
	var wg sync.WaitGroup
	for i, rw := range g.rows {
		wg.Go(func() {
			if err := rw.handler.Ready(ctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", rw.name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// categoryAttr is the log attribute naming a category.
func categoryAttr(name string) slog.Attr { return slog.String("category", name) }
