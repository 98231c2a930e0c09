package gateway_test

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/gateway/board"
)

// BenchmarkBoardsOpen: the API's own latency under load, with no board
// open and with 100 open (each reading its stream), in one run and
// alternating, so that the machine's noise falls on both alike: p50 and
// p99 of each, and their ratio (1.00: unchanged). The load is eight
// clients sending requests to an endpoint as fast as it answers (make
// loadtest's rate is lower).
func BenchmarkBoardsOpen(b *testing.B) {
	in := startInstance(b, false)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	load := func(n int) []time.Duration {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		per := n / 8
		for range 8 {
			wg.Go(func() {
				mine := make([]time.Duration, 0, per)
				for range per {
					start := time.Now()
					res, err := client.Get(in.api.URL + "/response-conformance/missing-field")
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					mine = append(mine, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		return lat
	}
	openBoards := func(n int) func() {
		var stops []func()
		for range n {
			ev, stop := events(b, in.admin.URL+board.PathEvents)
			go func() {
				for range ev { // a page reading every update
				}
			}()
			stops = append(stops, stop)
		}
		return func() {
			for _, s := range stops {
				s()
			}
		}
	}
	load(800) // warm
	var without, with []time.Duration
	b.ResetTimer()
	for round := range 4 {
		n := max(b.N/4, 400) // the first, sizing call of b.N = 1 too
		if round%2 == 0 {
			without = append(without, load(n)...)
			continue
		}
		closeBoards := openBoards(100)
		with = append(with, load(n)...)
		closeBoards()
	}
	b.StopTimer()
	q := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1))].Microseconds())
	}
	p50a, p99a, p50b, p99b := q(without, .5), q(without, .99), q(with, .5), q(with, .99)
	b.ReportMetric(p50a, "p50-µs-no-boards")
	b.ReportMetric(p50b, "p50-µs-100-boards")
	b.ReportMetric(p99a, "p99-µs-no-boards")
	b.ReportMetric(p99b, "p99-µs-100-boards")
	b.ReportMetric(p50b/p50a, "p50-ratio")
	b.ReportMetric(p99b/p99a, "p99-ratio")
}
