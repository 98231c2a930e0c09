package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/suite"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// recorder is an upstream that remembers what reached it.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecorder(t *testing.T, delay time.Duration) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Clone(r.Context()))
		rec.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) seen() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

// The gateway calls nothing but its configured upstreams, each only for its
// own category, whatever the request line, Host or path says; it strips
// hop-by-hop headers and sets X-Forwarded-* from the real peer.
func TestGatewayHygiene(t *testing.T) {
	t.Parallel()
	security, performance, canary := newRecorder(t, 0), newRecorder(t, 0), newRecorder(t, 0)
	gw := startEmbedded(t, map[string]string{"UPSTREAM_SECURITY": security.URL, "UPSTREAM_PERFORMANCE": performance.URL})
	addr := strings.TrimPrefix(gw.URL, "http://")
	canaryHost := strings.TrimPrefix(canary.URL, "http://")

	requests := []struct{ rule, raw, wantPath string }{
		{"an absolute-form URI naming another host", "GET " + canary.URL + "/security/x HTTP/1.1\r\nHost: " + canaryHost + "\r\n\r\n", "/security/x"},
		{"a foreign Host header", "GET /security/x HTTP/1.1\r\nHost: " + canaryHost + "\r\n\r\n", "/security/x"},
		{"dot segments toward another category", "GET /security/../performance/unbounded-result-set HTTP/1.1\r\nHost: x\r\n\r\n", "/security/../performance/unbounded-result-set"},
		{"an encoded slash toward another category", "GET /security/..%2Fperformance/x HTTP/1.1\r\nHost: x\r\n\r\n", "/security/..%2Fperformance/x"},
		{"a doubled slash", "GET /security//x HTTP/1.1\r\nHost: x\r\n\r\n", "/security//x"},
	}
	for _, r := range requests {
		status, _ := suite.Raw(t, addr, r.raw)
		if status != 200 {
			t.Errorf("%s: %d", r.rule, status)
		}
	}
	// Paths the gateway itself refuses never reach an upstream.
	for _, raw := range []string{
		"GET /performance/../security/x HTTP/1.1\r\nHost: x\r\n\r\n", // goes to performance, never security's routes
		"GET //security/x HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /%73ecurity/x HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		suite.Raw(t, addr, raw)
	}
	seen := security.seen()
	if len(seen) != len(requests)+1 { // +1: /%73ecurity decodes to the security prefix and is forwarded as sent
		t.Errorf("security upstream saw %d requests, want %d", len(seen), len(requests)+1)
	}
	for i, r := range requests {
		if i < len(seen) && seen[i].URL.EscapedPath() != r.wantPath {
			t.Errorf("%s: upstream got path %q, want %q as sent", r.rule, seen[i].URL.EscapedPath(), r.wantPath)
		}
	}
	if n := len(performance.seen()); n != 1 {
		t.Errorf("performance upstream saw %d requests, want only its own one", n)
	}
	if n := len(canary.seen()); n != 0 {
		t.Fatalf("the gateway called a host named in the request %d times", n)
	}

	// Hop-by-hop headers are removed; X-Forwarded-For comes from the real
	// peer, and the client's X-Forwarded-Host and -Proto do not pass.
	status, _ := suite.Raw(t, addr, "GET /security/h HTTP/1.1\r\nHost: showcase.test\r\n"+
		"Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\nProxy-Authorization: Basic eA==\r\n"+
		"Upgrade: websocket\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil.test\r\nX-Forwarded-Proto: https\r\n"+
		"Forwarded: for=6.6.6.6\r\n\r\n")
	if status != 200 {
		t.Fatalf("hop-by-hop request: %d", status)
	}
	last := security.seen()[len(security.seen())-1]
	for _, h := range []string{"X-Secret", "Keep-Alive", "Proxy-Authorization", "Upgrade", "Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := last.Header.Get(h); v != "" {
			t.Errorf("upstream received %s: %q", h, v)
		}
	}
	if xff := last.Header.Values("X-Forwarded-For"); len(xff) != 1 || xff[0] != "127.0.0.1" {
		t.Errorf("X-Forwarded-For %q, want the real peer 127.0.0.1 only", xff)
	}
}

// An upstream slower than its timeout answers 504 JSON, for its category only.
func TestUpstreamTimeout(t *testing.T) {
	t.Parallel()
	slow, fast := newRecorder(t, 5*time.Second), newRecorder(t, 0)
	gw := startEmbedded(t, map[string]string{
		"UPSTREAM_PERFORMANCE": slow.URL, "UPSTREAM_PERFORMANCE_TIMEOUT": "300ms",
		"UPSTREAM_SECURITY": fast.URL, "UPSTREAM_TIMEOUT": "10s",
	})
	start := time.Now()
	resp, err := gw.Client().Get(gw.URL + suite.PathUnboundedResultSet)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("Content-Type") != "application/json" || body["error"] == nil || len(body) != 1 {
		t.Fatalf("slow upstream: %d %s %v, want 504 {\"error\": ...}", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if took > 2*time.Second {
		t.Fatalf("the 504 took %s with a 300ms timeout", took)
	}
	resp, err = gw.Client().Get(gw.URL + suite.PathUnauthenticatedAccess)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the other category: %v %v", resp, err)
	}
	resp.Body.Close()
}

// The timeout bounds the whole answer: an upstream that sends its headers
// and part of its body, then stalls, has the connection closed when the
// time is up, counted as a timeout.
func TestUpstreamTimeoutMidBody(t *testing.T) {
	t.Parallel()
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"item_0":`))
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer stall.Close()
	reg := prometheus.NewRegistry()
	gw := startEmbeddedWith(t, map[string]string{"UPSTREAM_PERFORMANCE": stall.URL, "UPSTREAM_TIMEOUT": "300ms"}, &observe.Telemetry{Registry: reg, Writer: io.Discard})
	start := time.Now()
	// The headers may not have left the gateway's buffer: the connection
	// closes before or after them, never with a complete answer.
	resp, err := gw.Client().Get(gw.URL + suite.PathUnboundedResultSet)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if took := time.Since(start); err == nil || took > 2*time.Second {
		t.Fatalf("a stalled body: read error %v after %s, want the connection closed after about 300ms", err, took)
	}
	want := `showcase_gateway_upstream_failures_total{category="performance",kind="timeout",service="gateway"} 1`
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(gatherText(t, reg), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the metrics lack %s", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gatherText is reg's metrics in the text exposition format.
func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// fullBacklog is a loopback listener that never accepts and whose accept
// queue is full: the kernel drops every further connection attempt, so a
// dial to it times out, as a dial to a host that is gone does.
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the queue: connections the kernel completes and nobody accepts,
	// until one attempt is left hanging.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return addr
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i > 64 {
			t.Fatal("the accept queue never filled")
		}
	}
}

// An upstream the gateway cannot connect to is 502 "unreachable", counted
// as such, also when the connection attempt times out; 504 is only for one
// that accepted the request and did not answer in time.
func TestUnreachableIsNotSlow(t *testing.T) {
	t.Parallel()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	refused.Close() // nothing listens there now
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slow.Close) // after the parallel subtests, unlike a defer
	for _, c := range []struct {
		name, upstream, timeout, kind string
		status                        int
		message                       string
	}{
		{"nothing listens", refusedURL, "5s", "refused", 502, "unreachable"},
		{"the connection attempt times out", "http://" + fullBacklog(t), "5s", "unreachable", 502, "unreachable"},
		{"a short UPSTREAM_TIMEOUT: the connection attempt gives up first", "http://" + fullBacklog(t), "500ms", "unreachable", 502, "unreachable"},
		{"connected, no answer in time", slow.URL, "500ms", "timeout", 504, "did not answer in time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			gw := startEmbeddedWith(t, map[string]string{"UPSTREAM_CONFORMANCE": c.upstream, "UPSTREAM_TIMEOUT": c.timeout}, &observe.Telemetry{Registry: reg, Writer: io.Discard})
			resp, err := gw.Client().Get(gw.URL + suite.PathMissingField)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.message) || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d %s, want %d naming %q", resp.StatusCode, body, c.status, c.message)
			}
			want := fmt.Sprintf(`showcase_gateway_upstream_failures_total{category="conformance",kind=%q,service="gateway"} 1`, c.kind)
			if !strings.Contains(gatherText(t, reg), want) {
				t.Errorf("the metrics lack %s", want)
			}
		})
	}
}
