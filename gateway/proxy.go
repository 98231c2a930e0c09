package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/platform/respond"
)

// NewTransport is the transport to the upstreams: no environment proxy, no
// transparent compression (bodies pass through as the client asked), and
// enough idle connections per upstream that heavy load reuses connections
// instead of churning through ports.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   2 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
	}
}

// NewProxy forwards a category to its upstream. An upstream that cannot be
// reached answers 502 JSON for that category alone.
func NewProxy(category string, target *url.URL, transport http.RoundTripper, logger *slog.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// ReverseProxy drops query pairs Go cannot parse (a ';' in
			// them); the services read such pairs as Werkzeug did, and the
			// gateway reads no parameter itself, so the query passes as sent.
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			pr.SetXForwarded()
		},
		Transport:  transport,
		BufferPool: bufferPool{},
		ErrorLog:   slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client has gone; nobody reads an answer
			}
			status, msg := http.StatusBadGateway, "Bad Gateway: the "+category+" service is unreachable"
			var ne net.Error
			if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
				status, msg = http.StatusGatewayTimeout, "Gateway Timeout: the "+category+" service did not answer in time"
			}
			logger.LogAttrs(r.Context(), slog.LevelWarn, "upstream failed",
				categoryAttr(category), slog.String("error", err.Error()), slog.Int("status", status))
			respond.Error(w, status, msg)
		},
	}
}

// bufferPool lends ReverseProxy its 32 KiB copy buffers instead of letting it
// allocate one per request.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }
