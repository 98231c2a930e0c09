package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Options say what to send, where, how fast and for how long.
type Options struct {
	Base     string        // the service's base URL
	Rate     float64       // requests per second, arriving at a constant rate
	Duration time.Duration // how long to send
	Seed     uint64        // the random source of the mix and the sizes
	Timeout  time.Duration // for one answer; 30 s when zero
	Kinds    []Kind        // the mix; Scenario when nil
	// Progress, when set, gets a line at least once a second: sent,
	// answered, unexpected.
	Progress io.Writer
	// Out, when set, is a directory that gets results.bin (every result,
	// in the format the vegeta command line reads) and report.json.
	Out string
}

// Report is what a run did.
type Report struct {
	Base        string         `json:"base"`
	Requests    uint64         `json:"requests"`
	Seconds     float64        `json:"seconds"`       // from the first request to the last
	RateWanted  float64        `json:"rate_wanted"`   // requests per second asked for
	Rate        float64        `json:"rate"`          // requests per second sent
	Throughput  float64        `json:"throughput"`    // answers the specification allows, per second, to the last answer
	Success     float64        `json:"success_ratio"` // answers the specification allows, of all requests
	StatusCodes map[string]int `json:"status_codes"`  // "0" for a request that got no answer
	Kinds       []KindReport   `json:"kinds"`
	// Unexpected are the first few answers the specification does not
	// allow, or requests that got no answer, each named by its kind.
	Unexpected []string `json:"unexpected"`
}

// KindReport is one kind of request's part of the run.
type KindReport struct {
	Name        string         `json:"name"`
	Count       int            `json:"count"`
	Unexpected  int            `json:"unexpected"`
	StatusCodes map[string]int `json:"status_codes"`
	P50         float64        `json:"p50_ms"`
	P90         float64        `json:"p90_ms"`
	P99         float64        `json:"p99_ms"`
	Max         float64        `json:"max_ms"`
}

// Failed says whether any answer was one the specification does not
// allow, or any request got no answer.
func (r *Report) Failed() bool {
	for _, k := range r.Kinds {
		if k.Unexpected > 0 {
			return true
		}
	}
	return false
}

// targeter draws the kinds at random by weight (from a seeded source, so
// that a run can be repeated), with their sizes.
func targeter(kinds []Kind, base string, seed uint64, sent *atomic.Uint64) vegeta.Targeter {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	total := 0
	for _, k := range kinds {
		total += k.Weight
	}
	return func(t *vegeta.Target) error {
		mu.Lock()
		x := rng.IntN(total)
		var k Kind
		for _, k = range kinds {
			if x -= k.Weight; x < 0 {
				break
			}
		}
		method, url, body := k.target(rng, base)
		mu.Unlock()
		t.Method, t.URL, t.Body, t.Header = method, url, nil, nil
		if body != "" {
			t.Body = []byte(body)
			t.Header = http.Header{"Content-Type": {"application/json"}}
		}
		sent.Add(1)
		return nil
	}
}

// Run sends the mix and reports. The error is for a run that could not be
// made; answers that are not allowed are in the report (Failed).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Rate <= 0 || o.Duration <= 0 {
		return nil, errors.New("the rate and the duration must be positive")
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	kinds := o.Kinds
	if kinds == nil {
		kinds = Scenario
	}
	base := strings.TrimSuffix(o.Base, "/")

	var enc vegeta.Encoder
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(o.Out, "results.bin"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		enc = vegeta.NewEncoder(f)
	}

	// A nanosecond-exact pace: Freq requests per Per.
	per := time.Duration(float64(time.Second) / o.Rate)
	rate := vegeta.Rate{Freq: 1, Per: per}
	if per <= 0 {
		rate = vegeta.Rate{Freq: int(math.Round(o.Rate)), Per: time.Second}
	}
	// vegeta's transport, but ours: its connections are closed when the run
	// ends, so that one run's (under overload, thousands) do not weigh on
	// the next in the same process.
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: vegeta.DefaultConnections,
		MaxConnsPerHost:     vegeta.DefaultMaxConnections,
	}
	defer transport.CloseIdleConnections()
	// The answers are read and dropped (none is kept): the statuses are what is checked.
	attacker := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: transport}), vegeta.Timeout(o.Timeout),
		vegeta.MaxBody(0), vegeta.Redirects(vegeta.NoFollow))
	var sent, answered, unexpected atomic.Uint64
	tr := targeter(kinds, base, o.Seed, &sent)

	stop := make(chan struct{})
	var progress sync.WaitGroup
	if o.Progress != nil {
		progress.Add(1)
		go func() {
			defer progress.Done()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			start := time.Now()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					fmt.Fprintf(o.Progress, "%5.0fs  sent %d  answered %d  unexpected %d\n",
						time.Since(start).Seconds(), sent.Load(), answered.Load(), unexpected.Load())
				}
			}
		}()
	}
	go func() {
		select {
		case <-ctx.Done():
			attacker.Stop()
		case <-stop:
		}
	}()

	var whole vegeta.Metrics
	perKind := map[string]*kindStats{}
	r := &Report{Base: base, RateWanted: o.Rate}
	var firstErr error
	for res := range attacker.Attack(tr, rate, o.Duration, "showcase") {
		whole.Add(res)
		if enc != nil && firstErr == nil {
			firstErr = enc.Encode(res)
		}
		name := notInScenario
		k := kindOf(kinds, res.Method, res.URL)
		if k != nil {
			name = k.Name
		}
		s := perKind[name]
		if s == nil {
			s = &kindStats{codes: map[string]int{}}
			perKind[name] = s
		}
		s.latencies = append(s.latencies, res.Latency)
		s.codes[strconv.Itoa(int(res.Code))]++
		if res.Code != 0 {
			answered.Add(1)
		}
		if res.Code == 0 || k == nil || !k.allowed(int(res.Code)) {
			unexpected.Add(1)
			s.unexpected++
			if len(r.Unexpected) < 20 {
				what := fmt.Sprintf("answered %d", res.Code)
				if res.Code == 0 {
					what = "no answer: " + res.Error
				}
				r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s: %s %s %s", name, res.Method, res.URL, what))
			}
		} else {
			s.allowed++
		}
	}
	whole.Close()
	close(stop)
	progress.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("writing the results: %w", firstErr)
	}

	r.Requests = whole.Requests
	r.Seconds = whole.Duration.Seconds()
	r.Rate = whole.Rate
	r.StatusCodes = whole.StatusCodes
	var allowed int
	for _, k := range append(slices.Clone(kinds), Kind{Name: notInScenario}) {
		s := perKind[k.Name]
		if s == nil {
			continue
		}
		allowed += s.allowed
		r.Kinds = append(r.Kinds, s.report(k.Name))
	}
	if r.Requests > 0 {
		r.Success = float64(allowed) / float64(r.Requests)
	}
	if d := (whole.Duration + whole.Wait).Seconds(); d > 0 {
		r.Throughput = float64(allowed) / d
	}
	if o.Out != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(filepath.Join(o.Out, "report.json"), append(b, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// notInScenario names, in a report, answers to requests of no kind of the mix.
const notInScenario = "(not of the scenario)"

type kindStats struct {
	latencies           []time.Duration
	codes               map[string]int
	allowed, unexpected int
}

func (s *kindStats) report(name string) KindReport {
	slices.Sort(s.latencies)
	return KindReport{Name: name, Count: len(s.latencies), Unexpected: s.unexpected, StatusCodes: s.codes,
		P50: ms(quantile(s.latencies, 0.50)), P90: ms(quantile(s.latencies, 0.90)),
		P99: ms(quantile(s.latencies, 0.99)), Max: ms(quantile(s.latencies, 1))}
}

// quantile is the nearest-rank q-quantile of sorted latencies: the
// smallest that at least q of them do not exceed (exact, no estimate).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// WriteText writes the report for a person: the run, then a row per kind.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d requests to %s in %.1f s: %.2f/s sent (%.2f/s asked), throughput %.2f/s, %.2f %% as specified\n",
		r.Requests, r.Base, r.Seconds, r.Rate, r.RateWanted, r.Throughput, 100*r.Success)
	fmt.Fprintf(w, "status codes: %s\n\n", codes(r.StatusCodes))
	fmt.Fprintf(w, "%-30s %7s %10s %9s %9s %9s %9s  %s\n", "kind", "count", "unexpected", "p50 ms", "p90 ms", "p99 ms", "max ms", "status codes")
	for _, k := range r.Kinds {
		fmt.Fprintf(w, "%-30s %7d %10d %9.2f %9.2f %9.2f %9.2f  %s\n", k.Name, k.Count, k.Unexpected, k.P50, k.P90, k.P99, k.Max, codes(k.StatusCodes))
	}
	if len(r.Unexpected) > 0 {
		fmt.Fprintf(w, "\nnot as specified (the first %d):\n", len(r.Unexpected))
		for _, u := range r.Unexpected {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
}

func codes(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
