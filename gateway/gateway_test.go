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
