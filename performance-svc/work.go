package performancesvc

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/platform/observe"
)

// sizeClasses are the upper bounds of the work size classes: items of
// endpoint 9 (up to 1000) and sequence lengths of endpoint 10 (up to 100000).
var sizeClasses = []float64{1, 10, 100, 250, 500, 1000, 2500, 10000, 30000, 60000, 100000}

// workMetrics show what the performance endpoints were asked to do and what
// it cost, so a dashboard can plot latency against size.
type workMetrics struct {
	size     *prometheus.HistogramVec // {route}
	duration *prometheus.HistogramVec // {route, size}: size is a class bound, a bounded label
}

func newWorkMetrics(reg prometheus.Registerer) *workMetrics {
	return &workMetrics{
		size: observe.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "showcase", Name: "work_size",
			Help:    "Work asked for: items of endpoint 9, sequence length of endpoint 10.",
			Buckets: sizeClasses,
		}, []string{"route"})),
		duration: observe.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "showcase", Name: "work_duration_seconds",
			Help:    "Time the work took, by route and size class (the class's upper bound).",
			Buckets: observe.DurationBuckets,
		}, []string{"route", "size"})),
	}
}

func (m *workMetrics) observe(route string, size int, took time.Duration) {
	m.size.WithLabelValues(route).Observe(float64(size))
	m.duration.WithLabelValues(route, sizeClass(size)).Observe(took.Seconds())
}

// sizeClass is the smallest class bound at or above size.
func sizeClass(size int) string {
	for _, b := range sizeClasses {
		if float64(size) <= b {
			return strconv.Itoa(int(b))
		}
	}
	return "+Inf"
}
