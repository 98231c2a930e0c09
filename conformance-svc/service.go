// Package conformancesvc serves the response-conformance category:
// endpoints 5 to 8, whose responses differ from the declared contract.
package conformancesvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	Defects   catalogue.Set      // the zero value: every defect active
}

// Register declares the service's own settings: it has none.
func (cfg *Config) Register(*server.Settings) {}

// Program is the standalone binary.
func Program() server.Program {
	return server.Program{Name: "conformance-svc", DefaultAddr: ":8083", DefaultAdminAddr: ":9093", Configure: func(s *server.Settings) server.Builder {
		var cfg Config
		s.Text(&cfg.Defects, "defects", "DEFECTS", catalogue.SettingUsage)
		cfg.Register(s)
		return func(tel *observe.Telemetry) (server.Built, error) {
			cfg.Telemetry = tel
			return server.ServiceBuilt(New(cfg))
		}
	}}
}

// Service is the response-conformance category's router.
type Service struct {
	handler http.Handler
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	s := &Service{}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/response-conformance/malformed-json", Defect: "CONF-01", Planted: malformedJSON, Conformant: validJSON},
		{Method: http.MethodGet, Pattern: "/response-conformance/incorrect-content-type", Defect: "CONF-02", Planted: plainText, Conformant: nameAsJSON},
		{Method: http.MethodGet, Pattern: "/response-conformance/missing-field", Defect: "CONF-03", Planted: personWithoutAge, Conformant: wholePerson},
		{Method: http.MethodGet, Pattern: "/response-conformance/undocumented-status-code", Defect: "CONF-04", Planted: itemByText, Conformant: itemByInteger},
	}, cfg.Defects.Switch, cfg.Telemetry.Service("conformance-svc"))
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

// items is the fixed store of endpoint 8, keyed by the text of the id.
var items = map[string]string{"0": "Data for ID 0"}

var (
	idRequiredBody = []byte(`{"error":"ID is required"}`)
	notFoundBody   = []byte(`{"error":"Not Found"}`)
)

type messageBody struct {
	Message string `json:"message"`
}
