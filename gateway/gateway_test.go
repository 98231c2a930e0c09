package gateway_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/suite"
	"github.com/defectshowcase/showcase/platform/server"
)

// startEmbedded serves the gateway with every category in-process.
func startEmbedded(t *testing.T, env map[string]string) *httptest.Server {
	t.Helper()
	g, closeFn, err := gateway.Assemble(server.NewEnv(func(k string) string { return env[k] }), discard())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(func() {
		ts.Close()
		if err := closeFn(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestEmbeddedSuite(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, nil)
	suite.Run(t, ts.URL, ts.Client())
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
