package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/codecov"
	"github.com/defectshowcase/showcase/suite"
)

// coverDir is where buildCover built, once it has.
var coverDir string

// buildCover builds the five programs as make build COVER=1 does (the
// Makefile's own command) into a temporary folder, once per test binary.
var buildCover = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "showcase-cover")
	if err != nil {
		return "", err
	}
	coverDir = dir // TestMain removes it
	out, err := exec.Command("make", "-C", "..", "--no-print-directory", "build", "COVER=1", "BIN="+dir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("make build COVER=1: %v\n%s", err, out)
	}
	return dir, nil
})

func coverBinary(t testing.TB, name string) string {
	t.Helper()
	dir, err := buildCover()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// The build with Go's coverage (make build COVER=1) keeps the planted
// behaviour: the endpoint suite passes against it, and the performance
// defects keep their times (a second for 1000 items, 1.2 s at n=100000).
// Its admin port's snapshots, read by go tool covdata, say that the suite
// ran every planted defect's code and some of every endpoint's functions;
// a reset clears them, and a build without coverage answers 404.
func TestCoverBuild(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		need(t, "make is not installed")
	}
	p := startProcess(t, coverBinary(t, "gateway"))
	client := &http.Client{Timeout: time.Minute}
	t.Run("suite", func(t *testing.T) { suite.Run(t, p.base, client) })
	if t.Failed() {
		return
	}
	for _, tc := range []struct {
		target string
		least  time.Duration
	}{
		{catalogue.EndpointOf(catalogue.PERF01).Path, time.Second},
		{catalogue.EndpointOf(catalogue.PERF02).Path + "?n=100000&searchTerm=1", 1200 * time.Millisecond},
		{catalogue.EndpointOf(catalogue.PERF02).Path + "?n=30000&searchTerm=1", 108 * time.Millisecond},
	} {
		start := time.Now()
		res, err := suite.Do(t.Context(), client, p.base, suite.Case{Target: tc.target})
		took := time.Since(start)
		if err != nil || res.Status != http.StatusOK || took < tc.least || took > tc.least+5*time.Second {
			t.Errorf("GET %s: %v %v in %v, want 200 in %v or a little more", tc.target, res.Status, err, took, tc.least)
		}
	}

	raw := filepath.Join(t.TempDir(), "snapshot")
	if err := codecov.Snapshot(t.Context(), client, p.admin, raw); err != nil {
		t.Fatal(err)
	}
	rep := codecov.Compute(t.Context(), raw, "..")
	if rep.Missing != "" {
		t.Fatalf("not computed: %s", rep.Missing)
	}
	t.Logf("after the suite: %s", strings.TrimSpace(rep.Text()))
	if rep.Statements.Covered == 0 || rep.Statements.Covered >= rep.Statements.Total {
		t.Errorf("statements %s", rep.Statements)
	}
	var pkgs []string
	for _, p := range rep.Packages {
		pkgs = append(pkgs, strings.TrimPrefix(p.Name, codecov.ModulePrefix))
	}
	for _, want := range []string{"gateway", "platform/routes", "security-svc", "errors-svc", "conformance-svc", "performance-svc"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("packages %q lack %s", pkgs, want)
		}
	}
	if len(rep.Endpoints) != len(catalogue.Endpoints) {
		t.Errorf("%d endpoints, want %d: %+v", len(rep.Endpoints), len(catalogue.Endpoints), rep.Endpoints)
	}
	for _, e := range rep.Endpoints {
		if e.Covered == 0 || len(e.Functions) < 2 {
			t.Errorf("endpoint %s: %s over %q, want some of its planted and conformant handlers' statements", e.Name, e.Count, e.Functions)
		}
	}
	if len(rep.Defects) != len(catalogue.Defects) {
		t.Errorf("%d defects' code, want %d", len(rep.Defects), len(catalogue.Defects))
	}
	for _, d := range rep.Defects {
		if !d.Executed || len(d.Sites) == 0 {
			t.Errorf("%s's planted code %s at %q: not executed by the suite", d.ID, d.Count, d.Sites)
		}
	}

	res, err := client.Post(p.admin+gateway.PathDefectsReset, "", nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("reset: %v %v", res, err)
	}
	res.Body.Close()
	again := filepath.Join(t.TempDir(), "after-reset")
	if err := codecov.Snapshot(t.Context(), client, p.admin, again); err != nil {
		t.Fatal(err)
	}
	after := codecov.Compute(t.Context(), again, "..")
	for _, d := range after.Defects {
		if d.Executed {
			t.Errorf("%s's planted code executed after the reset", d.ID)
		}
	}
	if after.Statements.Covered >= rep.Statements.Covered/2 {
		t.Errorf("after the reset %s, before %s: the counters were not cleared", after.Statements, rep.Statements)
	}

	plain := startProcess(t, buildGateway(t))
	if err := codecov.Snapshot(t.Context(), client, plain.admin, t.TempDir()); err != codecov.ErrNotBuilt {
		t.Errorf("a build without coverage: %v, want %v", err, codecov.ErrNotBuilt)
	}
}

// Where no Go toolchain is at hand the raw data is kept and the report
// says so; computed again where Go is, it is whole.
func TestCoverWithoutGo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		need(t, "make is not installed")
	}
	p := startProcess(t, coverBinary(t, "gateway"))
	raw := filepath.Join(t.TempDir(), "snapshot")
	if err := codecov.Snapshot(context.Background(), http.DefaultClient, p.admin, raw); err != nil {
		t.Fatal(err)
	}
	rep := codecov.ComputeWith(t.Context(), raw, "..", "")
	if !strings.Contains(rep.Missing, "no Go toolchain") || rep.Raw != raw || rep.Statements.Total != 0 {
		t.Errorf("without Go: %+v", rep)
	}
	if again := codecov.Compute(t.Context(), raw, ".."); again.Missing != "" || again.Statements.Total == 0 || len(again.Defects) != len(catalogue.Defects) {
		t.Errorf("computed again where Go is: %+v", again)
	}
}

// What the build with Go's coverage costs a request: the plain gateway and
// the cover build as processes, asked in alternating blocks over loopback
// in one run (a GET of endpoint 7 and a POST of endpoint 2), so that the
// ratio does not depend on the machine's load. Run by make bench.
func BenchmarkCoverBuild(b *testing.B) {
	plain := startProcess(b, buildBinary(b, modulePath+"gateway/cmd/gateway"))
	covered := startProcess(b, coverBinary(b, "gateway"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for _, c := range []suite.Case{
		{Target: catalogue.EndpointOf(catalogue.CONF03).Path},
		{Method: http.MethodPost, Target: catalogue.EndpointOf(catalogue.ERR01).Path, ContentType: "application/json", Body: `{"number":"79927398713"}`},
	} {
		name := "GET"
		if c.Method != "" {
			name = c.Method
		}
		b.Run(name, func(b *testing.B) {
			const blocks, block = 20, 200
			var took [2]time.Duration
			for b.Loop() {
				for range blocks {
					for i, p := range []*process{plain, covered} {
						start := time.Now()
						for range block {
							if res, err := suite.Do(context.Background(), client, p.base, c); err != nil || res.Status != http.StatusOK {
								b.Fatalf("%v %v", res.Status, err)
							}
						}
						took[i] += time.Since(start)
					}
				}
			}
			n := time.Duration(b.N * blocks * block)
			b.ReportMetric(float64((took[0] / n).Nanoseconds()), "ns-plain")
			b.ReportMetric(float64((took[1] / n).Nanoseconds()), "ns-cover")
			b.ReportMetric(100*(float64(took[1])/float64(took[0])-1), "%-cost")
		})
	}
}

// Every format of the scorecard carries the coverage the instance measured
// (a build with Go's coverage: API and code), read by default from beside
// the -exposure URL, and what a WFC report says its tool covered.
func TestScorecardCoverage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		need(t, "make is not installed")
	}
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	p := startProcess(t, coverBinary(t, "gateway"))
	client := &http.Client{Timeout: time.Minute}
	for _, def := range catalogue.Defects {
		if def.ID == catalogue.PERF02 {
			continue
		}
		for _, tr := range def.Triggers {
			if _, err := suite.Do(t.Context(), client, p.base, suite.Trigger(def, tr)); err != nil {
				t.Fatal(err)
			}
		}
	}
	report := "../judge/score/testdata/wfc/full.json"
	args := func(format string) []string {
		return []string{"-exposure", p.admin + gateway.PathDefects, "-source", "..", "-format", format, report}
	}
	out, err := exec.Command(scorer, args("json")...).Output()
	if err != nil {
		t.Fatalf("showcase-score: %v", err)
	}
	var sc struct {
		Coverage struct {
			API *struct {
				TCL      int `json:"tcl"`
				Criteria []struct {
					Name           string
					Covered, Total int
				}
			} `json:"api"`
			Code *codecov.Report `json:"code"`
			Tool []struct {
				ToolName string `json:"toolName"`
			} `json:"tool_said"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal(out, &sc); err != nil {
		t.Fatal(err)
	}
	c := sc.Coverage
	if c.API == nil || len(c.API.Criteria) != 9 || c.API.Criteria[1].Covered != 9 {
		t.Errorf("API coverage %+v, want nine criteria, operations 9 (PERF-02 never called)", c.API)
	}
	if c.Code == nil || c.Code.Missing != "" || c.Code.Statements.Covered == 0 {
		t.Fatalf("code coverage %+v, want it computed", c.Code)
	}
	for _, d := range c.Code.Defects {
		if d.Executed != (d.ID != string(catalogue.PERF02)) {
			t.Errorf("%s's planted code executed %v: only PERF-02's was not", d.ID, d.Executed)
		}
	}
	if len(c.Tool) != 1 || c.Tool[0].ToolName != "ExampleFuzzer heuristics" {
		t.Errorf("the tool's own coverage %+v, want the report's extra", c.Tool)
	}
	for format, want := range map[string][]string{
		"text":     {"API coverage, as the instance measured it: TCL 0 of 6: paths 9/10", "code coverage, as the instance measured it: statements", "planted code executed for 9 of 10 defects", "the tool says it covered: ExampleFuzzer heuristics: HTTP status per endpoint 15/30, Lines 1234/?"},
		"markdown": {"| operations | 2 | 9 | 10 |", "Answered with a status the contract does not document: GET /response-conformance/undocumented-status-code 404."},
		"junit":    {`<property name="coverage.api.tcl" value="0 of 6"></property>`, `name="coverage.api.operations" value="9/10"`},
		"sarif":    {`"coverage.api.operations": "9/10"`, `"coverage.code": "statements`},
		"svg":      {"API coverage TCL 0 of 6 · operations 9/10"},
	} {
		out, err := exec.Command(scorer, args(format)...).Output()
		if err != nil {
			t.Fatalf("-format %s: %v", format, err)
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("-format %s lacks %q:\n%s", format, w, out)
			}
		}
	}
}

// The reference tool's WFC report, given the instance's admin port, carries
// the API coverage the instance measured of its run as its extra, valid
// against WFC's schema but for SEC-01's F207; the scorer shows it as what
// the tool says, equal to what the instance saw.
func TestReplayCarriesTheTargetsCoverage(t *testing.T) {
	t.Parallel()
	replay := buildBinary(t, modulePath+"judge/cmd/showcase-replay")
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	p := startProcess(t, buildGateway(t))
	out := filepath.Join(t.TempDir(), "report.json")
	if b, err := exec.Command(replay, "-base", p.base, "-admin", p.admin, "-format", "wfc", "-out", out).CombinedOutput(); err != nil {
		t.Fatalf("showcase-replay: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if problems := wfctest.Check(data); len(problems) != 1 || !strings.Contains(problems[0], "207") {
		t.Errorf("schema problems %q, want F207's alone", problems)
	}
	var rep wfc.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	target := coverageAt(t, p.admin)
	if len(rep.Extra) != 1 || len(rep.Extra[0].Criteria) != 11 {
		t.Fatalf("extra %+v", rep.Extra)
	}
	for i, c := range target.Criteria {
		got := rep.Extra[0].Criteria[i]
		if got.Name != "API "+c.Name || got.Covered != c.Covered || got.Total == nil || *got.Total != c.Total {
			t.Errorf("extra %s %d/%v, the instance %s %d/%d", got.Name, got.Covered, got.Total, c.Name, c.Covered, c.Total)
		}
	}
	if ops, _ := target.Criterion(coverage.Operations); ops.Covered != ops.Total {
		t.Errorf("the reference tool called %d of %d operations", ops.Covered, ops.Total)
	}
	text, err := exec.Command(scorer, "-exposure", p.admin+gateway.PathDefects, out).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "the tool says it covered: "+wfc.TargetToolName) || !strings.Contains(string(text), "API operations 10/10") {
		t.Errorf("the scorecard:\n%s", text)
	}
}

// A deployment's code coverage: three replicas of the cover build, each
// in a mount namespace of its own whose /etc/hosts names all three
// (127.0.0.1 to 127.0.0.3) as replicas.test, PEERS=replicas.test:PORT, as
// a headless Service's name resolves on Kubernetes. Each replica gets a
// different part of the suite. The deployment's /coverage/code, asked of
// one replica, is the archive of every replica's counters, and go tool
// covdata reads it as it reads what `go tool covdata merge` makes of the
// three replicas' own snapshots: the same count for every statement of the
// four services' code (the gateway's own code runs in answering the
// snapshots themselves, so it is left out), and more of it covered than by
// any one replica. The host's /etc/hosts is untouched.
func TestDeploymentCodeCoverage(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		need(t, "a mount namespace of its own for each replica needs root")
	}
	unshare := requireTool(t, "unshare")
	bin := coverBinary(t, "gateway")
	hostsBefore, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	writeFile(t, hosts, "127.0.0.1 localhost\n127.0.0.1 replicas.test\n127.0.0.2 replicas.test\n127.0.0.3 replicas.test\n")
	port := freePort(t)
	var reps []*process
	for k := 1; k <= 3; k++ {
		cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$1" /etc/hosts && exec "$2" -addr 127.0.0.1:0 -admin-addr "$3"`,
			"sh", hosts, bin, fmt.Sprintf("127.0.0.%d:%s", k, port))
		cmd.Env = append(os.Environ(), "PEERS=replicas.test:"+port)
		reps = append(reps, startCommand(t, cmd))
	}
	client := &http.Client{Timeout: time.Minute}
	i := 0
	for _, ep := range suite.Endpoints() {
		for _, c := range ep.Cases {
			if _, err := suite.Do(t.Context(), client, reps[i%len(reps)].base, ep.For(c, catalogue.All())); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}

	dir := t.TempDir()
	var own []string
	for k, r := range reps {
		d := filepath.Join(dir, fmt.Sprintf("replica-%d", k+1))
		if err := codecov.Snapshot(t.Context(), client, r.admin, d); err != nil {
			t.Fatal(err)
		}
		own = append(own, d)
	}
	deployment := filepath.Join(dir, "deployment")
	if err := codecov.Snapshot(t.Context(), client, reps[1].admin+"?scope=deployment", deployment); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "merged")
	if err := os.Mkdir(merged, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "go", "tool", "covdata", "merge", "-i="+strings.Join(own, ","), "-o="+merged)
	services := func(in string) (map[string]string, int) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "profile.txt")
		run(t, nil, "go", "tool", "covdata", "textfmt", "-i="+in, "-o="+out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		counts, covered := map[string]string{}, 0
		for _, line := range strings.Split(string(data), "\n") {
			block, count, ok := strings.Cut(line, " ")
			if ok && strings.Contains(block, "-svc/") {
				counts[block] = count
				if !strings.HasSuffix(count, " 0") {
					covered++
				}
			}
		}
		return counts, covered
	}
	want, wantCovered := services(merged)
	got, gotCovered := services(deployment)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("the deployment's archive has %d blocks of the services, covdata merge's %d", len(got), len(want))
	}
	for block, c := range want {
		if got[block] != c {
			t.Errorf("%s: the deployment's count %q, covdata merge's %q", block, got[block], c)
		}
	}
	for k, d := range own {
		if _, c := services(d); c >= gotCovered {
			t.Errorf("replica %d alone covers %d blocks of the services, the deployment %d", k+1, c, gotCovered)
		}
	}
	t.Logf("the services' blocks covered: %d by the deployment, %d by covdata merge", gotCovered, wantCovered)
	if after, _ := os.ReadFile("/etc/hosts"); !bytes.Equal(after, hostsBefore) {
		t.Errorf("the host's /etc/hosts changed:\n%s", after)
	}
}
