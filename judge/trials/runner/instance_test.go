package runner

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/trials/agent"
)

// A trial's fresh instance is the server make run starts, with its limits:
// a request line and headers beyond 64 KiB are refused with 431 (a bare
// http.Server, as the runner once used, takes 1 MiB), its admin port
// answers /readyz, and its log is kept in the trial's folder.
func TestFreshInstanceIsMakeRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, err := newInstance(t.Context(), "", "", catalogue.All(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, in.URL()+"/response-conformance/missing-field", nil)
	req.Header.Set("X-Padding", strings.Repeat("a", 100<<10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 100 KiB header: %s, want 431", res.Status)
	}
	res, err = http.Get(in.admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %s", res.Status)
	}
	if _, err := in.Truth(t.Context()); err != nil {
		t.Error(err)
	}
	if err := in.Close(); err != nil {
		t.Error(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "server.log"))
	if err != nil || !strings.Contains(string(log), `"msg":"listening"`) || !strings.Contains(string(log), `"msg":"stopped"`) {
		t.Errorf("the instance's log: %v\n%s", err, log)
	}
}

// The agent asks the admin port where the gateway serves the ground truth.
func TestAgentAsksTheGatewaysPath(t *testing.T) {
	if agent.PathDefects != gateway.PathDefects {
		t.Errorf("agent.PathDefects %q, the gateway's %q", agent.PathDefects, gateway.PathDefects)
	}
}
