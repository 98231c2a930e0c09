package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/suite"
	"github.com/defectshowcase/showcase/gateway/web"
	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// startEmbedded serves the gateway with every category in-process.
func startEmbedded(t *testing.T, env map[string]string) *httptest.Server {
	t.Helper()
	return startEmbeddedWith(t, env, observe.Discard())
}

func startEmbeddedWith(t *testing.T, env map[string]string, tel *observe.Telemetry) *httptest.Server {
	t.Helper()
	built, err := gateway.Assemble(server.Deps{Env: server.NewEnv(func(k string) string { return env[k] }), Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(built.Handler)
	t.Cleanup(func() {
		ts.Close()
		if err := built.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func TestEmbeddedSuite(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, nil)
	suite.Run(t, ts.URL, ts.Client())
}

// The behaviour suite with every defect switched off (DEFECTS=none).
func TestEmbeddedSuiteDefectsOff(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, map[string]string{"DEFECTS": "none"})
	suite.RunFor(t, ts.URL, ts.Client(), defects.None())
}

// Each defect switched off alone changes its own endpoint's answers, to
// the conformant ones, and nothing else: every other endpoint answers as
// specified, and a tool finds exactly the other planted deviations in the
// contract served for that setting.
func TestEachDefectSwitchedOffAlone(t *testing.T) {
	t.Parallel()
	for _, d := range defects.Catalogue {
		t.Run(string(d.ID), func(t *testing.T) {
			t.Parallel()
			active := defects.All().Without(d.ID)
			ts := startEmbedded(t, map[string]string{"DEFECTS": active.String()})
			checkFindings(t, ts.URL, active)
		})
	}
}

// The front page's README is the repository's.
func TestReadmeCopyIsCurrent(t *testing.T) {
	t.Parallel()
	root, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	r, err := suite.Do(context.Background(), http.DefaultClient, startEmbedded(t, nil).URL, suite.Case{Target: web.PathReadme})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 200 || !bytes.Equal(r.Body, root) || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("%s: %d %s, and the body differs from ../README.md: run `make contract`", web.PathReadme, r.Status, r.Header.Get("Content-Type"))
	}
}

// The embedded copy of the contract must be the repository's openapi.yaml.
func TestContractCopyIsCurrent(t *testing.T) {
	t.Parallel()
	root, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := gateway.LoadContract()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, c.YAML) {
		t.Fatal("gateway/contract/openapi.yaml differs from ../openapi.yaml: run `make contract`")
	}
	ts := startEmbedded(t, nil)
	resp, err := ts.Client().Get(ts.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(served, root) || resp.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("/openapi.yaml is not the root file's bytes as application/yaml (got %s)", resp.Header.Get("Content-Type"))
	}
	_ = http.MethodGet
}

// startEmbeddedB is startEmbedded for benchmarks; it returns the base URL.
func startEmbeddedB(b *testing.B) string {
	b.Helper()
	built, err := gateway.Assemble(server.Deps{Env: server.NewEnv(func(string) string { return "" }), Telemetry: observe.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(built.Handler)
	b.Cleanup(func() { ts.Close(); _ = built.Close() })
	return ts.URL
}
