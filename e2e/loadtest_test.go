package e2e_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The load test (showcase-load) runs for a few seconds against the
// one-process service and passes: every answer is one the specification
// allows, planted defects included. The number of requests it reports is
// the number the service counted (showcase_http_requests_total, summed
// over every series), and its raw results decode with vegeta's own
// decoder, one per request. Against a server that answers everything 404
// it fails, naming a kind and the answer.
func TestLoadScenario(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t, modulePath+"tools/cmd/showcase-load")
	p := startProcess(t, buildGateway(t))
	out := t.TempDir()
	cmd := exec.Command(bin, "-base", p.base, "-rate", "40", "-duration", "5s", "-out", out)
	combined, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("showcase-load: %v\n%s", err, combined)
	}
	var report struct {
		Requests uint64  `json:"requests"`
		Success  float64 `json:"success_ratio"`
		Kinds    []struct {
			Name       string
			Count      int
			Unexpected int
		} `json:"kinds"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || json.Unmarshal(raw, &report) != nil {
		t.Fatalf("report.json: %v\n%s", err, raw)
	}
	if report.Requests != 200 || report.Success != 1 || len(report.Kinds) != 12 {
		t.Errorf("%d requests, %v as specified, %d kinds; want 200, all, the twelve of the mix\n%s", report.Requests, report.Success, len(report.Kinds), combined)
	}
	if !regexp.MustCompile(`(?m)^\s+\d+s\s+sent \d+\s+answered \d+\s+unexpected 0$`).Match(combined) {
		t.Errorf("no progress lines:\n%s", combined)
	}

	// What the service counted.
	res, err := http.Get(p.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var counted float64
	for _, m := range regexp.MustCompile(`(?m)^showcase_http_requests_total\{[^}]*\} (\S+)$`).FindAllSubmatch(metrics, -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		counted += v
	}
	if counted != float64(report.Requests) {
		t.Errorf("the service counted %v requests, the load test reports %d", counted, report.Requests)
	}

	// The raw results, as the vegeta command line reads them.
	f, err := os.Open(filepath.Join(out, "results.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	n := 0
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("results.bin, result %d: %v", n, err)
			}
			break
		}
		n++
	}
	if n != int(report.Requests) {
		t.Errorf("results.bin holds %d results, the report %d requests", n, report.Requests)
	}

	// A server that answers everything 404: the run fails, naming why.
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	failing := exec.Command(bin, "-base", notFound.URL, "-rate", "40", "-duration", "1s", "-quiet")
	combined, err = failing.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("against a 404 server: %v, want exit status 1\n%s", err, combined)
	}
	if !regexp.MustCompile(`FAILED: [a-z -]+: (GET|POST) \S+ answered 404`).Match(combined) || !strings.Contains(string(combined), "not as specified") {
		t.Errorf("the failure does not name the kind and the answer:\n%s", combined)
	}
}
