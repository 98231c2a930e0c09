package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

// Paths of the admin listener.
const (
	PathMetrics = "/metrics"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
)

// ReadyFunc reports whether what a process depends on is ready.
type ReadyFunc func(ctx context.Context) error

// readyTimeout bounds one readiness check.
const readyTimeout = 2 * time.Second

// Admin is the admin listener's handler: /metrics, /healthz (alive) and
// /readyz (ready to serve: not shutting down, and ready's check passes).
// A browser's state-changing request from another origin is refused
// (net/http's CrossOriginProtection: a web page the operator visits cannot
// reset the exposure counts), and a known path asked with a method it does
// not serve answers 405 with Allow.
type Admin struct {
	mux      *http.ServeMux
	ready    ReadyFunc
	stopping atomic.Bool
	methods  map[string][]string // the methods of each path registered with one
	routes   map[string]*route   // the endpoints by pattern, so that a program can replace one of the admin's own
	handler  http.Handler
}

// route is an endpoint whose handler a program may replace before serving.
type route struct{ h http.Handler }

func (r *route) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.h.ServeHTTP(w, req) }

// NewAdmin serves reg's metrics and the health endpoints. ready may be nil.
// With profiling on it also serves Go's profiles under /debug/pprof/.
func NewAdmin(reg *prometheus.Registry, ready ReadyFunc, logger *slog.Logger, profiling bool) *Admin {
	a := &Admin{mux: http.NewServeMux(), ready: ready, methods: map[string][]string{}, routes: map[string]*route{}}
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.Error(w, http.StatusForbidden, "Forbidden: a cross-origin request may not change state here")
	}))
	a.handler = csrf.Handler(a.mux)
	if profiling {
		a.mux.HandleFunc("/debug/pprof/", pprof.Index)
		a.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		a.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		a.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	}
	a.Handle("GET "+PathMetrics, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	}))
	a.Handle("GET "+PathHealthz, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.JSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	}))
	a.Handle("GET "+PathReadyz, http.HandlerFunc(a.serveReady))
	a.Handle("GET "+PathCodeCoverage, CodeCoverage)
	a.mux.HandleFunc("/", a.fallback)
	return a
}

// Handle adds an endpoint of the program's own, such as the gateway's
// "GET /defects", by its ServeMux pattern (method and path), or replaces
// one of the admin's own by the same pattern (the gateway answers
// /coverage/code for a whole deployment too). Call it before serving.
func (a *Admin) Handle(pattern string, h http.Handler) {
	if r, ok := a.routes[pattern]; ok {
		r.h = h
		return
	}
	r := &route{h: h}
	a.routes[pattern] = r
	a.mux.Handle(pattern, r)
	if method, path, ok := strings.Cut(pattern, " "); ok {
		path = strings.TrimSuffix(path, "{$}") // "/{$}" is the path "/" alone
		a.methods[path] = append(a.methods[path], method)
	}
}

// fallback answers what no pattern matched: a known path with another
// method (405 with Allow, or OPTIONS' 200), else 404.
func (a *Admin) fallback(w http.ResponseWriter, r *http.Request) {
	methods, ok := a.methods[r.URL.Path]
	if !ok {
		routes.NotFound(w, r)
		return
	}
	allow := append([]string{http.MethodOptions}, methods...)
	if slices.Contains(methods, http.MethodGet) {
		allow = append(allow, http.MethodHead)
	}
	slices.Sort(allow)
	if r.Method == http.MethodOptions {
		routes.Options200(w, strings.Join(allow, ", "))
		return
	}
	routes.MethodNotAllowed(w, strings.Join(allow, ", "))
}

// Stopping makes /readyz answer 503 from now on.
func (a *Admin) Stopping() { a.stopping.Store(true) }

func (a *Admin) serveReady(w http.ResponseWriter, r *http.Request) {
	if a.stopping.Load() {
		respond.Value(w, http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
		return
	}
	if a.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := a.ready(ctx); err != nil {
			respond.Value(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
			return
		}
	}
	respond.JSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
}

func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }
