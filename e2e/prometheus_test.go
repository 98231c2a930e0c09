package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

const modulePath = "github.com/defectshowcase/showcase/"

// split processes: the four services and the gateway in front of them.
type splitProcesses struct {
	gateway  *process
	services map[string]*process // by category
}

func startSplitProcesses(t *testing.T) *splitProcesses {
	t.Helper()
	sp := &splitProcesses{services: map[string]*process{}}
	var env []string
	for _, c := range catalogue.Categories {
		svc := map[string]string{"security": "security-svc", "errors": "errors-svc", "conformance": "conformance-svc", "performance": "performance-svc"}[c.Name]
		p := startProcess(t, buildBinary(t, modulePath+svc+"/cmd/"+svc))
		sp.services[c.Name] = p
		env = append(env, c.Upstream+"="+p.base)
	}
	sp.gateway = startProcess(t, buildBinary(t, modulePath+"gateway/cmd/gateway"), env...)
	return sp
}

// promServer is a real Prometheus server scraping the given targets every second.
type promServer struct{ base string }

func startPrometheus(t *testing.T, targets []string) *promServer {
	t.Helper()
	var ts []string
	for _, tg := range targets {
		ts = append(ts, fmt.Sprintf("%q", tg))
	}
	return startPrometheusWith(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: showcase
    static_configs: [{targets: [%s]}]
`, strings.Join(ts, ", ")))
}

// startPrometheusWith runs a real Prometheus with the configuration cfg.
func startPrometheusWith(t *testing.T, cfg string) *promServer {
	t.Helper()
	bin := requireTool(t, "prometheus")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &promServer{base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not become ready:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type sample struct {
	Metric map[string]string
	Value  float64
}

// query runs an instant PromQL query.
func (p *promServer) query(t *testing.T, expr string) []sample {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", expr, err, r.Status, r.Error)
	}
	var out []sample
	for _, res := range r.Data.Result {
		var v float64
		fmt.Sscan(res.Value[1].(string), &v)
		out = append(out, sample{Metric: res.Metric, Value: v})
	}
	return out
}

// waitFor polls expr until its single value is want.
func (p *promServer) waitFor(t *testing.T, expr string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []sample
	for time.Now().Before(deadline) {
		got = p.query(t, expr)
		if len(got) == 1 && got[0].Value == want {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: %v, want %v", expr, got, want)
}

type sent struct {
	method, target, body string
	times                int
}

func send(t *testing.T, base string, reqs []sent) {
	t.Helper()
	var wg sync.WaitGroup
	client := &http.Client{Timeout: time.Minute}
	for _, s := range reqs {
		for range s.times {
			wg.Go(func() {
				req, _ := http.NewRequest(s.method, base+s.target, strings.NewReader(s.body))
				if s.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
	}
	wg.Wait()
}

func TestPrometheusEndToEnd(t *testing.T) {
	t.Parallel()
	requireTool(t, "prometheus")
	if out, err := exec.Command(requireTool(t, "promtool"), "check", "config", "../deploy/prometheus/prometheus.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool rejects deploy/prometheus/prometheus.yml: %v\n%s", err, out)
	}
	sp := startSplitProcesses(t)
	targets := []string{strings.TrimPrefix(sp.gateway.admin, "http://")}
	for _, p := range sp.services {
		targets = append(targets, strings.TrimPrefix(p.admin, "http://"))
	}
	prom := startPrometheus(t, targets)

	mix := []sent{
		{"GET", suite.PathMissingField, "", 7},
		{"GET", suite.PathUnauthenticatedAccess, "", 5},
		{"GET", suite.PathUndocumentedStatus + "?id=0", "", 3},
		{"GET", suite.PathUndocumentedStatus + "?id=9", "", 4},
		{"POST", suite.PathInputTypeHandling, `{"number":"12a"}`, 2},
		{"POST", suite.PathInputTypeHandling, `{"number":"79927398713"}`, 3},
		{"POST", suite.PathColumnSize, `{"text":"short"}`, 2},
		{"POST", suite.PathColumnSize, `{"text":"much too long for the column"}`, 1},
		{"POST", suite.PathUnicodeEncoding, `{"text":"héllo"}`, 1},
		{"GET", suite.PathUnboundedResultSet + "?limit=1000", "", 3},
		{"GET", suite.PathInefficientAlgorithm + "?n=50&searchTerm=1", "", 3},
		{"GET", suite.PathInefficientAlgorithm + "?n=ten&searchTerm=1", "", 2},
		// Unknown paths and an odd method, so their collapsed series exist
		// before the flood of random ones below.
		{"GET", "/no-such-path", "", 1},
		{"BREW", "/no-such-path", "", 1},
		{"GET", "/security/no-such-path", "", 1},
		{"GET", "/internal-server-errors/no-such-path", "", 1},
		{"GET", "/response-conformance/no-such-path", "", 1},
		{"GET", "/performance/no-such-path", "", 1},
	}
	send(t, sp.gateway.base, mix)
	// What each service must have counted, by route and code.
	want := map[string]float64{
		suite.PathMissingField + " 200":          7,
		suite.PathUnauthenticatedAccess + " 200": 5,
		suite.PathUndocumentedStatus + " 200":    3,
		suite.PathUndocumentedStatus + " 404":    4,
		suite.PathInputTypeHandling + " 500":     2,
		suite.PathInputTypeHandling + " 200":     3,
		suite.PathColumnSize + " 200":            2,
		suite.PathColumnSize + " 500":            1,
		suite.PathUnicodeEncoding + " 500":       1,
		suite.PathUnboundedResultSet + " 200":    3,
		suite.PathInefficientAlgorithm + " 200":  3,
		suite.PathInefficientAlgorithm + " 400":  2,
		"unmatched 404":                          4, // the four services' own unknown paths
	}
	var total float64
	for _, n := range want {
		total += n
	}
	prom.waitFor(t, `sum(showcase_http_requests_total{service!="gateway"})`, total)
	got := map[string]float64{}
	for _, s := range prom.query(t, `sum by (route, code) (showcase_http_requests_total{service!="gateway"})`) {
		got[s.Metric["route"]+" "+s.Metric["code"]] = s.Value
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("Prometheus counted %v for %s, want exactly %v", got[k], k, n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want only %v", got, want)
	}
	prom.waitFor(t, `sum(showcase_http_requests_total{service="gateway",route="unmatched"})`, 2)
	prom.waitFor(t, `sum(showcase_gateway_upstream_request_duration_seconds_count)`, total)

	p50 := prom.query(t, `histogram_quantile(0.5, sum by (le) (showcase_http_request_duration_seconds_bucket{route="/performance/unbounded-result-set"}))`)
	if len(p50) != 1 || p50[0].Value < 0.95 || p50[0].Value > 1.1 || math.IsNaN(p50[0].Value) {
		t.Errorf("p50 of unbounded-result-set at limit=1000: %v, want about 1 s", p50)
	} else {
		t.Logf("PromQL: histogram_quantile(0.5, sum by (le) (showcase_http_request_duration_seconds_bucket{route=\"/performance/unbounded-result-set\"})) = %.4f s", p50[0].Value)
	}

	// 10,000 requests to random paths add no series.
	seriesExpr := `count({__name__=~"showcase_.+"})`
	before := prom.query(t, seriesExpr)[0].Value
	var random []sent
	prefixes := []string{"", "/security", "/internal-server-errors", "/response-conformance", "/performance"}
	for i := range 10000 {
		method := "GET"
		prefix := prefixes[i%len(prefixes)]
		if i%50 == 0 {
			method, prefix = "BREW", ""
		}
		random = append(random, sent{method, fmt.Sprintf("%s/random-%d/%x", prefix, i, i*7919), "", 1})
	}
	sendBounded(t, sp.gateway.base, random, 32)
	prom.waitFor(t, `sum(showcase_http_requests_total{route="unmatched"})`, 10000+4+2)
	if after := prom.query(t, seriesExpr)[0].Value; after != before {
		t.Errorf("random paths grew the series from %v to %v", before, after)
	} else {
		t.Logf("series before and after 10,000 random paths: %v", after)
	}

	// A stopped service is a proxy failure of its category.
	if err := sp.services["conformance"].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-sp.services["conformance"].exited
	send(t, sp.gateway.base, []sent{{"GET", suite.PathMissingField, "", 2}})
	prom.waitFor(t, `sum(showcase_gateway_upstream_failures_total{category="conformance",kind="refused"})`, 2)

	// Every query of the dashboard's service panels returns data (those
	// above its first row; the Campaign row's are a run of trials',
	// TestCampaignInBrowser's).
	var dash struct {
		Panels []struct {
			Type    string
			Title   string
			Targets []struct{ Expr string }
		}
	}
	raw, err := os.ReadFile("../deploy/grafana/showcase-dashboard.json")
	if err != nil || json.Unmarshal(raw, &dash) != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			break
		}
		for _, tg := range p.Targets {
			expr := strings.ReplaceAll(tg.Expr, "$__rate_interval", "1m")
			if res := prom.query(t, expr); len(res) == 0 {
				t.Errorf("dashboard panel %q: %s returns nothing", p.Title, tg.Expr)
			}
		}
	}

	resp, err := http.Get(sp.services["performance"].admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "showcase_http_requests_total{") || strings.HasPrefix(l, "showcase_work_size_count") ||
			strings.HasPrefix(l, `showcase_work_duration_seconds_bucket{route="/performance/unbounded-result-set",service="performance-svc",size="1000",le="1.05"}`) {
			lines = append(lines, l)
		}
	}
	t.Logf("/metrics of performance-svc (excerpt):\n%s", strings.Join(lines, "\n"))
}

// sendBounded sends reqs with at most n in flight.
func sendBounded(t *testing.T, base string, reqs []sent, n int) {
	t.Helper()
	ch := make(chan sent)
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: time.Minute}
	for range n {
		wg.Go(func() {
			for s := range ch {
				req, _ := http.NewRequestWithContext(context.Background(), s.method, base+s.target, nil)
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for _, s := range reqs {
		ch <- s
	}
	close(ch)
	wg.Wait()
}
