package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
)

// DefaultUpstreamTimeout bounds the wait for an upstream's answer: room for
// endpoint 10 at its maximum n behind a full queue.
const DefaultUpstreamTimeout = time.Minute

// maxConnectTimeout bounds a connection attempt to an upstream: on a
// network of its own a service connects in well under a millisecond.
const maxConnectTimeout = 2 * time.Second

// NewTransport is the transport to one upstream: no environment proxy, no
// transparent compression (bodies pass through as the client asked), enough
// idle connections that heavy load reuses connections instead of churning
// through ports, and at most timeout to wait for the answer's headers. A
// connection attempt gives up within half the timeout (2 s at most), so
// that one that never completes fails as a failure to connect (502
// "unreachable") before the exchange's deadline could call it slow (504).
func NewTransport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		ResponseHeaderTimeout: timeout,
		Proxy:                 nil,
		DialContext: (&net.Dialer{
			Timeout:   min(maxConnectTimeout, timeout/2),
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
	}
}

// proxyMetrics are the gateway's view of its upstreams.
type proxyMetrics struct {
	duration *observe.Histograms[upstreamKey] // {category, code}: sharded, every proxied request observes it
	failures *prometheus.CounterVec           // {category, kind}
}

// upstreamKey is a label set of the upstream durations.
type upstreamKey struct {
	category string
	code     int
}

func newProxyMetrics(reg prometheus.Registerer) *proxyMetrics {
	return &proxyMetrics{
		duration: observe.Register(reg, observe.NewHistograms(prometheus.NewDesc("showcase_gateway_upstream_request_duration_seconds",
			"Time to answer a proxied request, by category and status code (502/504 are the gateway's own).", []string{"category", "code"}, nil),
			nil, observe.DurationBuckets, func(k upstreamKey) []string { return []string{k.category, strconv.Itoa(k.code)} })),
		failures: observe.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "showcase", Subsystem: "gateway", Name: "upstream_failures_total",
			Help: "Proxied requests that got no answer from their upstream, by category and kind: refused, unreachable (no connection), timeout (connected, no answer in time), reset, client_gone, other.",
		}, []string{"category", "kind"})),
	}
}

// Upstream forwards one category to its service. An upstream that cannot be
// reached answers 502 JSON for that category alone; one that does not answer
// in time, 504.
type Upstream struct {
	category  string
	target    *url.URL
	proxy     *httputil.ReverseProxy
	transport http.RoundTripper
	timeout   time.Duration
	metrics   *proxyMetrics
	probe     string
}

// NewUpstream proxies category c to target; timeout bounds each whole
// exchange, from sending the request to the last byte of the answer. Its
// readiness probe is OPTIONS
// on the category's first endpoint, which runs no handler. The upstream
// names on its answer the planted defect a request triggered (see
// observe.HeaderTriggered); the gateway takes that off and records it in
// exposure.
func NewUpstream(c catalogue.Category, target *url.URL, transport http.RoundTripper, timeout time.Duration, metrics *proxyMetrics, logger *slog.Logger, exposure *observe.ExposureLog) *Upstream {
	u := &Upstream{category: c.Name, target: target, transport: transport, timeout: timeout, metrics: metrics, probe: catalogue.EndpointsOf(c.Name)[0].Path}
	for _, kind := range failureKinds {
		metrics.failures.WithLabelValues(c.Name, kind) // present at zero, so rates are defined from the start
	}
	own := map[string]bool{}
	for _, e := range catalogue.EndpointsOf(c.Name) {
		own[string(e.Defect)] = true
	}
	u.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// ReverseProxy drops query pairs Go cannot parse (a ';' in
			// them); the services read such pairs as Werkzeug did, and the
			// gateway reads no parameter itself, so the query passes as sent.
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			// The client's address, from the real peer (ReverseProxy has
			// removed what the client sent). Not X-Forwarded-Host or
			// -Proto: no service builds a URL, and every header sent is
			// one more for the service to parse (see README, Performance).
			if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
				pr.Out.Header["X-Forwarded-For"] = []string{ip}
			}
			pr.Out.Header[observe.HeaderReportTriggered] = reportTriggered
			// The ID again: a client's Connection header can name
			// X-Request-Id as hop-by-hop, and ReverseProxy removes it.
			// ServeHTTP has put one sane ID first on the request.
			pr.Out.Header[observe.HeaderRequestID] = pr.In.Header[observe.HeaderRequestID][:1:1]
		},
		ModifyResponse: func(res *http.Response) error {
			// The answer's ID is the gateway's (the same value as the
			// upstream's), set here rather than before proxying: a
			// proxied 1xx (100 Continue) clears the headers set before it.
			res.Header[observe.HeaderRequestID] = res.Request.Header[observe.HeaderRequestID]
			if d, ok := res.Header[observe.HeaderTriggered]; ok {
				delete(res.Header, observe.HeaderTriggered)
				// Only the category's own defects: a bounded, known set.
				if len(d) == 1 && own[d[0]] {
					exposure.Record(d[0], res.Request, res.Request.Header.Get(observe.HeaderRequestID), observe.RequestIndex(res.Request.Context()), time.Now())
				}
			}
			return nil
		},
		Transport:  transport,
		BufferPool: bufferPool{},
		ErrorLog:   slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header()[observe.HeaderRequestID] = r.Header[observe.HeaderRequestID]
			kind := failureKind(r, err)
			metrics.failures.WithLabelValues(c.Name, kind).Inc()
			if kind == "client_gone" {
				w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
				return
			}
			status, msg := http.StatusBadGateway, "Bad Gateway: the "+c.Name+" service is unreachable"
			if kind == "timeout" {
				status, msg = http.StatusGatewayTimeout, "Gateway Timeout: the "+c.Name+" service did not answer in time"
			}
			logger.LogAttrs(r.Context(), slog.LevelWarn, "upstream failed", categoryAttr(c.Name),
				slog.String("kind", kind), slog.String("error", err.Error()), slog.Int("status", status),
				slog.String("requestID", r.Header.Get(observe.HeaderRequestID)))
			respond.Error(w, status, msg)
		},
	}
	return u
}

// ServeHTTP forwards the request with its request ID and measures the
// answer. The answer's ID comes with the answer (ModifyResponse,
// ErrorHandler); the request's log line is the service's, under the same ID.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	observe.IncomingRequestID(r)
	sw := &observe.StatusRecorder{ResponseWriter: w}
	start := time.Now()
	// The whole exchange is bounded by the timeout, and ends when the
	// client leaves once its request is whole (endpoints 9 and 10 stop at
	// once), but not while its body is still coming: if that breaks off,
	// the service is to answer it as the one process does (see
	// clientBody), and a client that closed only its sending side still
	// reads that answer. (net/http cancels the request before the body's
	// reader sees the error, so it is the body's end, not its breaking,
	// that is asked.) A request without a body is whole from the start.
	var ctx context.Context
	var cancel context.CancelFunc
	var out *http.Request
	// The request's index, for the exposure its answer may name: the
	// answer is read without w.
	parent := r.Context()
	if n := observe.RequestIndexOf(w); n != 0 {
		parent = observe.WithRequestIndex(parent, n)
	}
	if r.Body == nil || r.Body == http.NoBody {
		ctx, cancel = context.WithTimeout(parent, u.timeout)
		out = r.WithContext(ctx)
	} else {
		ctx, cancel = context.WithTimeout(context.WithoutCancel(parent), u.timeout)
		body := &clientBody{rc: r.Body, declared: r.ContentLength}
		out = r.WithContext(ctx)
		out.Body = body
		defer context.AfterFunc(r.Context(), func() {
			if body.whole.Load() {
				cancel()
			}
		})()
	}
	defer cancel()
	defer func() {
		// Out of time in the middle of the answer: ReverseProxy drops the
		// connection (http.ErrAbortHandler), the client sees the answer cut
		// short, and it counts as a timeout.
		if v := recover(); v != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				u.metrics.failures.WithLabelValues(u.category, "timeout").Inc()
			}
			panic(v)
		}
	}()
	u.proxy.ServeHTTP(sw, out)
	u.metrics.duration.Observe(upstreamKey{u.category, sw.Code(r)}, time.Since(start))
}

// clientBody is a client's request body on its way to the service. A
// client's body that cannot be read to its end (a malformed chunk, a
// connection closed short of its Content-Length) is the client's error, and
// the one process answers it from the handler: a GET ignores its body, a
// POST answers 400 for a body it cannot read. So that the service answers it
// the same way, rather than the gateway blaming the service with a 502, the
// body goes on as far as it was read and is then made unreadable as JSON:
// NUL bytes, up to its declared length (or one, for a chunked body), which
// no JSON parser accepts.
type clientBody struct {
	rc       io.ReadCloser
	declared int64 // Content-Length; -1 for a chunked body
	read     int64
	whole    atomic.Bool // read to its end
	broken   bool
	poison   int64 // NUL bytes still to send once broken
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.broken {
		return b.poisoned(p)
	}
	n, err := b.rc.Read(p)
	b.read += int64(n)
	if err == io.EOF {
		b.whole.Store(true)
	}
	if err == nil || err == io.EOF {
		return n, err
	}
	b.poison = max(1, b.declared-b.read)
	b.broken = true
	if n > 0 {
		return n, nil
	}
	return b.poisoned(p)
}

func (b *clientBody) poisoned(p []byte) (int, error) {
	if b.poison == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), b.poison))
	clear(p[:k])
	b.poison -= int64(k)
	return k, nil
}

func (b *clientBody) Close() error { return b.rc.Close() }

// Ready sends OPTIONS to a route of the category: the service answers 200
// without running a handler.
func (u *Upstream) Ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, u.target.String()+u.probe, nil)
	if err != nil {
		return err
	}
	res, err := u.transport.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("upstream %s: %w", u.target.Host, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("upstream %s answered its probe with %d", u.target.Host, res.StatusCode)
	}
	return nil
}

// reportTriggered is the value of observe.HeaderReportTriggered on every
// proxied request; shared, never modified.
var reportTriggered = []string{"1"}

// failureKinds are the values of the failures' kind label: refused and
// unreachable are failures to connect (no process listens; no answer to
// the connection, a name that does not resolve), timeout is a service
// that accepted the request and did not answer in time.
var failureKinds = []string{"refused", "unreachable", "timeout", "reset", "client_gone", "other"}

// failureKind names why a proxied request got no answer. A failure to
// connect is told apart first: a connect timeout is the service being
// unreachable, not slow.
func failureKind(r *http.Request, err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &op) && op.Op == "dial":
		if r.Context().Err() == context.Canceled {
			return "client_gone"
		}
		return "unreachable"
	case errors.Is(r.Context().Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case r.Context().Err() != nil:
		return "client_gone"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "reset"
	default:
		return "other"
	}
}

// bufferPool lends ReverseProxy its 32 KiB copy buffers instead of letting it
// allocate one per request.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }
