// Package securitysvc serves the security category: endpoint 1.
package securitysvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// DefaultAPIKey is the key endpoint 1 demands when its defect is switched off
// and API_KEY is not set: a published demo key, not a secret.
const DefaultAPIKey = "showcase-demo-key"

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	Defects   catalogue.Set      // the zero value: every defect active
	// APIKey is the X-API-Key endpoint 1 demands when its defect is off;
	// empty: DefaultAPIKey.
	APIKey string
}

// Register declares the service's own settings (API_KEY), which fill cfg
// when s is parsed.
func (cfg *Config) Register(s *server.Settings) {
	s.String(&cfg.APIKey, "api-key", "API_KEY", DefaultAPIKey, "the X-API-Key endpoint 1 demands when its defect is switched off (a published demo key; set your own)").Secret()
}

// Program is the standalone binary.
func Program() server.Program {
	return server.Program{Name: "security-svc", DefaultAddr: ":8081", DefaultAdminAddr: ":9091", Configure: func(s *server.Settings) server.Builder {
		var cfg Config
		s.Text(&cfg.Defects, "defects", "DEFECTS", catalogue.SettingUsage)
		cfg.Register(s)
		return func(tel *observe.Telemetry) (server.Built, error) {
			cfg.Telemetry = tel
			return server.ServiceBuilt(New(cfg))
		}
	}}
}

// Service is the security category's router.
type Service struct {
	handler http.Handler
	apiKey  []byte
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.APIKey == "" {
		cfg.APIKey = DefaultAPIKey
	}
	s := &Service{apiKey: []byte(cfg.APIKey)}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/security/unauthenticated-access", Defect: "SEC-01", Planted: s.dataForAnybody, Conformant: s.dataForKeyHolders},
	}, cfg.Defects.Switch, cfg.Telemetry.Service("security-svc"))
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

var sensitiveData = []byte(`{"data":"Sensitive data: customer Alice, card 4539 1488 0343 6467, balance 12,345.67 EUR"}`)
