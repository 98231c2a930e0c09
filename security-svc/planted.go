package securitysvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
)

// dataForAnybody is endpoint 1 as planted.
func (s *Service) dataForAnybody(w http.ResponseWriter, r *http.Request) {
	// DEFECT(SEC-01): the contract requires the ApiKeyAuth scheme (X-API-Key)
	// and promises 401 without it, but no credential is checked: everyone
	// gets the sensitive data.
	if !s.holdsKey(r) {
		observe.Triggered(w, r) // the data went to someone without the key
	}
	respond.JSON(w, http.StatusOK, sensitiveData)
}
