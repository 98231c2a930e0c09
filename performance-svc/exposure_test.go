package performancesvc

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/suite"
)

// A performance defect counts a request as triggered from 100 ms of planted
// slowness on: endpoint 9 from limit 100, and whenever limit is clamped to
// the maximum; endpoint 10 from n 28868.
func TestExposureThreshold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		target string
		counts bool
	}{
		{suite.PathUnboundedResultSet + "?limit=99", false},
		{suite.PathUnboundedResultSet + "?limit=100", true},
		{suite.PathUnboundedResultSet + "?limit=none", true},
		{suite.PathUnboundedResultSet + "?limit=-1", false},
		{suite.PathInefficientAlgorithm + "?n=28867&searchTerm=1", false},
		{suite.PathInefficientAlgorithm + "?n=28868&searchTerm=1", true},
		{suite.PathInefficientAlgorithm + "?n=-5&searchTerm=1", false},
	} {
		t.Run(c.target, func(t *testing.T) {
			t.Parallel()
			tel := observe.Discard()
			svc, err := New(Config{Telemetry: tel, Defects: catalogue.All()})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			svc.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
			_, seen := tel.Exposure.Snapshot()
			if counted := len(seen) == 1; counted != c.counts || rec.Code/100 == 5 {
				t.Errorf("%d, exposure %v; want counted %v", rec.Code, seen, c.counts)
			}
		})
	}
}
