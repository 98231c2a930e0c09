// Package performancesvc serves the performance category: endpoints 9 and
// 10, whose cost grows with their input.
package performancesvc

import (
	"errors"
	"math/big"
	"net/http"
	"runtime"
	"time"

	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Default listen addresses of the standalone binary.
const (
	DefaultAddr      = ":8084"
	DefaultAdminAddr = ":9094"
)

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	// ItemCost is what one item of endpoint 9 costs (1 ms as specified).
	ItemCost time.Duration
	// FibWorkers is how many endpoint 10 computations run at once.
	FibWorkers int
	// FibQueue is how many more may wait for a worker; beyond it, 503.
	FibQueue int
	Defects  defects.Set // the zero value: every defect active
}

// DefaultFibWorkers leaves one core to the other endpoints, so that they
// stay fast while endpoint 10 is hammered.
func DefaultFibWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// DefaultFibQueue is how many endpoint 10 requests may wait for a worker.
const DefaultFibQueue = 16

// ConfigFromEnv reads ITEM_COST, FIB_WORKERS and FIB_QUEUE.
func ConfigFromEnv(d server.Deps) Config {
	env := d.Env
	return Config{
		Telemetry:  d.Telemetry,
		ItemCost:   env.Duration("ITEM_COST", time.Millisecond),
		FibWorkers: env.Int("FIB_WORKERS", DefaultFibWorkers(), 1, 1024),
		FibQueue:   env.Int("FIB_QUEUE", DefaultFibQueue, 0, 1_000_000),
		Defects:    defects.FromEnv(env),
	}
}

// Service is the performance category's router.
type Service struct {
	handler  http.Handler
	itemCost time.Duration
	fib      *limiter
	work     *workMetrics
	defects  defects.Set
}

// The routes, as their metrics name them.
const (
	routeItems     = "/performance/unbounded-result-set"
	routeFibonacci = "/performance/inefficient-algorithm"
)

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.ItemCost <= 0 {
		cfg.ItemCost = time.Millisecond
	}
	if cfg.FibWorkers <= 0 {
		cfg.FibWorkers = DefaultFibWorkers()
	}
	if cfg.FibQueue < 0 {
		cfg.FibQueue = DefaultFibQueue
	}
	in := cfg.Telemetry.Service("performance-svc")
	cfg.Defects.Report(in, defects.IDsOf("performance")...)
	s := &Service{itemCost: cfg.ItemCost, fib: newLimiter(cfg.FibWorkers, cfg.FibQueue), work: newWorkMetrics(in.Registerer), defects: cfg.Defects}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: routeItems, Handler: s.unboundedResultSet},
		{Method: http.MethodGet, Pattern: routeFibonacci, Handler: s.inefficientAlgorithm},
	}, in)
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

// Bounds of the two endpoints' inputs.
const (
	maxLimit = 1000
	maxN     = 100000
	// cheapN is the largest n computed without a worker slot: its modelled
	// cost is under half a millisecond, like any other request.
	cheapN = 2000
)

var (
	bigMaxLimit = big.NewInt(maxLimit)
	bigMaxN     = big.NewInt(maxN)
	bigTwo      = big.NewInt(2)

	limitNotPositiveBody = []byte(`{"error":"Limit must be greater than 0"}`)
	missingParamsBody    = []byte(`{"error":"Missing required parameters"}`)
	nTooLargeBody        = []byte(`{"error":"n should be less than or equal to 100000"}`)
	busyBody             = []byte(`{"error":"Too many requests for the inefficient algorithm; retry later"}`)
	limitInvalidBody     = []byte(`{"error":"Invalid limit: want an integer from 1 to 1000"}`)
	searchInvalidBody    = []byte(`{"error":"Invalid input: n must be an integer from 1 to 100000, and searchTerm an integer of at least 0"}`)
)

func (s *Service) unboundedResultSet(w http.ResponseWriter, r *http.Request) {
	// DEFECT(PERF-01): limit is clamped rather than validated, and every
	// item costs itemCost (1 ms), so the default request takes a full
	// second (see itemMap). Switched off, limit is validated as declared
	// and the items come at once.
	if !s.defects.Active(defects.PERF01) {
		s.listItems(w, r)
		return
	}
	limit := maxLimit // absent or not an integer: the default
	if text, ok := reqparse.QueryFirst(r.URL.RawQuery, "limit"); ok {
		if v, ok := reqparse.ParseInt(text); ok {
			switch {
			case v.Sign() <= 0:
				respond.JSON(w, http.StatusBadRequest, limitNotPositiveBody)
				return
			case v.Cmp(bigMaxLimit) < 0:
				limit = int(v.Int64())
			}
		}
	}
	start := time.Now()
	body, err := itemMap(r.Context(), limit, s.itemCost)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
		return
	}
	s.work.observe(routeItems, limit, time.Since(start))
	respond.JSON(w, http.StatusOK, body)
}

// listItems is endpoint 9 with PERF-01 switched off: limit is optional
// (its default is 1000) and otherwise an integer from 1 to 1000.
func (s *Service) listItems(w http.ResponseWriter, r *http.Request) {
	limit := maxLimit
	if text, ok := reqparse.QueryFirst(r.URL.RawQuery, "limit"); ok {
		v, ok := reqparse.ParseStrictInt(text)
		if !ok || v.Sign() <= 0 || v.Cmp(bigMaxLimit) > 0 {
			respond.JSON(w, http.StatusBadRequest, limitInvalidBody)
			return
		}
		limit = int(v.Int64())
	}
	start := time.Now()
	body, err := itemMap(r.Context(), limit, 0)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest)
		return
	}
	s.work.observe(routeItems, limit, time.Since(start))
	respond.JSON(w, http.StatusOK, body)
}

func (s *Service) inefficientAlgorithm(w http.ResponseWriter, r *http.Request) {
	// DEFECT(PERF-02): the sequence is generated number by number with
	// schoolbook decimal arithmetic, paced to a cost model that grows with
	// the square of n: 1.2 s at n=100000 on any machine (see slowFibonacci).
	// Switched off, the input is validated as declared and the indices come
	// from the closed form: at most about a millisecond, whatever n.
	if !s.defects.Active(defects.PERF02) {
		s.searchFibonacci(w, r)
		return
	}
	n, term, ok := searchParams(r, reqparse.ParseInt)
	if !ok {
		respond.JSON(w, http.StatusBadRequest, missingParamsBody)
		return
	}
	if n.Cmp(bigMaxN) > 0 {
		respond.JSON(w, http.StatusBadRequest, nTooLargeBody)
		return
	}
	length := 2 // below 2, the sequence is still its two seeds
	if n.Cmp(bigTwo) > 0 {
		length = int(n.Int64())
	}
	if length > cheapN {
		if err := s.fib.acquire(r.Context()); err != nil {
			if errors.Is(err, errQueueFull) {
				w.Header().Set("Retry-After", "1")
				respond.JSON(w, http.StatusServiceUnavailable, busyBody)
				return
			}
			w.WriteHeader(observe.StatusClientClosedRequest) // left while queued
			return
		}
		defer s.fib.release()
	}
	start := time.Now()
	found, err := plantedFibonacci.search(r.Context(), length, term)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
		return
	}
	s.work.observe(routeFibonacci, length, time.Since(start))
	respond.Value(w, http.StatusOK, foundAt{FoundAt: found})
}

// searchFibonacci is endpoint 10 with PERF-02 switched off: n from 1 to
// 100000 and searchTerm at least 0, both integers, or 400; the indices
// among the first n Fibonacci numbers, found without generating them.
func (s *Service) searchFibonacci(w http.ResponseWriter, r *http.Request) {
	n, term, ok := searchParams(r, reqparse.ParseStrictInt)
	if !ok || n.Sign() <= 0 || n.Cmp(bigMaxN) > 0 || term.Sign() < 0 {
		respond.JSON(w, http.StatusBadRequest, searchInvalidBody)
		return
	}
	start := time.Now()
	found := fibonacciIndices(int(n.Int64()), term)
	s.work.observe(routeFibonacci, int(n.Int64()), time.Since(start))
	respond.Value(w, http.StatusOK, foundAt{FoundAt: found})
}

// searchParams reads endpoint 10's n and searchTerm with parse; ok is false
// when either is absent or not an integer.
func searchParams(r *http.Request, parse func(string) (*big.Int, bool)) (n, term *big.Int, ok bool) {
	nText, okN := reqparse.QueryFirst(r.URL.RawQuery, "n")
	termText, okT := reqparse.QueryFirst(r.URL.RawQuery, "searchTerm")
	if !okN || !okT {
		return nil, nil, false
	}
	if n, okN = parse(nText); !okN {
		return nil, nil, false
	}
	term, okT = parse(termText)
	return n, term, okT
}

type foundAt struct {
	FoundAt []int `json:"foundAt"`
}
