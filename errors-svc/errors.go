// Package errorssvc serves the internal-server-errors category: endpoints 2,
// 3 and 4, each of which ends some valid-looking requests in a server error.
package errorssvc

import (
	"context"
	"net/http"
	"time"

	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Default listen addresses of the standalone binary.
const (
	DefaultAddr      = ":8082"
	DefaultAdminAddr = ":9092"
)

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	// SQLitePath is the database file of endpoint 3; empty means in memory.
	SQLitePath string
	// MaxRows caps the stored rows; the oldest are pruned beyond it.
	MaxRows int
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int64
	Defects      defects.Set // the zero value: every defect active
}

// Defaults of the settings.
const (
	DefaultMaxRows = 10000
)

// ConfigFromEnv reads SQLITE_PATH, SQLITE_MAX_ROWS and MAX_BODY_BYTES.
func ConfigFromEnv(d server.Deps) Config {
	env := d.Env
	return Config{
		Telemetry:    d.Telemetry,
		SQLitePath:   env.String("SQLITE_PATH", ""),
		MaxRows:      env.Int("SQLITE_MAX_ROWS", DefaultMaxRows, 1, 1_000_000_000),
		MaxBodyBytes: int64(env.Int("MAX_BODY_BYTES", reqparse.DefaultMaxBodyBytes, 1024, 1<<30)),
		Defects:      defects.FromEnv(env),
	}
}

// Service is the internal-server-errors category's router and its storage.
type Service struct {
	handler http.Handler
	store   *recordStore
	maxBody int64
	defects defects.Set
}

// New opens the store and builds the routes.
func New(cfg Config) (*Service, error) {
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = reqparse.DefaultMaxBodyBytes
	}
	// DEFECT(ERR-02): the contract promises text up to 255 characters, but
	// the texts go to a column declared 16 wide whose check admits at most
	// 15 characters, so longer text fails to store and the database's error
	// text reaches the client. Switched off, they go to a table that holds
	// 255, and the handler rejects what the contract forbids first.
	t := records
	if !cfg.Defects.Active(defects.ERR02) {
		t = texts
	}
	in := cfg.Telemetry.Service("errors-svc")
	cfg.Defects.Report(in, defects.IDsOf("errors")...)
	st, err := openStore(cfg.SQLitePath, t, cfg.MaxRows)
	if err != nil {
		return nil, err
	}
	s := &Service{store: st, maxBody: cfg.MaxBodyBytes, defects: cfg.Defects}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodPost, Pattern: "/internal-server-errors/improper-input-type-handling", Handler: s.improperInputTypeHandling},
		{Method: http.MethodPost, Pattern: "/internal-server-errors/exceeding-column-size", Handler: s.exceedingColumnSize},
		{Method: http.MethodPost, Pattern: "/internal-server-errors/improper-unicode-encoding", Handler: s.improperUnicodeEncoding},
	}, in)
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close closes the database.
func (s *Service) Close() error { return s.store.close() }

// Ready reports whether the database answers.
func (s *Service) Ready(ctx context.Context) error { return s.store.db.PingContext(ctx) }

// StoredRows counts the rows endpoint 3 holds now.
func (s *Service) StoredRows(ctx context.Context) (int64, error) { return s.store.count(ctx) }

// storeTimeout bounds one insert, queueing for the single connection included.
const storeTimeout = 30 * time.Second
