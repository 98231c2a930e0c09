// Package performancesvc serves the performance category: endpoints 9 and
// 10, whose cost grows with their input.
package performancesvc

import (
	"math/big"
	"net/http"
	"runtime"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
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
	Defects  catalogue.Set // the zero value: every defect active
}

// DefaultFibWorkers leaves one core to the other endpoints, so that they
// stay fast while endpoint 10 is hammered.
func DefaultFibWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// DefaultFibQueue is how many endpoint 10 requests may wait for a worker.
const DefaultFibQueue = 16

// Register declares the service's own settings (ITEM_COST, FIB_WORKERS,
// FIB_QUEUE), which fill cfg when s is parsed.
func (cfg *Config) Register(s *server.Settings) {
	s.Duration(&cfg.ItemCost, "item-cost", "ITEM_COST", time.Millisecond, "cost of one item of endpoint 9")
	s.Int(&cfg.FibWorkers, "fib-workers", "FIB_WORKERS", DefaultFibWorkers(), 1, 1024, "endpoint 10 computations at once (default: CPUs - 1, at least 1)")
	s.Int(&cfg.FibQueue, "fib-queue", "FIB_QUEUE", DefaultFibQueue, 0, 1_000_000, "endpoint 10 requests that may wait; beyond it, 503 with Retry-After")
}

// Program is the standalone binary.
func Program() server.Program {
	return server.Program{Name: "performance-svc", DefaultAddr: ":8084", DefaultAdminAddr: ":9094", Configure: func(s *server.Settings) server.Builder {
		var cfg Config
		s.Text(&cfg.Defects, "defects", "DEFECTS", catalogue.SettingUsage)
		cfg.Register(s)
		return func(tel *observe.Telemetry) (server.Built, error) {
			cfg.Telemetry = tel
			return server.ServiceBuilt(New(cfg))
		}
	}}
}

// Service is the performance category's router.
type Service struct {
	handler  http.Handler
	itemCost time.Duration
	fib      *limiter
	work     *workMetrics
}

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
	s := &Service{itemCost: cfg.ItemCost, fib: newLimiter(cfg.FibWorkers, cfg.FibQueue), work: newWorkMetrics(in.Registerer)}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/performance/unbounded-result-set", Defect: "PERF-01", Planted: s.clampedSlowItems, Conformant: s.listItems},
		{Method: http.MethodGet, Pattern: "/performance/inefficient-algorithm", Defect: "PERF-02", Planted: s.generateAndSearch, Conformant: s.searchFibonacci},
	}, cfg.Defects.Switch, in)
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
	// noticeable is the planted slowness from which a request counts as
	// having triggered its performance defect (observe.Triggered): a tenth
	// of the usual one-second limit, a hundred times what the conformant
	// answers take. Endpoint 9 reaches it at limit 100 (and with the
	// default), endpoint 10 at n 28868.
	noticeable = 100 * time.Millisecond
)

var (
	bigMaxLimit = big.NewInt(maxLimit)
	bigMaxN     = big.NewInt(maxN)
)

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
