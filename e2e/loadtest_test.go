package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The k6 scenario of deploy/loadtest runs for a few seconds against the
// one-process service and finishes with every check passed: every answer is
// one the specification allows, planted defects included.
func TestLoadScenario(t *testing.T) {
	t.Parallel()
	k6 := requireTool(t, "k6")
	p := startProcess(t, buildGateway(t))
	summary := filepath.Join(t.TempDir(), "summary.json")
	cmd := exec.Command(k6, "run", "--quiet", "--no-color", "--summary-export", summary,
		"-e", "BASE_URL="+p.base, "-e", "RATE=40", "-e", "DURATION=5s", "../deploy/loadtest/showcase.js")
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("k6: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Metrics struct {
			Checks     struct{ Passes, Fails float64 } `json:"checks"`
			Iterations struct{ Count float64 }         `json:"iterations"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	checks, iterations := s.Metrics.Checks, s.Metrics.Iterations.Count
	if checks.Fails != 0 || checks.Passes < 100 || iterations < 100 {
		t.Fatalf("k6: %v checks passed, %v failed, %v iterations; want 100+ and no failure\n%s", checks.Passes, checks.Fails, iterations, out)
	}
	t.Logf("k6: %v requests in 5 s, all %v checks passed", iterations, checks.Passes)
}
