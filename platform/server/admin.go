package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/pprof"
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
type Admin struct {
	mux      *http.ServeMux
	ready    ReadyFunc
	stopping atomic.Bool
}

// NewAdmin serves reg's metrics and the health endpoints. ready may be nil.
// With profiling on it also serves Go's profiles under /debug/pprof/.
func NewAdmin(reg *prometheus.Registry, ready ReadyFunc, logger *slog.Logger, profiling bool) *Admin {
	a := &Admin{mux: http.NewServeMux(), ready: ready}
	if profiling {
		a.mux.HandleFunc("/debug/pprof/", pprof.Index)
		a.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		a.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		a.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	}
	a.mux.Handle("GET "+PathMetrics, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	}))
	a.mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		respond.JSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	a.mux.HandleFunc("GET "+PathReadyz, a.serveReady)
	a.mux.HandleFunc("/", routes.NotFound)
	return a
}

// Handle adds an endpoint of the program's own, such as the gateway's
// "GET /defects", by its ServeMux pattern (method and path).
func (a *Admin) Handle(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }

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

func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }
