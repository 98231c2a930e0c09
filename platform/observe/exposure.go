package observe

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
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
// reset), for a proxied request, whose answer is read without the
// ResponseWriter: so that the exposure it triggers can say which request
// was first.
func WithRequestIndex(ctx context.Context, n uint64) context.Context {
	return context.WithValue(ctx, requestIndexKey{}, n)
}

// RequestIndex is the index WithRequestIndex put on ctx; 0 when none.
func RequestIndex(ctx context.Context) uint64 {
	n, _ := ctx.Value(requestIndexKey{}).(uint64)
	return n
}

// RequestIndexOf is the index of the request w answers: the gateway's
// writer under w says it (a method RequestIndex), so that numbering a
// request costs no copy of it. 0 when none does.
func RequestIndexOf(w http.ResponseWriter) uint64 {
	for {
		switch v := w.(type) {
		case interface{ RequestIndex() uint64 }:
			return v.RequestIndex()
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return 0
		}
	}
}

// ExposureLog keeps the exposure of every defect triggered in (or through)
// this process. Safe for concurrent use; recording takes no lock once a
// defect has its slot, and its count is a sharded Counter, so requests on
// many cores triggering the same defect do not wait for each other.
type ExposureLog struct {
	mu    sync.Mutex // making a slot; a reset
	since atomic.Int64
	slots sync.Map // defect → *exposureSlot; never removed, a reset zeroes them
}

// exposureSlot is one defect's exposure: times in Unix nanoseconds, 0 for
// none.
type exposureSlot struct {
	count   *Counter
	last    *Max // every request that triggers it offers its time
	first   atomic.Int64
	index   atomic.Uint64
	example atomic.Pointer[example]
}

// example is the first request recorded for a defect.
type example struct{ method, target, requestID string }

// NewExposureLog starts an empty log.
func NewExposureLog() *ExposureLog {
	l := &ExposureLog{}
	l.since.Store(time.Now().UnixNano())
	return l
}

func (l *ExposureLog) slot(defect string) *exposureSlot {
	if s, ok := l.slots.Load(defect); ok {
		return s.(*exposureSlot)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, _ := l.slots.LoadOrStore(defect, &exposureSlot{count: NewCounter(), last: NewMax()})
	return s.(*exposureSlot)
}

// Record notes that the request r (with the given ID and index among the
// instance's requests, 0 when not known) triggered defect at time at.
func (l *ExposureLog) Record(defect string, r *http.Request, requestID string, index uint64, at time.Time) {
	l.slot(defect).record(r, requestID, index, at)
}

func (s *exposureSlot) record(r *http.Request, requestID string, index uint64, at time.Time) {
	if s.example.Load() == nil {
		target := r.URL.RequestURI()
		if len(target) > maxExampleTarget {
			target = target[:maxExampleTarget] + "…"
		}
		s.example.CompareAndSwap(nil, &example{method: r.Method, target: target, requestID: requestID})
	}
	s.count.Add(1)
	// Concurrent requests are recorded as they end, each with the time
	// its planted code ran: the first is the earliest, and the one that
	// arrived first.
	ns := at.UnixNano()
	s.last.Offer(ns)
	for old := s.first.Load(); (old == 0 || ns < old) && !s.first.CompareAndSwap(old, ns); old = s.first.Load() {
	}
	for old := s.index.Load(); index != 0 && (old == 0 || index < old) && !s.index.CompareAndSwap(old, index); old = s.index.Load() {
	}
}

// Snapshot returns when the log began and a copy of it, by defect.
func (l *ExposureLog) Snapshot() (since time.Time, seen map[string]Exposed) {
	seen = map[string]Exposed{}
	l.slots.Range(func(k, v any) bool {
		s := v.(*exposureSlot)
		n := s.count.Load()
		if n == 0 {
			return true
		}
		e := Exposed{Count: n, Index: s.index.Load()}
		if ns := s.first.Load(); ns != 0 {
			e.First = time.Unix(0, ns)
		}
		if ns := s.last.Load(); ns != 0 {
			e.Last = time.Unix(0, ns)
		}
		if ex := s.example.Load(); ex != nil {
			e.Method, e.Target, e.RequestID = ex.method, ex.target, ex.requestID
		}
		seen[k.(string)] = e
		return true
	})
	return time.Unix(0, l.since.Load()), seen
}

// Reset empties the log and returns when it begins again. A request
// recorded while it runs counts from then on, or not at all.
func (l *ExposureLog) Reset() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.since.Store(now.UnixNano())
	l.slots.Range(func(_, v any) bool {
		s := v.(*exposureSlot)
		s.count.Reset()
		s.first.Store(0)
		s.last.Reset()
		s.index.Store(0)
		s.example.Store(nil)
		return true
	})
	return now
}

// Planted is one planted defect of a service, as its route serves it.
type Planted struct {
	defect    string
	triggered *Counter      // showcase_defect_triggered_total{defect}: read when scraped
	slot      *exposureSlot // nil without an exposure log
}

// Planted returns the exposure of the named defect in this service; its
// counter is exported from now on, at zero until the defect is triggered.
// The counter is a sharded Counter read when Prometheus scrapes it: a
// request that triggers the defect adds to a shard of it, not to a line
// every core writes.
func (in *Instruments) Planted(defect string) *Planted {
	in.plantedMu.Lock()
	defer in.plantedMu.Unlock()
	if p, ok := in.planted[defect]; ok {
		return p
	}
	// A second service of the same name in one registry (tests) shares
	// the first one's counter, as it shared its series before.
	c := Register(in.Registerer, &countCollector{c: NewCounter(), desc: prometheus.NewDesc("showcase_defect_triggered_total",
		"Requests that triggered a planted defect: its planted code ran and produced its symptom. Never reset.",
		nil, prometheus.Labels{"defect": defect})})
	p := &Planted{defect: defect, triggered: c.c}
	if in.exposure != nil {
		p.slot = in.exposure.slot(defect)
	}
	if in.planted == nil {
		in.planted = map[string]*Planted{}
	}
	in.planted[defect] = p
	return p
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
func (p *Planted) count(r *http.Request, requestID string, index uint64, at time.Time) {
	p.triggered.Add(1)
	if p.slot != nil {
		p.slot.record(r, requestID, index, at)
	}
}

// countCollector exports a Counter as a Prometheus counter, read when
// scraped.
type countCollector struct {
	c    *Counter
	desc *prometheus.Desc
}

func (cc *countCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cc.desc }

func (cc *countCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(cc.desc, prometheus.CounterValue, float64(cc.c.Load()))
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
