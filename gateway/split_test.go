package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	securitysvc "github.com/defectshowcase/showcase/security-svc"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

type split struct {
	gateway   *httptest.Server
	upstreams map[string]*httptest.Server // by category name
}

// startSplit starts the four services as separate servers on loopback and
// the gateway proxying to them, every defect active.
func startSplit(t *testing.T) *split {
	t.Helper()
	return startSplitWith(t, catalogue.All())
}

// startSplitWith starts the split deployment with the given defects active
// in every process.
func startSplitWith(t *testing.T, active catalogue.Set) *split {
	t.Helper()
	type svc interface {
		Handler() http.Handler
		Close() error
	}
	must := func(s svc, err error) svc {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	services := map[string]svc{
		"security":    must(securitysvc.New(securitysvc.Config{Defects: active})),
		"errors":      must(errorssvc.New(errorssvc.Config{Defects: active})),
		"conformance": must(conformancesvc.New(conformancesvc.Config{Defects: active})),
		// As the binary configures it: the zero FibQueue would mean no queue.
		"performance": must(performancesvc.New(performancesvc.Config{Defects: active, FibQueue: performancesvc.DefaultFibQueue})),
	}
	env := map[string]string{"DEFECTS": active.String()}
	sp := &split{upstreams: map[string]*httptest.Server{}}
	for name, s := range services {
		ts := httptest.NewServer(s.Handler())
		sp.upstreams[name] = ts
		t.Cleanup(func() {
			ts.Close()
			_ = s.Close()
		})
	}
	env["UPSTREAM_SECURITY"] = sp.upstreams["security"].URL
	env["UPSTREAM_ERRORS"] = sp.upstreams["errors"].URL
	env["UPSTREAM_CONFORMANCE"] = sp.upstreams["conformance"].URL
	env["UPSTREAM_PERFORMANCE"] = sp.upstreams["performance"].URL
	sp.gateway = startEmbedded(t, env) // every category has an upstream: nothing is in-process
	return sp
}

func TestSplitSuite(t *testing.T) {
	t.Parallel()
	sp := startSplit(t)
	suite.Run(t, sp.gateway.URL, sp.gateway.Client())
}

// The behaviour suite with every defect switched off, in front of separate
// services each told so.
func TestSplitSuiteDefectsOff(t *testing.T) {
	t.Parallel()
	sp := startSplitWith(t, catalogue.None())
	suite.RunFor(t, sp.gateway.URL, sp.gateway.Client(), catalogue.None())
}

// Embedded and split give the same status, Content-Type, Allow and body to
// every case, with the defects active and switched off.
func TestModesGiveIdenticalResults(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.All(), catalogue.None()} {
		t.Run("defects "+active.String(), func(t *testing.T) {
			t.Parallel()
			identicalResults(t, active)
		})
	}
}

func identicalResults(t *testing.T, active catalogue.Set) {
	emb := startEmbedded(t, map[string]string{"DEFECTS": active.String()})
	sp := startSplitWith(t, active)
	suite.EachFor(t, active, func(ctx context.Context, t *testing.T, _ suite.Endpoint, c suite.Case) {
		a, err := suite.Do(ctx, emb.Client(), emb.URL, c)
		if err != nil {
			t.Fatal(err)
		}
		b, err := suite.Do(ctx, sp.gateway.Client(), sp.gateway.URL, c)
		if err != nil {
			t.Fatal(err)
		}
		// The collections name the instance they were fetched from: each
		// its own address.
		a.Body = bytes.ReplaceAll(a.Body, []byte(emb.URL), []byte("{base}"))
		b.Body = bytes.ReplaceAll(b.Body, []byte(sp.gateway.URL), []byte("{base}"))
		if err := sameAnswer(a, b); err != nil {
			t.Error(err)
		}
	})
}

// sameAnswer is nil when the embedded answer a and the split answer b are
// the same to a client: status, body and the headers a tool reads.
func sameAnswer(a, b suite.Response) error {
	var diffs []string
	if a.Status != b.Status || string(a.Body) != string(b.Body) {
		diffs = append(diffs, fmt.Sprintf("embedded %d %s, split %d %s", a.Status, suite.Excerpt(a.Body), b.Status, suite.Excerpt(b.Body)))
	}
	for _, h := range []string{"Content-Type", "Content-Length", "Allow", "Retry-After"} {
		if a.Header.Get(h) != b.Header.Get(h) {
			diffs = append(diffs, fmt.Sprintf("%s: embedded %q, split %q", h, a.Header.Get(h), b.Header.Get(h)))
		}
	}
	if diffs != nil {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

// An upstream that cannot be reached fails its own category with 502 JSON;
// the other categories keep answering.
func TestUnreachableUpstreamIsolated(t *testing.T) {
	t.Parallel()
	sp := startSplit(t)
	sp.upstreams["conformance"].Close()
	client := sp.gateway.Client()

	resp, err := client.Get(sp.gateway.URL + suite.PathMissingField)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "application/json" || err != nil {
		t.Fatalf("got %d %s (%v), want 502 JSON", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	if msg, ok := body["error"].(string); !ok || len(body) != 1 {
		t.Fatalf(`want {"error": "..."}, got %v`, body)
	} else {
		t.Logf("502 body: %q", msg)
	}
	for _, path := range []string{suite.PathUnauthenticatedAccess, suite.PathUnboundedResultSet + "?limit=1", suite.PathInefficientAlgorithm + "?n=5&searchTerm=3"} {
		resp, err := client.Get(sp.gateway.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d while another category is down, want 200", path, resp.StatusCode)
		}
	}
}
