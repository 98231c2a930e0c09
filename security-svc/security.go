// Package securitysvc serves the security category: endpoint 1.
package securitysvc

import (
	"net/http"

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

// Config configures the service. It has nothing to tune but its telemetry.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
}

// ConfigFromEnv reads the service's settings.
func ConfigFromEnv(d server.Deps) Config {
	return Config{Telemetry: d.Telemetry}
}

// Service is the security category's router.
type Service struct{ handler http.Handler }

// New builds the service.
func New(cfg Config) (*Service, error) {
	return &Service{handler: routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/security/unauthenticated-access", Handler: unauthenticatedAccess},
	}, cfg.Telemetry.Service("security-svc"))}, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

var sensitiveData = []byte(`{"data":"Sensitive data: customer Alice, card 4539 1488 0343 6467, balance 12,345.67 EUR"}`)

func unauthenticatedAccess(w http.ResponseWriter, _ *http.Request) {
	// DEFECT(SEC-01): the contract requires the ApiKeyAuth scheme (X-API-Key)
	// and promises 401 without it, but no credential is checked: everyone
	// gets the sensitive data.
	respond.JSON(w, http.StatusOK, sensitiveData)
}
