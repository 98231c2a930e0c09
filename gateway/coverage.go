package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/platform/reqparse"
)

// coverageLog counts the API coverage of the requests the gateway passes
// to the contract's operations (catalogue/coverage): which parameters,
// values and content types they sent, and which statuses, content types and
// response properties they got. Its memory is fixed by the contract, not by
// what a client sends: counters for what the contract declares, a status
// table per operation, and at most maxOtherTypes undocumented media types per
// operation and direction.
type coverageLog struct {
	byPath          map[string]*opCoverage
	ops             []*opCoverage // in the contract's order
	undeclaredPaths atomic.Uint64
	since           atomic.Int64 // Unix nanoseconds of the start or the last reset
}

type opCoverage struct {
	op       coverage.Operation
	params   []atomic.Uint64
	values   [][]atomic.Uint64
	bodyIdx  []int // the indices of the body properties among params
	reqTypes []atomic.Uint64
	reqOther typeCounts
	// statuses[c] counts answers with status c (net/http allows 100 to 999).
	statuses [1000]atomic.Uint64
	// noAnswer counts requests the client gave up on before their answer.
	noAnswer  atomic.Uint64
	respTypes []atomic.Uint64
	respOther typeCounts
	props     [][]atomic.Uint64 // by documented response, by declared property
	// response[c] is the documented response status c falls under, -1
	// for none: worked out once, not at each answer.
	response [1000]int16
	// memo is, by documented response, the last small body read for its
	// properties and what it carried: an endpoint that answers the same
	// bytes again is not parsed again.
	memo []propsMemo
}

// propsMemo remembers one body's properties.
type propsMemo struct{ last atomic.Pointer[memoBody] }

type memoBody struct {
	body    []byte
	carried uint64
}

// maxMemo bounds the body a propsMemo keeps.
const maxMemo = 512

// carried is what body carried, if it is the body remembered.
func (m *propsMemo) carried(body []byte) (uint64, bool) {
	if last := m.last.Load(); last != nil && bytes.Equal(last.body, body) {
		return last.carried, true
	}
	return 0, false
}

// keep remembers body (a copy) and what it carried, if it is small.
func (m *propsMemo) keep(body []byte, carried uint64) {
	if len(body) <= maxMemo {
		m.last.Store(&memoBody{body: bytes.Clone(body), carried: carried})
	}
}

// maxCapture bounds the bytes of a request or response body kept to read its
// top-level properties: a larger body's properties are not counted.
const maxCapture = 64 << 10

// maxOtherTypes bounds the undocumented media types counted one by one per
// operation and direction; any further one is counted as otherTypes.
const (
	maxOtherTypes = 16
	otherTypes    = "(other)"
)

// typeCounts counts undocumented media types, boundedly.
type typeCounts struct {
	mu     sync.Mutex
	counts map[string]uint64
}

func (t *typeCounts) add(mt string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]uint64{}
	}
	if _, ok := t.counts[mt]; !ok && len(t.counts) >= maxOtherTypes {
		mt = otherTypes
	}
	t.counts[mt]++
}

func (t *typeCounts) snapshot() map[string]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]uint64, len(t.counts))
	for k, v := range t.counts {
		out[k] = v
	}
	return out
}

func (t *typeCounts) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.counts)
}

func newCoverageLog(m *coverage.Model) *coverageLog {
	l := &coverageLog{byPath: map[string]*opCoverage{}}
	for _, op := range m.Operations {
		o := &opCoverage{op: op, params: make([]atomic.Uint64, len(op.Parameters)),
			values: make([][]atomic.Uint64, len(op.Parameters)), reqTypes: make([]atomic.Uint64, len(op.RequestTypes)),
			respTypes: make([]atomic.Uint64, len(op.ResponseTypes)), props: make([][]atomic.Uint64, len(op.Responses)),
			memo: make([]propsMemo, len(op.Responses))}
		for i, p := range op.Parameters {
			o.values[i] = make([]atomic.Uint64, len(p.Values))
			if p.In == "body" {
				o.bodyIdx = append(o.bodyIdx, i)
			}
		}
		for i, r := range op.Responses {
			o.props[i] = make([]atomic.Uint64, len(r.Properties))
		}
		for code := range o.response {
			o.response[code] = -1
			if i, ok := op.Matches(code); ok && code >= 100 {
				o.response[code] = int16(i)
			}
		}
		l.ops = append(l.ops, o)
		// The gateway matches an operation by its path and method; a path
		// with several methods keeps the first here, the others count as
		// undeclared methods. The showcase's contract has one method a path.
		if _, dup := l.byPath[op.Path]; !dup {
			l.byPath[op.Path] = o
		}
	}
	l.since.Store(time.Now().UnixNano())
	return l
}

// reset empties the counts (requests in flight count from then on).
func (l *coverageLog) reset(at time.Time) {
	l.undeclaredPaths.Store(0)
	for _, o := range l.ops {
		for i := range o.params {
			o.params[i].Store(0)
			for j := range o.values[i] {
				o.values[i][j].Store(0)
			}
		}
		for i := range o.reqTypes {
			o.reqTypes[i].Store(0)
		}
		for i := range o.statuses {
			o.statuses[i].Store(0)
		}
		o.noAnswer.Store(0)
		for i := range o.respTypes {
			o.respTypes[i].Store(0)
		}
		for i := range o.props {
			for j := range o.props[i] {
				o.props[i][j].Store(0)
			}
		}
		o.reqOther.reset()
		o.respOther.reset()
	}
	l.since.Store(at.UnixNano())
}

// covRequest is what the gateway keeps of one request to an operation with
// its method until it is counted.
type covRequest struct {
	op  *opCoverage
	r   *http.Request
	req *teeBody // the request body as the handler read it; nil when not inspected
	res *capture // the answer's body; nil when not inspected
	// resp is the documented response the status falls under; length the
	// answer's Content-Length, -1 when it has none.
	resp, length int
}

// capture keeps the first maxCapture bytes that pass through it.
type capture struct {
	buf  []byte
	over bool
}

// capturePool recycles the answers' captures, which only the handler's
// goroutine writes. A request body's is not recycled: a proxy's transport
// may go on reading the body after the answer has begun.
var capturePool = sync.Pool{New: func() any { return &capture{buf: make([]byte, 0, 4096)} }}

func (c *capture) keep(b []byte) {
	if c.over {
		return
	}
	if len(c.buf)+len(b) > maxCapture {
		c.over, c.buf = true, nil
		return
	}
	c.buf = append(c.buf, b...)
}

func (c *capture) release() {
	if c.over {
		return // its buffer is gone
	}
	c.buf = c.buf[:0]
	capturePool.Put(c)
}

// teeBody passes a request body through to the handler, keeping what it
// reads until the request is counted. The proxy's transport reads it on a
// goroutine of its own: hence the lock.
type teeBody struct {
	body io.ReadCloser
	mu   sync.Mutex
	c    capture
	done bool // counted: what it reads now is not kept
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	t.mu.Lock()
	if !t.done {
		t.c.keep(p[:n])
	}
	t.mu.Unlock()
	return n, err
}

func (t *teeBody) Close() error { return t.body.Close() }

// take is the body read so far, unless it was over maxCapture; from then
// on nothing is kept, and the bytes are the caller's.
func (t *teeBody) take() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	return t.c.buf, !t.c.over
}

// start begins counting r, a request to op with op's method. A body of a
// type the operation documents is kept as the handler (or the proxy) reads
// it: a service reads all of such a body, so one process and the split
// count it alike. A body of another type is not counted: a service may
// refuse it unread (415) while a proxy has passed some or all of it on.
//
// cr is where the request is kept, in the request's writer (one allocation
// for both); start returns it, or nil in a build that does not count.
func (l *coverageLog) start(cr *covRequest, op *opCoverage, r *http.Request) *covRequest {
	if !countCoverage {
		return nil
	}
	*cr = covRequest{op: op, r: r, resp: -1, length: -1}
	if len(op.bodyIdx) > 0 && r.Body != nil && r.Body != http.NoBody && slices.Contains(op.op.RequestTypes, coverage.MediaType(r.Header.Get("Content-Type"))) {
		cr.req = &teeBody{body: r.Body}
		r.Body = cr.req
	}
	return cr
}

// sent counts the request's side: what the client sent reached the
// operation, answered or not.
func (cr *covRequest) sent() {
	o, r := cr.op, cr.r
	for i, p := range o.op.Parameters {
		if p.In == "body" {
			continue
		}
		v, sent := paramValue(r, p)
		if !sent {
			continue
		}
		o.params[i].Add(1)
		for j, want := range p.Values {
			if v == want {
				o.values[i][j].Add(1)
			}
		}
	}
	if len(o.op.RequestTypes) > 0 {
		countType(coverage.MediaType(r.Header.Get("Content-Type")), o.op.RequestTypes, o.reqTypes, &o.reqOther)
	}
	if cr.req != nil {
		if body, ok := cr.req.take(); ok {
			cr.countBody(body)
		}
		cr.req = nil
	}
}

// unanswered counts a request the client gave up on before its answer: its
// side, and no status.
func (cr *covRequest) unanswered() {
	cr.sent()
	cr.op.noAnswer.Add(1)
}

// answered counts the request's side and the status, at the answer's
// first status, before the client can read it: by then the handler has
// read the body it was going to read. It keeps the answer's body when it is
// JSON and its documented response declares properties. first is the first
// body written, when the status is net/http's implicit 200: without a
// Content-Type, net/http sniffs the type from it.
func (cr *covRequest) answered(code int, header http.Header, first []byte) {
	cr.sent()
	o := cr.op
	if code < 100 || code > 999 {
		code = 999
	}
	o.statuses[code].Add(1)
	// The header's own canonical keys, read without Get's canonicalising.
	ct, set := "", false
	if v, ok := header["Content-Type"]; ok {
		set = true
		if len(v) > 0 {
			ct = v[0]
		}
	}
	if !set && len(first) > 0 && len(header["Transfer-Encoding"]) == 0 {
		ct = http.DetectContentType(first)
	}
	if mt := coverage.MediaType(ct); mt != "" {
		countType(mt, o.op.ResponseTypes, o.respTypes, &o.respOther)
	}
	if i := int(o.response[code]); i >= 0 {
		cr.resp = i
		if len(o.op.Responses[i].Properties) > 0 && coverage.IsJSON(ct) {
			cr.res = capturePool.Get().(*capture)
			if v := header["Content-Length"]; len(v) > 0 {
				if n, err := strconv.Atoi(v[0]); err == nil && n >= 0 {
					cr.length = n
				}
			}
		}
	}
}

// maxBodyParams bounds the body properties counted of one operation.
const maxBodyParams = 64

// countBody counts the declared properties a JSON object body sent, each
// once, with the value it last had (as the services read a key given twice).
func (cr *covRequest) countBody(body []byte) {
	o := cr.op
	var last [maxBodyParams][]byte
	var sent uint64
	if !members(body, func(key, value []byte) {
		for k, i := range o.bodyIdx[:min(len(o.bodyIdx), maxBodyParams)] {
			if string(key) == o.op.Parameters[i].Name {
				sent |= 1 << k
				last[k] = value
			}
		}
	}) {
		return
	}
	for k, i := range o.bodyIdx[:min(len(o.bodyIdx), maxBodyParams)] {
		if sent&(1<<k) == 0 {
			continue
		}
		o.params[i].Add(1)
		values := o.op.Parameters[i].Values
		if len(values) == 0 {
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, last[k]) != nil {
			continue
		}
		for j, want := range values {
			if b.String() == want {
				o.values[i][j].Add(1)
			}
		}
	}
}

// wrote keeps what the answer's body carried; with its last byte, before
// that is passed on, it counts the properties.
func (cr *covRequest) wrote(b []byte) {
	if cr.res == nil {
		return
	}
	cr.res.keep(b)
	if cr.res.over || len(cr.res.buf) == cr.length {
		cr.ended()
	}
}

// ended counts the answer's properties: at its last byte when it has a
// Content-Length, else when the handler has returned (net/http ends an
// answer without one after that).
func (cr *covRequest) ended() {
	if cr.res == nil {
		return
	}
	defer func() { cr.res.release(); cr.res = nil }()
	if cr.res.over {
		return
	}
	names := cr.op.op.Responses[cr.resp].Properties
	carried, ok := cr.op.memo[cr.resp].carried(cr.res.buf)
	if !ok {
		// each property once, however often the answer has it
		members(cr.res.buf, func(key, _ []byte) {
			for j, name := range names[:min(len(names), 64)] {
				if string(key) == name {
					carried |= 1 << j
				}
			}
		})
		cr.op.memo[cr.resp].keep(cr.res.buf, carried)
	}
	for j := range names[:min(len(names), 64)] {
		if carried&(1<<j) != 0 {
			cr.op.props[cr.resp][j].Add(1)
		}
	}
}

// paramValue is a query, header or cookie parameter as r sent it.
func paramValue(r *http.Request, p coverage.Parameter) (string, bool) {
	switch p.In {
	case "query":
		return reqparse.QueryFirst(r.URL.RawQuery, p.Name)
	case "header":
		v, ok := r.Header[textproto.CanonicalMIMEHeaderKey(p.Name)]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	case "cookie":
		c, err := r.Cookie(p.Name)
		if err != nil {
			return "", false
		}
		return c.Value, true
	case "path":
		return "", true // the path matched: its parameters were sent
	}
	return "", false
}

func countType(mt string, documented []string, counts []atomic.Uint64, other *typeCounts) {
	for i, d := range documented {
		if d == mt {
			counts[i].Add(1)
			return
		}
	}
	other.add(mt)
}

// report is the coverage since the start or the last reset; requests is
// every request the instance received in that time.
func (l *coverageLog) report(requests uint64) *coverage.Report {
	rep := &coverage.Report{Since: time.Unix(0, l.since.Load()).UTC(), Requests: requests,
		Undeclared: coverage.Undeclared{Paths: l.undeclaredPaths.Load()}, Operations: []coverage.OperationCovered{}}
	for _, o := range l.ops {
		oc := coverage.OperationCovered{Method: o.op.Method, Path: o.op.Path, OperationID: o.op.OperationID,
			Parameters: []coverage.ParameterSent{}, RequestTypes: []coverage.MediaCount{}, Responses: []coverage.ResponseAnswered{},
			Statuses: []coverage.StatusAnswered{}, ResponseTypes: []coverage.MediaCount{}}
		for i, p := range o.op.Parameters {
			ps := coverage.ParameterSent{In: p.In, Name: p.Name, Sent: o.params[i].Load()}
			for j, v := range p.Values {
				ps.Values = append(ps.Values, coverage.ValueSent{Value: v, Sent: o.values[i][j].Load()})
			}
			oc.Parameters = append(oc.Parameters, ps)
		}
		oc.RequestTypes = mediaCounts(o.op.RequestTypes, o.reqTypes, &o.reqOther)
		oc.ResponseTypes = mediaCounts(o.op.ResponseTypes, o.respTypes, &o.respOther)
		answered := make([]uint64, len(o.op.Responses))
		classes := map[string]uint64{}
		for code := range o.statuses {
			n := o.statuses[code].Load()
			if n == 0 {
				continue
			}
			oc.Requests += n
			s := coverage.StatusAnswered{Status: code, Answered: n}
			if i := int(o.response[code]); i >= 0 {
				s.Response = o.op.Responses[i].Status
				answered[i] += n
			}
			oc.Statuses = append(oc.Statuses, s)
			classes[string(rune('0'+code/100))+"XX"] += n
		}
		oc.NoAnswer = o.noAnswer.Load()
		oc.Requests += oc.NoAnswer
		for i, r := range o.op.Responses {
			ra := coverage.ResponseAnswered{Status: r.Status, Answered: answered[i], Properties: []coverage.PropertyCarried{}}
			for j, name := range r.Properties {
				ra.Properties = append(ra.Properties, coverage.PropertyCarried{Name: name, Carried: o.props[i][j].Load()})
			}
			oc.Responses = append(oc.Responses, ra)
		}
		for _, c := range coverage.Classes {
			oc.StatusClasses = append(oc.StatusClasses, coverage.ClassAnswered{Class: c, Answered: classes[c]})
		}
		rep.Operations = append(rep.Operations, oc)
	}
	rep.Compute()
	return rep
}

// mediaCounts lists the documented media types, then the others seen, by name.
func mediaCounts(documented []string, counts []atomic.Uint64, other *typeCounts) []coverage.MediaCount {
	out := []coverage.MediaCount{}
	for i, d := range documented {
		out = append(out, coverage.MediaCount{Type: d, Documented: true, Count: counts[i].Load()})
	}
	seen := other.snapshot()
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, coverage.MediaCount{Type: k, Count: seen[k]})
	}
	return out
}
