package gateway

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
)

// reachLog counts the requests each operation of the contract received, as
// the gateway answers them: by the class of the status, counted when the
// status is written, before the client can read it, so /defects read after
// an answer counts it; a request whose client had gone by then, under no
// status (no answer). Lock-free: a request adds to a shard of its
// operation's count (observe.Counter), so cores answering the same
// operation do not contend; the shards are added up when read. Numbering
// the requests is the one count they all share: an index is a place in
// one sequence.
type reachLog struct {
	byPath   map[string]*reachOp // the operations by path (each path has one)
	requests atomic.Uint64       // every request since the reset, any path: the last one's index
}

type reachOp struct {
	method string
	// status[c] counts requests with the operation's method answered
	// with status class c+2 (2xx…5xx); other, those with another method.
	status [4]*observe.Counter
	// noAnswer counts requests with its method the client gave up on
	// before their status was written.
	noAnswer *observe.Counter
	other    *observe.Counter
	first    atomic.Int64  // Unix nanoseconds of the first request with its method; 0 while none
	index    atomic.Uint64 // the lowest index of a request with its method; 0 while none
}

func newReachLog() *reachLog {
	l := &reachLog{byPath: map[string]*reachOp{}}
	for _, e := range catalogue.Endpoints {
		op := &reachOp{method: e.Method, noAnswer: observe.NewCounter(), other: observe.NewCounter()}
		for i := range op.status {
			op.status[i] = observe.NewCounter()
		}
		l.byPath[e.Path] = op
	}
	return l
}

// received numbers a request: its index among the instance's requests
// since the reset, 1 for the first.
func (l *reachLog) received() uint64 { return l.requests.Add(1) }

// writer wraps w when r is to one of the contract's operations (its path,
// as the router matches it: decoded, with no encoded form); else it is w.
// n is the request's index.
func (l *reachLog) writer(w http.ResponseWriter, r *http.Request, n uint64) (http.ResponseWriter, *reachWriter) {
	op := l.byPath[r.URL.Path]
	if op == nil || r.URL.RawPath != "" {
		return w, nil
	}
	rw := &reachWriter{ResponseWriter: w, ctx: r.Context(), op: op, own: r.Method == op.method, index: n}
	return rw, rw
}

// reset empties the counts (requests in flight count from then on).
func (l *reachLog) reset() {
	for _, op := range l.byPath {
		for i := range op.status {
			op.status[i].Reset()
		}
		op.noAnswer.Reset()
		op.other.Reset()
		op.first.Store(0)
		op.index.Store(0)
	}
	l.requests.Store(0)
}

// count is how many requests the instance received since the reset.
func (l *reachLog) count() uint64 { return l.requests.Load() }

// otherMethods is how many requests went to the operations' paths with
// another method since the reset.
func (l *reachLog) otherMethods() uint64 {
	var n uint64
	for _, op := range l.byPath {
		n += op.other.Load()
	}
	return n
}

// snapshot is the counts of the operation at path.
func (l *reachLog) snapshot(path string) *catalogue.Reached {
	op := l.byPath[path]
	r := &catalogue.Reached{ByStatus: make(map[string]uint64, len(catalogue.StatusClasses)), OtherMethods: op.other.Load()}
	r.NoAnswer = op.noAnswer.Load()
	r.Count = r.NoAnswer
	for c, name := range catalogue.StatusClasses {
		n := op.status[c].Load()
		r.ByStatus[name] = n
		r.Count += n
	}
	if ns := op.first.Load(); ns != 0 && r.Count > 0 {
		t := time.Unix(0, ns).UTC()
		r.First = &t
	}
	if n := op.index.Load(); n != 0 && r.Count > 0 {
		r.FirstRequest = &n
	}
	return r
}

// reachWriter counts its request once, at the first status it writes (or,
// if the handler wrote none, when ServeHTTP ends it: net/http's implicit
// 200, still before the client reads it).
type reachWriter struct {
	http.ResponseWriter
	ctx     context.Context // the request's: done once its client has gone
	op      *reachOp
	own     bool   // the request has the operation's method
	index   uint64 // the request's index among the instance's
	counted bool
	cov     *covRequest // its API coverage; nil when not counted
	covData covRequest  // where cov points when counted
}

// count counts the request at its first status; first is the body written
// with an implicit 200, if any. A status written once the client has gone
// (the services write 499 then, nginx's "client closed request") reached
// no one: the request is counted as reaching the operation with no answer,
// under no status.
func (w *reachWriter) count(code int, first []byte) {
	if w.counted {
		return
	}
	w.counted = true
	if !w.own {
		w.op.other.Add(1)
		return
	}
	if code == observe.StatusClientClosedRequest || w.ctx.Err() != nil {
		if w.cov != nil {
			w.cov.unanswered()
		}
		w.op.noAnswer.Add(1)
	} else {
		if w.cov != nil {
			w.cov.answered(code, w.Header(), first)
		}
		c := code/100 - 2
		if c < 0 || c > 3 { // not a final status a server sends; counted with the 5xx
			c = 3
		}
		w.op.status[c].Add(1)
	}
	if w.op.first.Load() == 0 {
		w.op.first.CompareAndSwap(0, time.Now().UnixNano())
	}
	// The lowest index: requests answered concurrently may finish out of order.
	for {
		old := w.op.index.Load()
		if old != 0 && old <= w.index || w.op.index.CompareAndSwap(old, w.index) {
			break
		}
	}
}

func (w *reachWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.count(code, nil)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *reachWriter) Write(b []byte) (int, error) {
	w.count(http.StatusOK, b)
	if w.cov != nil {
		w.cov.wrote(b)
	}
	return w.ResponseWriter.Write(b)
}

// done counts a request whose handler wrote nothing, and the answer's
// properties.
func (w *reachWriter) done() {
	w.count(http.StatusOK, nil)
	if w.cov != nil {
		w.cov.ended()
	}
}

// RequestIndex is the request's index, for the exposure it triggers
// (observe.RequestIndexOf).
func (w *reachWriter) RequestIndex() uint64 { return w.index }

// Unwrap lets http.ResponseController and the services' recorders reach
// the writer underneath.
func (w *reachWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes through for handlers that test for it directly; a flush
// before any status is a 200.
func (w *reachWriter) Flush() {
	w.count(http.StatusOK, nil)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
