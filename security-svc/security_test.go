package securitysvc

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// DEFECT(SEC-01) is pinned: no key, an empty key and any key all get the
// sensitive data, never a 401.
func TestUnauthenticatedAccess(t *testing.T) {
	t.Parallel()
	svc, _ := New(Config{})
	for _, key := range []*string{nil, ptr(""), ptr("wrong"), ptr("Bearer x")} {
		req := httptest.NewRequest(http.MethodGet, "/security/unauthenticated-access", nil)
		if key != nil {
			req.Header.Set("X-API-Key", *key)
		}
		rec := httptest.NewRecorder()
		svc.Handler().ServeHTTP(rec, req)
		var body map[string]any
		err := json.Unmarshal(rec.Body.Bytes(), &body)
		if _, ok := body["data"].(string); rec.Code != 200 || err != nil || !ok || len(body) != 1 {
			t.Errorf("key %v: %d %s, want 200 {\"data\": <string>}", key, rec.Code, rec.Body)
		}
	}
}

func ptr(s string) *string { return &s }
