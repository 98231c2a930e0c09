package securitysvc

import (
	"crypto/subtle"
	"net/http"

	"github.com/defectshowcase/showcase/platform/respond"
)

var unauthorizedBody = []byte(`{"error":"Unauthorized access"}`)

// dataForKeyHolders is endpoint 1 with its defect switched off: the key is
// checked, in constant time.
func (s *Service) dataForKeyHolders(w http.ResponseWriter, r *http.Request) {
	if !s.holdsKey(r) {
		respond.JSON(w, http.StatusUnauthorized, unauthorizedBody)
		return
	}
	respond.JSON(w, http.StatusOK, sensitiveData)
}

// holdsKey reports whether the request carries the API key, compared in
// constant time.
func (s *Service) holdsKey(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), s.apiKey) == 1
}
