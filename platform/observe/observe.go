// Package observe gives each service its request logging (httplog, one line
// per request), its Prometheus instruments and request IDs. It knows nothing
// of defects or of which services exist.
package observe

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

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
	// Exposure is the process's log of triggered defects; nil, each
	// service counts its defects in Prometheus alone.
	Exposure *ExposureLog
	// Requests is which requests get their line in the log.
	Requests LogRequests
}

// LogRequests is which requests are logged, one line each when they end.
type LogRequests int

const (
	// LogErrors logs the requests answered with a 5xx (the planted crashes
	// and failures among them): the default, as a line per request would
	// cost a fifth of a request's CPU at load-test rates and fill a disk
	// with what the metrics and the exposure log already count.
	LogErrors LogRequests = iota
	// LogAll logs every request: for reading along with a tool locally.
	LogAll
	// LogNone logs no request.
	LogNone
)

// UnmarshalText reads all, errors or none.
func (l *LogRequests) UnmarshalText(b []byte) error {
	switch string(b) {
	case "errors":
		*l = LogErrors
	case "all":
		*l = LogAll
	case "none":
		*l = LogNone
	default:
		return errors.New("want all, errors or none")
	}
	return nil
}

// MarshalText is all, errors or none.
func (l LogRequests) MarshalText() ([]byte, error) {
	return []byte([...]string{"errors", "all", "none"}[l]), nil
}

// Discard is telemetry for tests: a private registry, no log output.
func Discard() *Telemetry {
	return &Telemetry{Registry: prometheus.NewRegistry(), Writer: io.Discard, JSON: true, Exposure: NewExposureLog()}
}

// Instruments are one service's logger and metrics.
type Instruments struct {
	Service string
	// Logger is for the service's own log lines, tagged with its name.
	Logger *slog.Logger
	// Registerer adds the service's label to what is registered on it.
	Registerer prometheus.Registerer

	logRequests LogRequests
	metrics     *requestMetrics
	exposure    *ExposureLog
	plantedMu   sync.Mutex
	planted     map[string]*Planted // by defect: one counter each
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
	// Text for reading locally is httplog's pretty handler. JSON is slog's
	// own handler, without httplog's ReplaceAttr hook: a hook takes every
	// attribute off slog's fast path, at a cost per request.
	logger := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: t.Level})).With(slog.String("service", name))
	if !t.JSON {
		logger = httplog.NewLogger(name, httplog.Options{JSON: false, LogLevel: t.Level, Writer: w, MessageFieldName: "msg"}).Logger
	}
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"service": name}, t.Registry)
	return &Instruments{
		Service:     name,
		Logger:      logger,
		Registerer:  reg,
		exposure:    t.Exposure,
		logRequests: t.Requests,
		metrics:     Register(reg, newRequestMetrics(DurationBuckets)),
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

// DefectActive is the gauge showcase_defect_active{defect}: 1 while a
// planted defect is active, 0 once it is switched off.
func DefectActive(reg prometheus.Registerer) *prometheus.GaugeVec {
	return Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "showcase", Name: "defect_active",
		Help: "Whether a planted defect is active (1) or switched off with DEFECTS (0).",
	}, []string{"defect"}))
}

// Middleware logs and measures each request. routeOf names the request's
// route once the handler has run; it must return one of a bounded set of
// values, never the raw path.
//
// The log line is written with one LogAttrs call when the request ends:
// httplog's request logger builds it through three With calls per request,
// each cloning a handler, which cost more CPU than the request itself.
func (in *Instruments) Middleware(routeOf func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &recorder{StatusRecorder: StatusRecorder{ResponseWriter: w}, id: requestID(w, r), start: time.Now()}
			in.metrics.started.Add(1)
			defer in.end(r, rec, routeOf)
			next.ServeHTTP(rec, r)
		})
	}
}

// end counts, and logs, a request once its handler has returned (or
// panicked: a deferred call).
func (in *Instruments) end(r *http.Request, rec *recorder, routeOf func(*http.Request) string) {
	in.metrics.finished.Add(1)
	took := time.Since(rec.start)
	route, code := routeOf(r), rec.Code(r)
	in.metrics.observe(seriesKey{route, Method(r.Method), code}, took)
	if rec.triggered {
		rec.planted.count(r, rec.id, RequestIndexOf(rec.ResponseWriter), rec.triggeredAt)
	}
	in.logRequest(r, rec, route, code, took)
}

// logRequest writes the request's one line, if its requests are logged:
// 5xx at error level, the rest at info.
func (in *Instruments) logRequest(r *http.Request, rec *recorder, route string, code int, took time.Duration) {
	level := slog.LevelInfo
	if code >= 500 {
		level = slog.LevelError
	}
	if in.logRequests == LogNone || in.logRequests == LogErrors && level < slog.LevelError {
		return
	}
	ctx := r.Context()
	if !in.Logger.Enabled(ctx, level) {
		return
	}
	// Flat fields of builtin kinds keep slog on its fast path: groups and
	// floats (slog writes those through encoding/json) cost per request.
	var buf [11]slog.Attr
	attrs := append(buf[:0],
		slog.String("requestID", rec.id),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("path", r.URL.Path),
		slog.Int("status", code),
		slog.Int("bytes", rec.bytes),
		slog.Duration("duration", took), // nanoseconds in JSON, "1.2ms" in text
		slog.String("remoteIP", r.RemoteAddr),
	)
	attrs = append(attrs, rec.fields...)
	if rec.triggered { // built only for a line that is written
		attrs = append(attrs, slog.String("defect", rec.planted.defect))
	}
	in.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// StatusRecorder remembers the status and size of what is written through it.
type StatusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

// WriteHeader records the first final status: a 1xx (a proxied 100
// Continue) is informational, and the answer's status comes after it.
func (w *StatusRecorder) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records the implicit 200 and the size.
func (w *StatusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes).
func (w *StatusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Code is the status written; 499 when nothing was written because the
// client left, 200 when nothing was written otherwise (net/http's implicit
// answer).
func (w *StatusRecorder) Code(r *http.Request) int {
	switch {
	case w.status != 0:
		return w.status
	case r.Context().Err() != nil:
		return StatusClientClosedRequest
	default:
		return http.StatusOK
	}
}

// recorder is the StatusRecorder of a logged request, with its ID and the
// fields the handler added to its log line.
type recorder struct {
	StatusRecorder
	id     string
	start  time.Time
	fields []slog.Attr
	// planted is the defect of a planted variant's route; triggered, that
	// it showed.
	planted   *Planted
	triggered bool
	// triggeredAt is when the planted code produced its symptom: a
	// tool cannot have seen it before then.
	triggeredAt time.Time
}

// SetLogField adds a field to the request's one log line; w is the
// ResponseWriter the handler was given.
func SetLogField(w http.ResponseWriter, key, value string) {
	if rec := findRecorder(w); rec != nil {
		rec.fields = append(rec.fields, slog.String(key, value))
	}
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
