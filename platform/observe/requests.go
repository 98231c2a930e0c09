package observe

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestMetrics are showcase_http_requests_total and
// showcase_http_request_duration_seconds of one service, and
// showcase_http_requests_in_flight: counted by every request, so kept where
// many cores can write them without contending (Histograms, Counter). The
// request count is the histogram's count.
type requestMetrics struct {
	*Histograms[seriesKey]
	inFlightDesc      *prometheus.Desc
	started, finished *Counter
}

type seriesKey struct {
	route, method string
	code          int
}

func newRequestMetrics(buckets []float64) *requestMetrics {
	labels := []string{"route", "method", "code"}
	return &requestMetrics{
		Histograms: NewHistograms(prometheus.NewDesc("showcase_http_request_duration_seconds",
			"Time to answer an HTTP request, by route pattern, method and status code.", labels, nil),
			prometheus.NewDesc("showcase_http_requests_total",
				"HTTP requests answered, by route pattern, method and status code.", labels, nil),
			buckets, func(k seriesKey) []string { return []string{k.route, k.method, strconv.Itoa(k.code)} }),
		inFlightDesc: prometheus.NewDesc("showcase_http_requests_in_flight",
			"HTTP requests being answered now.", nil, nil),
		started:  NewCounter(),
		finished: NewCounter(),
	}
}

func (m *requestMetrics) observe(k seriesKey, took time.Duration) { m.Observe(k, took) }

func (m *requestMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.Histograms.Describe(ch)
	ch <- m.inFlightDesc
}

func (m *requestMetrics) Collect(ch chan<- prometheus.Metric) {
	// Finished first: a request that ends between the two reads is never
	// counted as in flight below zero.
	finished := m.finished.Load()
	ch <- prometheus.MustNewConstMetric(m.inFlightDesc, prometheus.GaugeValue, float64(m.started.Load()-finished))
	m.Histograms.Collect(ch)
}

// Histograms is a Prometheus histogram vector whose label sets are found
// by a key K, for durations observed by every request: each label set's
// histogram is split into shards, each on cache lines of its own, and an
// observation adds to a shard picked by the runtime's per-thread random
// source, so that cores observing at once rarely write the same line (a
// Prometheus histogram has one count all its observers add to). The shards
// are added up when Prometheus scrapes. A label set is found in a map read
// without a lock (sync.Map: written once per label set).
type Histograms[K comparable] struct {
	desc, countDesc *prometheus.Desc
	bounds          []time.Duration // the buckets' upper bounds
	boundsSeconds   []float64
	labels          func(K) []string
	series          sync.Map // K → *durations
}

// NewHistograms makes a histogram vector described by desc, with the
// bucket upper bounds buckets (seconds) and the label values of a key given
// by labels. countDesc, if not nil, also exports each histogram's count as
// a counter (showcase_http_requests_total).
func NewHistograms[K comparable](desc, countDesc *prometheus.Desc, buckets []float64, labels func(K) []string) *Histograms[K] {
	if len(buckets) > maxBuckets {
		panic("observe: too many duration buckets")
	}
	h := &Histograms[K]{desc: desc, countDesc: countDesc, boundsSeconds: buckets, labels: labels}
	for _, b := range buckets {
		h.bounds = append(h.bounds, time.Duration(b*float64(time.Second)))
	}
	return h
}

// durations is one label set's histogram, sharded.
type durations struct {
	labels []string
	shards []durationShard
}

// durationShard is one shard: counts by bucket (the last one is +Inf),
// and the sum in nanoseconds (an integer add, not a float's CAS loop).
// Its size is a multiple of 64 bytes, so shards never share a line.
type durationShard struct {
	counts [maxBuckets + 1]atomic.Uint64
	sumNs  atomic.Uint64
	_      [64 - ((maxBuckets+2)*8)%64]byte
}

// maxDurationShards bounds a label set's shards: a fuzzer can make
// hundreds of label sets (routes × methods × statuses), at 320 bytes a
// shard; eight make contention rare enough.
const maxDurationShards = 8

// maxBuckets bounds the buckets of a Histograms (DurationBuckets has 23).
const maxBuckets = 31

// Observe counts an observation of took under the label set of k.
func (h *Histograms[K]) Observe(k K, took time.Duration) {
	v, ok := h.series.Load(k)
	if !ok {
		v, _ = h.series.LoadOrStore(k, &durations{labels: h.labels(k), shards: make([]durationShard, min(shardCount, maxDurationShards))})
	}
	d := v.(*durations)
	i := len(h.bounds) // +Inf
	for j, b := range h.bounds {
		if took <= b {
			i = j
			break
		}
	}
	s := &d.shards[rand.Uint32()&uint32(len(d.shards)-1)]
	s.counts[i].Add(1)
	s.sumNs.Add(uint64(max(0, took)))
}

func (h *Histograms[K]) Describe(ch chan<- *prometheus.Desc) {
	ch <- h.desc
	if h.countDesc != nil {
		ch <- h.countDesc
	}
}

// Collect adds up the shards of each label set.
func (h *Histograms[K]) Collect(ch chan<- prometheus.Metric) {
	h.series.Range(func(_, v any) bool {
		d := v.(*durations)
		var counts [maxBuckets + 1]uint64
		var sum uint64
		for i := range d.shards {
			s := &d.shards[i]
			for j := range len(h.bounds) + 1 {
				counts[j] += s.counts[j].Load()
			}
			sum += s.sumNs.Load()
		}
		buckets := make(map[float64]uint64, len(h.bounds))
		var cum uint64
		for j, b := range h.boundsSeconds {
			cum += counts[j]
			buckets[b] = cum
		}
		total := cum + counts[len(h.bounds)]
		if h.countDesc != nil {
			ch <- prometheus.MustNewConstMetric(h.countDesc, prometheus.CounterValue, float64(total), d.labels...)
		}
		ch <- prometheus.MustNewConstHistogram(h.desc, total, time.Duration(sum).Seconds(), buckets, d.labels...)
		return true
	})
}
