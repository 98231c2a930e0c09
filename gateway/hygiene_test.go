package gateway_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// internals are what no response may show: stack traces, source paths, Go
// type and package names, Go's own error wording.
var internals = regexp.MustCompile(`goroutine \d|\.go:\d|runtime\.|panic\(|\bmain\.|github\.com/|/usr/local/go|interface \{\}|\[\][a-z*]|map\[[a-z]|\*[a-z]+\.[A-Z]|json: cannot|strconv\.|sql: `)

// No answer, of any case of the suite (with the defects active and
// switched off) nor of the gateway's own failures, shows an internal; the planted database error of endpoint 3 is SQLite's
// text and passes the same check.
func TestNoInternalsInResponses(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, nil)
	check := func(t *testing.T, what string, r suite.Response) {
		t.Helper()
		text := string(r.Body)
		for k, vs := range r.Header {
			text += "\n" + k + ": " + strings.Join(vs, ",")
		}
		if m := internals.FindString(text); m != "" {
			t.Errorf("%s shows %q: %s", what, m, suite.Excerpt(r.Body))
		}
	}
	suite.Each(t, func(ctx context.Context, t *testing.T, _ suite.Endpoint, c suite.Case) {
		r, err := suite.Do(ctx, ts.Client(), ts.URL, c)
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.Target, r)
	})
	off := startEmbedded(t, map[string]string{"DEFECTS": "none"})
	t.Run("defects off", func(t *testing.T) {
		suite.EachFor(t, catalogue.None(), func(ctx context.Context, t *testing.T, _ suite.Endpoint, c suite.Case) {
			r, err := suite.Do(ctx, off.Client(), off.URL, c)
			if err != nil {
				t.Fatal(err)
			}
			check(t, c.Target, r)
		})
	})

	slow := newRecorder(t, 3*time.Second)
	gw := startEmbedded(t, map[string]string{"UPSTREAM_SECURITY": "http://127.0.0.1:1", "UPSTREAM_PERFORMANCE": slow.URL, "UPSTREAM_PERFORMANCE_TIMEOUT": "100ms"})
	for _, path := range []string{suite.PathUnauthenticatedAccess, suite.PathUnboundedResultSet} {
		r, err := suite.Do(context.Background(), gw.Client(), gw.URL, suite.Case{Target: path})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusBadGateway && r.Status != http.StatusGatewayTimeout {
			t.Errorf("%s: %d, want the gateway's own failure", path, r.Status)
		}
		check(t, path, r)
	}
}
