// Package observe gives each service its request logging (httplog, one line
// per request), its Prometheus instruments and request IDs. It knows nothing
// of defects or of which services exist.
package observe

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// DurationBuckets resolve the range the showcase lives in: sub-millisecond
// answers up to endpoint 10 queued behind others, finely around the one
// second of endpoint 9.
var DurationBuckets = []float64{
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	0.75, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 30,
}

// StatusClientClosedRequest records a request whose client left before the
// answer (nginx's 499). Nobody receives it.
const StatusClientClosedRequest = 499

// Telemetry is what one process shares among the services it runs: one
// registry and one log output.
type Telemetry struct {
	Registry prometheus.Registerer
	Writer   io.Writer
	JSON     bool
	Level    slog.Level
}

// Discard is telemetry for tests: a private registry, no log output.
func Discard() *Telemetry {
	return &Telemetry{Registry: prometheus.NewRegistry(), Writer: io.Discard, JSON: true}
}

// Instruments are one service's logger and metrics.
type Instruments struct {
	Service string
	// Logger is for the service's own log lines, tagged with its name.
	Logger *slog.Logger
	// Registerer adds the service's label to what is registered on it.
	Registerer prometheus.Registerer

	http     *httplog.Logger
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

// Service returns the instruments of the named service. Its series carry a
// constant service label, so services sharing a registry (the embedded
// gateway) have the same series names as when each runs alone.
func (t *Telemetry) Service(name string) *Instruments {
	if t == nil {
		t = Discard()
	}
	w := t.Writer
	if w == nil {
		w = io.Discard
	}
	hl := httplog.NewLogger(name, httplog.Options{
		JSON:             t.JSON,
		LogLevel:         t.Level,
		Concise:          true, // one line per request, written when it ends
		Writer:           w,
		MessageFieldName: "msg",
		TimeFieldFormat:  time.RFC3339Nano,
	})
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"service": name}, t.Registry)
	labels := []string{"route", "method", "code"}
	return &Instruments{
		Service:    name,
		Logger:     hl.Logger,
		Registerer: reg,
		http:       hl,
		requests: Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "showcase", Name: "http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, labels)),
		duration: Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "showcase", Name: "http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern, method and status code.",
			Buckets: DurationBuckets,
		}, labels)),
		inFlight: Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "showcase", Name: "http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		})),
	}
}

// Register registers c, or returns the collector already registered under
// the same description (a second service instance in one registry).
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("observe: " + err.Error()) // a programming error: clashing metric definitions
	}
	return c
}

// Middleware logs and measures each request. routeOf names the request's
// route once the handler has run; it must return one of a bounded set of
// values, never the raw path.
func (in *Instruments) Middleware(routeOf func(*http.Request) string) func(http.Handler) http.Handler {
	logRequests := httplog.Handler(in.http)
	return func(next http.Handler) http.Handler {
		measured := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			in.inFlight.Inc()
			defer func() {
				in.inFlight.Dec()
				route := routeOf(r)
				code := statusOf(w, r)
				httplog.LogEntrySetField(r.Context(), "route", slog.StringValue(route))
				labels := prometheus.Labels{"route": route, "method": Method(r.Method), "code": strconv.Itoa(code)}
				in.requests.With(labels).Inc()
				in.duration.With(labels).Observe(time.Since(start).Seconds())
			}()
			next.ServeHTTP(w, r)
		})
		return RequestID(logRequests(measured))
	}
}

// SetLogField adds a field to the request's one log line.
func SetLogField(ctx context.Context, key, value string) {
	httplog.LogEntrySetField(ctx, key, slog.StringValue(value))
}

// statusOf is the status the handler wrote; 499 when it wrote nothing
// because the client left, 200 when it wrote nothing otherwise (net/http's
// implicit answer).
func statusOf(w http.ResponseWriter, r *http.Request) int {
	if ww, ok := w.(middleware.WrapResponseWriter); ok && ww.Status() != 0 {
		return ww.Status()
	}
	if r.Context().Err() != nil {
		return StatusClientClosedRequest
	}
	return http.StatusOK
}

// Method is the method as a label: the standard ones as they are, anything
// else as OTHER, so invented methods cannot add series.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
