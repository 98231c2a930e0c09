package securitysvc

import (
	"net/http"

	"github.com/defectshowcase/showcase/platform/respond"
)

// dataForAnybody is endpoint 1 as planted.
func (s *Service) dataForAnybody(w http.ResponseWriter, _ *http.Request) {
	// DEFECT(SEC-01): the contract requires the ApiKeyAuth scheme (X-API-Key)
	// and promises 401 without it, but no credential is checked: everyone
	// gets the sensitive data.
	respond.JSON(w, http.StatusOK, sensitiveData)
}
