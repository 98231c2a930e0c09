package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

func inFlight(t *testing.T, reg *prometheus.Registry, service string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "showcase_http_requests_in_flight" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service" && l.GetValue() == service {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// A client that goes away stops the work: endpoint 9's paced loop (5 s here,
// at 5 ms an item) and endpoint 10's computation (over a second) end within
// a fraction of their full time.
func TestWorkAbandonedWhenClientLeaves(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	ts := startEmbeddedWith(t, map[string]string{"ITEM_COST": "5ms"}, &observe.Telemetry{Registry: reg, Writer: io.Discard})
	for _, tc := range []struct {
		target string
		bound  time.Duration
	}{
		{suite.PathUnboundedResultSet + "?limit=1000", time.Second},
		{suite.PathInefficientAlgorithm + "?n=100000&searchTerm=1", 700 * time.Millisecond},
	} {
		target := tc.target
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := ts.Client().Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		deadline := time.Now().Add(2 * time.Second)
		for inFlight(t, reg, "performance-svc") < 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
		<-done
		left := time.Now()
		for inFlight(t, reg, "performance-svc") != 0 {
			if time.Since(left) > tc.bound {
				t.Fatalf("%s kept working %s after its client left", target, time.Since(left))
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("%s stopped %s after its client left", target, time.Since(left).Round(time.Millisecond))
	}
}

// Endpoint 10 runs at most FIB_WORKERS at once with FIB_QUEUE waiting;
// beyond that the answer is an immediate 503 JSON with Retry-After.
func TestInefficientAlgorithmIsBounded(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, map[string]string{"FIB_WORKERS": "1", "FIB_QUEUE": "1"})
	type answer struct {
		status int
		retry  string
		took   time.Duration
		body   map[string]any
	}
	answers := make(chan answer, 6)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			start := time.Now()
			resp, err := ts.Client().Get(ts.URL + suite.PathInefficientAlgorithm + "?n=100000&searchTerm=1")
			if err != nil {
				t.Error(err)
				return
			}
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start), body}
		})
	}
	wg.Wait()
	close(answers)
	var statuses []int
	for a := range answers {
		statuses = append(statuses, a.status)
		if a.status == 503 && (a.retry == "" || a.body["error"] == nil || a.took > 500*time.Millisecond) {
			t.Errorf("503 after %s, Retry-After %q, body %v: want an immediate JSON refusal with Retry-After", a.took, a.retry, a.body)
		}
	}
	slices.Sort(statuses)
	if !slices.Equal(statuses, []int{200, 200, 503, 503, 503, 503}) {
		t.Fatalf("statuses %v: want one running, one queued, four refused", statuses)
	}
}

// BenchmarkIsolation measures GET missing-field through the gateway while
// 8 clients keep requesting endpoint 10 at its maximum n. It reports the
// p50 and p99 in milliseconds.
func BenchmarkIsolation(b *testing.B) {
	for _, mode := range []string{"embedded"} {
		b.Run(mode, func(b *testing.B) {
			ts := startEmbeddedB(b)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts+suite.PathInefficientAlgorithm+"?n=100000&searchTerm=1", nil)
						if resp, err := http.DefaultClient.Do(req); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode == 503 {
								time.Sleep(50 * time.Millisecond)
							}
						}
					}
				})
			}
			time.Sleep(500 * time.Millisecond) // the hammering is under way
			var lat []time.Duration
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				resp, err := http.Get(ts + suite.PathMissingField)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(start))
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			slices.Sort(lat)
			ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(ms(0.5), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			fmt.Printf("isolation (%s): %d requests, p50 %.2f ms, p99 %.2f ms\n", mode, len(lat), ms(0.5), ms(0.99))
		})
	}
}

// BenchmarkProxy is one request through the gateway's proxy to an upstream
// on loopback: the gateway's per-request cost in the split deployment. It
// reports allocations.
func BenchmarkProxy(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"123","name":"Alice"}`)
	}))
	defer up.Close()
	built, err := server.Build(gateway.Program(), func(k string) string {
		if k == "UPSTREAM_CONFORMANCE" {
			return up.URL
		}
		return ""
	}, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer built.Close()
	req := httptest.NewRequest(http.MethodGet, suite.PathMissingField, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		built.Handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
