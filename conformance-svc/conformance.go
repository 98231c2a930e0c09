// Package conformancesvc serves the response-conformance category:
// endpoints 5 to 8, whose responses differ from the declared contract.
package conformancesvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
	"github.com/defectshowcase/showcase/platform/server"
)

// Default listen addresses of the standalone binary.
const (
	DefaultAddr      = ":8083"
	DefaultAdminAddr = ":9093"
)

// Config configures the service. It has nothing to tune but its telemetry.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
}

// ConfigFromEnv reads the service's settings.
func ConfigFromEnv(d server.Deps) Config {
	return Config{Telemetry: d.Telemetry}
}

// Service is the response-conformance category's router.
type Service struct{ handler http.Handler }

// New builds the service.
func New(cfg Config) (*Service, error) {
	return &Service{handler: routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/response-conformance/malformed-json", Handler: malformedJSON},
		{Method: http.MethodGet, Pattern: "/response-conformance/incorrect-content-type", Handler: incorrectContentType},
		{Method: http.MethodGet, Pattern: "/response-conformance/missing-field", Handler: missingField},
		{Method: http.MethodGet, Pattern: "/response-conformance/undocumented-status-code", Handler: undocumentedStatusCode},
	}, cfg.Telemetry.Service("conformance-svc"))}, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

var (
	// DEFECT(CONF-01): labelled application/json, but the property name is
	// not quoted, so no JSON parser accepts it.
	malformedBody = []byte(`{success: true}`)
	// DEFECT(CONF-02): the contract promises application/json with a name;
	// this is plain text, on every request.
	plainTextBody = []byte(`Success!`)
	// DEFECT(CONF-03): Person requires id, name and age; age is missing.
	personWithoutAge = []byte(`{"id":"123","name":"Alice"}`)
)

func malformedJSON(w http.ResponseWriter, _ *http.Request) {
	respond.Raw(w, http.StatusOK, respond.ContentTypeJSON, malformedBody)
}

func incorrectContentType(w http.ResponseWriter, _ *http.Request) {
	respond.Raw(w, http.StatusOK, "text/plain", plainTextBody)
}

func missingField(w http.ResponseWriter, _ *http.Request) {
	respond.JSON(w, http.StatusOK, personWithoutAge)
}

// items is the fixed store of endpoint 8, keyed by the text of the id.
var items = map[string]string{"0": "Data for ID 0"}

var (
	idRequiredBody = []byte(`{"error":"ID is required"}`)
	notFoundBody   = []byte(`{"error":"Not Found"}`)
)

func undocumentedStatusCode(w http.ResponseWriter, r *http.Request) {
	id, ok := reqparse.QueryFirst(r.URL.RawQuery, "id")
	if !ok {
		respond.JSON(w, http.StatusBadRequest, idRequiredBody)
		return
	}
	message, found := items[id]
	if !found {
		// DEFECT(CONF-04): 404 is not among the declared responses (200, 400).
		respond.JSON(w, http.StatusNotFound, notFoundBody)
		return
	}
	respond.Value(w, http.StatusOK, messageBody{Message: message})
}

type messageBody struct {
	Message string `json:"message"`
}
