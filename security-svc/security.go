// Package securitysvc serves the security category: endpoint 1.
package securitysvc

import (
	"crypto/subtle"
	"net/http"

	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Default listen addresses of the standalone binary.
const (
	DefaultAddr      = ":8081"
	DefaultAdminAddr = ":9091"
)

// DefaultAPIKey is the key endpoint 1 demands when SEC-01 is switched off
// and API_KEY is not set: a published demo key, not a secret.
const DefaultAPIKey = "showcase-demo-key"

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	Defects   defects.Set        // the zero value: every defect active
	// APIKey is the X-API-Key endpoint 1 demands when SEC-01 is off;
	// empty: DefaultAPIKey.
	APIKey string
}

// ConfigFromEnv reads DEFECTS and API_KEY.
func ConfigFromEnv(d server.Deps) Config {
	return Config{Telemetry: d.Telemetry, Defects: defects.FromEnv(d.Env), APIKey: d.Env.String("API_KEY", DefaultAPIKey)}
}

// Service is the security category's router.
type Service struct {
	handler http.Handler
	defects defects.Set
	apiKey  []byte
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.APIKey == "" {
		cfg.APIKey = DefaultAPIKey
	}
	in := cfg.Telemetry.Service("security-svc")
	cfg.Defects.Report(in, defects.IDsOf("security")...)
	s := &Service{defects: cfg.Defects, apiKey: []byte(cfg.APIKey)}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/security/unauthenticated-access", Handler: s.unauthenticatedAccess},
	}, in)
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

var (
	sensitiveData    = []byte(`{"data":"Sensitive data: customer Alice, card 4539 1488 0343 6467, balance 12,345.67 EUR"}`)
	unauthorizedBody = []byte(`{"error":"Unauthorized access"}`)
)

func (s *Service) unauthenticatedAccess(w http.ResponseWriter, r *http.Request) {
	// DEFECT(SEC-01): the contract requires the ApiKeyAuth scheme (X-API-Key)
	// and promises 401 without it, but no credential is checked: everyone
	// gets the sensitive data.
	if s.defects.Active(defects.SEC01) {
		respond.JSON(w, http.StatusOK, sensitiveData)
		return
	}
	// Switched off: the key is checked, in constant time.
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), s.apiKey) != 1 {
		respond.JSON(w, http.StatusUnauthorized, unauthorizedBody)
		return
	}
	respond.JSON(w, http.StatusOK, sensitiveData)
}
