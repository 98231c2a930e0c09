// Package errorssvc serves the internal-server-errors category: endpoints 2,
// 3 and 4, each of which ends some valid-looking requests in a server error.
package errorssvc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
)

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	// SQLitePath is the database file of endpoint 3; empty means in memory.
	SQLitePath string
	// MaxRows caps the stored rows; the oldest are pruned beyond it.
	MaxRows int
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int
	// MaxInflightBodyBytes bounds the bodies being answered at once (a
	// chunked one counts as MaxBodyBytes); beyond it, requests wait.
	MaxInflightBodyBytes int
	Defects              catalogue.Set // the zero value: every defect active
}

// DefaultMaxInflightBodyBytes lets 16 bodies of the largest size be
// answered at once: each costs about three times its size while it is
// (the body, its value, its text), well inside the shipped 128 MiB.
const DefaultMaxInflightBodyBytes = 16 << 20

// Defaults of the settings.
const (
	DefaultMaxRows = 10000
)

// Register declares the service's own settings (SQLITE_PATH,
// SQLITE_MAX_ROWS, MAX_BODY_BYTES), which fill cfg when s is parsed.
func (cfg *Config) Register(s *server.Settings) {
	s.Func("sqlite-path", "SQLITE_PATH", "(in memory)", "database file of endpoint 3, created 0600; a path with '?' is refused", func(v string) error {
		// The driver reads what follows a '?' as its own options: the
		// file would be another, and WAL and the busy timeout lost.
		if strings.ContainsRune(v, '?') {
			return errors.New("a path with '?' cannot be given to SQLite's driver, which reads what follows as options")
		}
		cfg.SQLitePath = v
		return nil
	}, func() string { return cfg.SQLitePath })
	s.Int(&cfg.MaxRows, "sqlite-max-rows", "SQLITE_MAX_ROWS", DefaultMaxRows, 1, 1_000_000_000, "rows kept; the oldest are pruned beyond it")
	s.Int(&cfg.MaxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", reqparse.DefaultMaxBodyBytes, 1024, 1<<30, "request body limit (larger bodies get 413)")
	s.Int(&cfg.MaxInflightBodyBytes, "max-inflight-body-bytes", "MAX_INFLIGHT_BODY_BYTES", DefaultMaxInflightBodyBytes, 1024, 1<<34, "bodies answered at once, in bytes (a chunked one counts as MAX_BODY_BYTES; at least that); beyond it, requests wait their turn")
}

// Program is the standalone binary.
func Program() server.Program {
	return server.Program{Name: "errors-svc", DefaultAddr: ":8082", DefaultAdminAddr: ":9092", Configure: func(s *server.Settings) server.Builder {
		var cfg Config
		s.Text(&cfg.Defects, "defects", "DEFECTS", catalogue.SettingUsage)
		cfg.Register(s)
		return func(tel *observe.Telemetry) (server.Built, error) {
			cfg.Telemetry = tel
			return server.ServiceBuilt(New(cfg))
		}
	}}
}

// Service is the internal-server-errors category's router and its storage.
type Service struct {
	handler http.Handler
	store   *recordStore
	maxBody int64
	bodies  *semaphore.Weighted // the bytes of the bodies being answered
}

// New opens the store and builds the routes.
func New(cfg Config) (*Service, error) {
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = reqparse.DefaultMaxBodyBytes
	}
	if cfg.MaxInflightBodyBytes <= 0 {
		cfg.MaxInflightBodyBytes = DefaultMaxInflightBodyBytes
	}
	st, err := openStore(cfg.SQLitePath, cfg.MaxRows)
	if err != nil {
		return nil, err
	}
	s := &Service{store: st, maxBody: int64(cfg.MaxBodyBytes),
		bodies: semaphore.NewWeighted(int64(max(cfg.MaxInflightBodyBytes, cfg.MaxBodyBytes)))}
	in := cfg.Telemetry.Service("errors-svc")
	st.writeFailures = observe.Register(in.Registerer, prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "showcase", Name: "store_write_failures_total",
		Help: "Writes of endpoint 3 that failed in the store itself (I/O, a full disk), not for the value: the service is unready until a write succeeds.",
	}))
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodPost, Pattern: "/internal-server-errors/improper-input-type-handling", Defect: "ERR-01", Planted: s.budgeted(s.luhnOfAnything), Conformant: s.budgeted(s.luhnOfDigits)},
		{Method: http.MethodPost, Pattern: "/internal-server-errors/exceeding-column-size", Defect: "ERR-02", Planted: s.budgeted(s.storeInNarrowColumn), Conformant: s.budgeted(s.storeText)},
		{Method: http.MethodPost, Pattern: "/internal-server-errors/improper-unicode-encoding", Defect: "ERR-03", Planted: s.budgeted(s.encodeToASCII), Conformant: s.budgeted(s.acceptAnyText)},
	}, cfg.Defects.Switch, in)
	return s, nil
}

// budgeted runs h once the request's body fits in the budget of bodies
// being answered, and gives the room back when h returns: however many
// clients send large bodies at once, the memory they cost is bounded. A
// body larger than the limit weighs nothing (it is refused unread); a
// chunked one weighs the limit. A client that leaves while waiting is
// recorded as 499.
func (s *Service) budgeted(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := r.ContentLength
		switch {
		case n > s.maxBody:
			n = 0
		case n < 0:
			n = s.maxBody
		}
		if n > 0 {
			if err := s.bodies.Acquire(r.Context(), n); err != nil {
				w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
				return
			}
			defer s.bodies.Release(n)
		}
		h(w, r)
	}
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close closes the database.
func (s *Service) Close() error { return s.store.close() }

// Ready reports whether the database answers and, after a write failed in
// the store itself, whether it writes again.
func (s *Service) Ready(ctx context.Context) error { return s.store.ready(ctx) }

// storeFailed marks the request's log line when its write failed in the
// store itself, and reports whether it did.
func storeFailed(w http.ResponseWriter, err error) bool {
	if writeFailure(err) {
		observe.SetLogField(w, "store", "cannot write")
		return true
	}
	return false
}

// StoredRows counts the rows endpoint 3 holds now, in either table.
func (s *Service) StoredRows(ctx context.Context) (int64, error) {
	a, err := s.store.count(ctx, records)
	if err != nil {
		return 0, err
	}
	b, err := s.store.count(ctx, texts)
	return a + b, err
}

// storeTimeout bounds one insert, queueing for the single connection included.
const storeTimeout = 30 * time.Second
