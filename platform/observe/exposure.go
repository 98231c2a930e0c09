package observe

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Exposure is a planted defect being reached: the planted code ran and
// produced its symptom. Each service counts it in the Prometheus counter
// showcase_defect_triggered_total{defect} (which never resets) and the
// process keeps, per defect, how often since when, and one example request,
// in its ExposureLog, which can be reset.
//
// Behind the gateway the services' logs are in other processes: the gateway
// asks each upstream, with HeaderReportTriggered on the request, to name on
// its answer (HeaderTriggered) the defect the request triggered, takes that
// header off and keeps the gateway's own log. So one process's log answers
// for everything that passed through it.
const (
	HeaderReportTriggered = "Showcase-Report-Triggered"
	HeaderTriggered       = "Showcase-Triggered"
)

// maxExampleTarget bounds the request target kept as an example.
const maxExampleTarget = 512

// Exposed is one defect's exposure since the log began or was reset.
type Exposed struct {
	Count       uint64
	First, Last time.Time
	// The first request that triggered it, and its index among the
	// instance's requests (0: not known).
	Method, Target, RequestID string
	Index                     uint64
}

type requestIndexKey struct{}

// WithRequestIndex marks a request's context with its index among the
// requests an instance received (the gateway numbers them from 1 at each
// reset), so that the exposure it triggers can say which request was
// first.
func WithRequestIndex(ctx context.Context, n uint64) context.Context {
	return context.WithValue(ctx, requestIndexKey{}, n)
}

// RequestIndex is the index WithRequestIndex put on ctx; 0 when none.
func RequestIndex(ctx context.Context) uint64 {
	n, _ := ctx.Value(requestIndexKey{}).(uint64)
	return n
}

// ExposureLog keeps the exposure of every defect triggered in (or through)
// this process. Safe for concurrent use.
type ExposureLog struct {
	mu    sync.Mutex
	since time.Time
	seen  map[string]*Exposed
}

// NewExposureLog starts an empty log.
func NewExposureLog() *ExposureLog {
	return &ExposureLog{since: time.Now(), seen: map[string]*Exposed{}}
}

// Record notes that the request r (with the given ID) triggered defect at
// time at.
func (l *ExposureLog) Record(defect string, r *http.Request, requestID string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.seen[defect]
	if e == nil {
		target := r.URL.RequestURI()
		if len(target) > maxExampleTarget {
			target = target[:maxExampleTarget] + "…"
		}
		e = &Exposed{First: at, Method: r.Method, Target: target, RequestID: requestID}
		l.seen[defect] = e
	}
	e.Count++
	if at.After(e.Last) {
		e.Last = at
	}
	// Concurrent requests are recorded as they end, each with the time
	// its planted code ran: the first is the earliest, and the one that
	// arrived first.
	if at.Before(e.First) {
		e.First = at
	}
	if n := RequestIndex(r.Context()); n != 0 && (e.Index == 0 || n < e.Index) {
		e.Index = n
	}
}

// Snapshot returns when the log began and a copy of it, by defect.
func (l *ExposureLog) Snapshot() (since time.Time, seen map[string]Exposed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen = make(map[string]Exposed, len(l.seen))
	for d, e := range l.seen {
		seen[d] = *e
	}
	return l.since, seen
}

// Reset empties the log and returns when it begins again.
func (l *ExposureLog) Reset() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.since = time.Now()
	clear(l.seen)
	return l.since
}

// Planted is one planted defect of a service, as its route serves it.
type Planted struct {
	defect    string
	triggered prometheus.Counter
	log       *ExposureLog
}

// Planted returns the exposure of the named defect in this service; its
// counter is exported from now on, at zero until the defect is triggered.
func (in *Instruments) Planted(defect string) *Planted {
	c := Register(in.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "showcase", Name: "defect_triggered_total",
		Help: "Requests that triggered a planted defect: its planted code ran and produced its symptom. Never reset.",
	}, []string{"defect"}))
	return &Planted{defect: defect, triggered: c.WithLabelValues(defect), log: in.exposure}
}

// Serve marks the request whose ResponseWriter is w as served by the
// planted variant of p's route; Middleware counts it if Triggered is called.
func (p *Planted) Serve(w http.ResponseWriter) {
	if rec := findRecorder(w); rec != nil {
		rec.planted = p
	}
}

// Triggered records that the planted defect of the request's route showed
// on this request. Call it where the planted code produces its symptom,
// before the answer is written. Outside a planted variant it does nothing.
func Triggered(w http.ResponseWriter, r *http.Request) {
	rec := findRecorder(w)
	if rec == nil || rec.planted == nil {
		return
	}
	if !rec.triggered {
		rec.triggered, rec.triggeredAt = true, time.Now()
	}
	if r.Header.Get(HeaderReportTriggered) != "" {
		w.Header().Set(HeaderTriggered, rec.planted.defect)
	}
}

// count is called once the request has ended; at is when the planted code
// produced its symptom (Triggered), so that no tool's report can show it
// before it was there to see.
func (p *Planted) count(r *http.Request, requestID string, at time.Time) {
	p.triggered.Inc()
	if p.log != nil {
		p.log.Record(p.defect, r, requestID, at)
	}
}

// findRecorder is Middleware's recorder under w, if any.
func findRecorder(w http.ResponseWriter) *recorder {
	for {
		switch v := w.(type) {
		case *recorder:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}
