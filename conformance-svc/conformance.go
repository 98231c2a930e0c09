// Package conformancesvc serves the response-conformance category:
// endpoints 5 to 8, whose responses differ from the declared contract.
package conformancesvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/defects"
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

// Config configures the service.
type Config struct {
	Telemetry *observe.Telemetry // nil: discarded
	Defects   defects.Set        // the zero value: every defect active
}

// ConfigFromEnv reads DEFECTS.
func ConfigFromEnv(d server.Deps) Config {
	return Config{Telemetry: d.Telemetry, Defects: defects.FromEnv(d.Env)}
}

// Service is the response-conformance category's router.
type Service struct {
	handler http.Handler
	defects defects.Set
}

// New builds the service.
func New(cfg Config) (*Service, error) {
	in := cfg.Telemetry.Service("conformance-svc")
	cfg.Defects.Report(in, defects.IDsOf("conformance")...)
	s := &Service{defects: cfg.Defects}
	s.handler = routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/response-conformance/malformed-json", Handler: s.malformedJSON},
		{Method: http.MethodGet, Pattern: "/response-conformance/incorrect-content-type", Handler: s.incorrectContentType},
		{Method: http.MethodGet, Pattern: "/response-conformance/missing-field", Handler: s.missingField},
		{Method: http.MethodGet, Pattern: "/response-conformance/undocumented-status-code", Handler: s.undocumentedStatusCode},
	}, in)
	return s, nil
}

// Handler serves the category's routes under their full paths.
func (s *Service) Handler() http.Handler { return s.handler }

// Close releases nothing; it is here so every service closes the same way.
func (s *Service) Close() error { return nil }

var (
	malformedBody    = []byte(`{success: true}`)
	flagBody         = []byte(`{"success":true}`)
	plainTextBody    = []byte(`Success!`)
	nameBody         = []byte(`{"name":"Success!"}`)
	personWithoutAge = []byte(`{"id":"123","name":"Alice"}`)
	person           = []byte(`{"id":"123","name":"Alice","age":30}`)
)

func (s *Service) malformedJSON(w http.ResponseWriter, _ *http.Request) {
	// DEFECT(CONF-01): labelled application/json, but the property name is
	// not quoted, so no JSON parser accepts it.
	if s.defects.Active(defects.CONF01) {
		respond.Raw(w, http.StatusOK, respond.ContentTypeJSON, malformedBody)
		return
	}
	respond.JSON(w, http.StatusOK, flagBody)
}

func (s *Service) incorrectContentType(w http.ResponseWriter, _ *http.Request) {
	// DEFECT(CONF-02): the contract promises application/json with a name;
	// this is plain text, on every request.
	if s.defects.Active(defects.CONF02) {
		respond.Raw(w, http.StatusOK, "text/plain", plainTextBody)
		return
	}
	respond.JSON(w, http.StatusOK, nameBody)
}

func (s *Service) missingField(w http.ResponseWriter, _ *http.Request) {
	// DEFECT(CONF-03): Person requires id, name and age; age is missing.
	if s.defects.Active(defects.CONF03) {
		respond.JSON(w, http.StatusOK, personWithoutAge)
		return
	}
	respond.JSON(w, http.StatusOK, person)
}

// items is the fixed store of endpoint 8, keyed by the text of the id.
var items = map[string]string{"0": "Data for ID 0"}

var (
	idRequiredBody = []byte(`{"error":"ID is required"}`)
	notFoundBody   = []byte(`{"error":"Not Found"}`)
	idInvalidBody  = []byte(`{"error":"Invalid input: id must be an integer"}`)
)

func (s *Service) undocumentedStatusCode(w http.ResponseWriter, r *http.Request) {
	id, ok := reqparse.QueryFirst(r.URL.RawQuery, "id")
	if !ok {
		respond.JSON(w, http.StatusBadRequest, idRequiredBody)
		return
	}
	if !s.defects.Active(defects.CONF04) {
		// Switched off: the id is read as the contract's integer, and an
		// id with no item is 404, which the corrected contract declares.
		n, ok := reqparse.ParseStrictInt(id)
		if !ok {
			respond.JSON(w, http.StatusBadRequest, idInvalidBody)
			return
		}
		message, found := items[n.String()] // the canonical text: 00 and -0 are 0
		if !found {
			respond.JSON(w, http.StatusNotFound, notFoundBody)
			return
		}
		respond.Value(w, http.StatusOK, messageBody{Message: message})
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
