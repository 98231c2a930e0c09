package securitysvc

import (
	"net/http"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// The specification's behaviour suite, this service's part: its endpoints,
// served by its own router, with every defect active, every defect off and
// each of its defects off alone. Each route's planted and conformant
// variants, and the defect it names, are checked here.
func TestSuite(t *testing.T) {
	t.Parallel()
	suite.RunService(t, "security", func(t *testing.T, active catalogue.Set) http.Handler {
		svc, err := New(Config{Defects: active})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Close() })
		return svc.Handler()
	})
}
