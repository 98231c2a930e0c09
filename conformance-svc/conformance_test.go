package conformancesvc

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The four planted deviations are pinned to the byte, served standalone.
func TestResponses(t *testing.T) {
	t.Parallel()
	svc, _ := New(Config{})
	tests := []struct {
		rule, target string
		status       int
		contentType  string
		body         string
	}{
		{"DEFECT(CONF-01) malformed JSON labelled as JSON", "/response-conformance/malformed-json", 200, "application/json", `{success: true}`},
		{"DEFECT(CONF-02) plain text where JSON is declared", "/response-conformance/incorrect-content-type?item_id=error", 200, "text/plain", `Success!`},
		{"DEFECT(CONF-03) a person without age", "/response-conformance/missing-field", 200, "application/json", `{"id":"123","name":"Alice"}`},
		{"DEFECT(CONF-04) an undocumented 404", "/response-conformance/undocumented-status-code?id=1", 404, "application/json", `{"error":"Not Found"}`},
		{"the stored item is found", "/response-conformance/undocumented-status-code?id=0", 200, "application/json", `{"message":"Data for ID 0"}`},
		{"an absent id is the documented 400", "/response-conformance/undocumented-status-code", 400, "application/json", `{"error":"ID is required"}`},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		svc.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
		if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.contentType || rec.Body.String() != tt.body {
			t.Errorf("%s: %d %q %s; want %d %q %s", tt.rule, rec.Code, rec.Header().Get("Content-Type"), rec.Body, tt.status, tt.contentType, tt.body)
		}
	}
}
