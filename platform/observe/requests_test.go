package observe

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The sharded histogram scrapes as Prometheus's own would: cumulative
// buckets whose bounds are inclusive (le), the sum in seconds, the count
// as showcase_http_requests_total, whatever the shards the observations
// went to; and in flight is started less finished. The expected figures
// are worked out by hand from the observations.
func TestRequestMetrics(t *testing.T) {
	t.Parallel()
	m := newRequestMetrics([]float64{0.001, 0.01, 0.1})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	k := seriesKey{"/x", "GET", 200}
	obs := []time.Duration{500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, time.Second}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			for _, d := range obs {
				m.observe(k, d)
			}
		})
	}
	wg.Wait()
	m.observe(seriesKey{"/x", "GET", 404}, 3*time.Millisecond)
	for range 5 {
		m.started.Add(1)
	}
	m.finished.Add(2)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf
	}
	if g := got["showcase_http_requests_in_flight"].GetMetric()[0].GetGauge().GetValue(); g != 3 {
		t.Errorf("in flight %v, want 3", g)
	}
	var h *dto.Histogram
	for _, mt := range got["showcase_http_request_duration_seconds"].GetMetric() {
		if mt.GetLabel()[0].GetValue() == "200" {
			h = mt.GetHistogram()
		}
	}
	// 0.5 ms and 1 ms are ≤ 1 ms; 2 ms and 10 ms ≤ 10 ms; 50 ms ≤ 100 ms; 1 s above.
	want := []uint64{200, 400, 500}
	for i, b := range h.GetBucket() {
		if b.GetCumulativeCount() != want[i] {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want[i])
		}
	}
	if h.GetSampleCount() != 600 || h.GetSampleSum() < 106.349 || h.GetSampleSum() > 106.351 {
		t.Errorf("count %d sum %v, want 600 and 106.35", h.GetSampleCount(), h.GetSampleSum())
	}
	var total float64
	for _, mt := range got["showcase_http_requests_total"].GetMetric() {
		total += mt.GetCounter().GetValue()
	}
	if total != 601 || len(got["showcase_http_requests_total"].GetMetric()) != 2 {
		t.Errorf("requests_total %v over %d series, want 601 over 2", total, len(got["showcase_http_requests_total"].GetMetric()))
	}
}
