package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/board"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
)

// replica is one gateway of a deployment: its API, its admin port on a
// loopback address of its own and the deployment's admin port, and its
// built program.
type replica struct {
	api, admin *httptest.Server
	addr       string // its admin port's address, as the peers name it
}

// startReplicas starts n gateways (one process each) as one deployment:
// replica k's admin port listens on 127.0.0.k+1, all on one port, and
// PEERS names them (resolved here to those addresses, as a headless
// Service's name is by the cluster's DNS).
func startReplicas(t *testing.T, n int) []replica {
	t.Helper()
	first, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(first.Addr().String())
	var ips []string
	reps := make([]replica, n)
	for k := range reps {
		ip := fmt.Sprintf("127.0.0.%d", k+1)
		ips = append(ips, ip)
		ln := first
		if k > 0 {
			if ln, err = net.Listen("tcp", net.JoinHostPort(ip, port)); err != nil {
				t.Skipf("a second loopback address: %v", err)
			}
		}
		built, admin := buildWithAdmin(t, map[string]string{"PEERS": "replicas.test:" + port})
		srv := httptest.NewUnstartedServer(admin)
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		reps[k] = replica{api: httptest.NewServer(built.Handler), admin: srv, addr: ln.Addr().String()}
		t.Cleanup(func() { reps[k].api.Close(); srv.Close(); _ = built.Close() })
	}
	gateway.ResolvePeers(t, ips...)
	return reps
}

// getJSON gets url into v and returns the status and the raw body.
func getJSON(t *testing.T, method, url string, v any, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	return res.StatusCode, string(body)
}

// counts are a ground truth's counts, without times and request indices
// (a replica's own): what a deployment and one process must agree on.
func counts(tr catalogue.Truth) string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests %d\n", *tr.Requests)
	for _, d := range tr.Defects {
		fmt.Fprintf(&b, "%s: triggered %d, reached %d %v, other methods %d\n", d.ID, d.Exposure.Count, d.Reached.Count, d.Reached.ByStatus, d.Reached.OtherMethods)
	}
	return b.String()
}

// The suite's requests spread over three replicas, one after another in
// turn, give at any replica's admin port with ?scope=deployment the same
// exposure, reached counts and API coverage as the same requests sent to
// one process; each replica alone has only its part. The board shows the
// merged view. A reset with scope=deployment empties every replica; one
// from another site is refused before any replica is touched. A replica
// that does not answer fails the request with its address named, and the
// board says so instead of showing a part. A scope it does not know, or
// scope=deployment without PEERS, is a 400.
func TestDeploymentScope(t *testing.T) {
	reps := startReplicas(t, 3)
	one := startInstance(t, false)
	// Each sequence one request at a time (endpoint 10's queue answers
	// 503 only under concurrency), the two side by side.
	ctx := context.Background()
	var cases []suite.Case
	for _, ep := range suite.Endpoints() {
		for _, c := range ep.Cases {
			cases = append(cases, ep.For(c, catalogue.All()))
		}
	}
	i := len(cases)
	var wg sync.WaitGroup
	send := func(base func(k int) string) {
		for k, c := range cases {
			if _, err := suite.Do(ctx, http.DefaultClient, base(k), c); err != nil {
				t.Error(err)
			}
		}
	}
	wg.Go(func() { send(func(k int) string { return reps[k%len(reps)].api.URL }) })
	wg.Go(func() { send(func(int) string { return one.api.URL }) })
	wg.Wait()
	var alone catalogue.Truth
	waitFor(t, func() bool {
		getJSON(t, "GET", one.admin.URL+gateway.PathDefects, &alone)
		return *alone.Requests == uint64(i)
	})
	var merged catalogue.Truth
	waitFor(t, func() bool {
		code, _ := getJSON(t, "GET", reps[1].admin.URL+gateway.PathDefects+"?scope=deployment", &merged)
		return code == http.StatusOK && *merged.Requests == uint64(i)
	})
	if a, b := counts(alone), counts(merged); a != b {
		t.Errorf("the deployment's counts differ from one process's:\n%s\n%s", b, a)
	}
	if len(merged.Replicas) != 3 || !strings.Contains(merged.Replicas[2], reps[2].addr) {
		t.Errorf("replicas %q, want the three named by address", merged.Replicas)
	}
	for k, r := range reps {
		var own catalogue.Truth
		getJSON(t, "GET", r.admin.URL+gateway.PathDefects, &own)
		if n := *own.Requests; n == 0 || n == uint64(i) {
			t.Errorf("replica %d alone counts %d of %d requests, want a part", k, n, i)
		}
	}

	var depCov, oneCov coverage.Report
	if code, body := getJSON(t, "GET", reps[0].admin.URL+gateway.PathCoverage+"?scope=deployment", &depCov); code != http.StatusOK {
		t.Fatalf("/coverage?scope=deployment: %d %s", code, body)
	}
	getJSON(t, "GET", one.admin.URL+gateway.PathCoverage, &oneCov)
	depCov.Since = oneCov.Since
	if d := jsonDiff(&oneCov, &depCov); d != "" {
		t.Errorf("the deployment's API coverage differs from one process's:\n%s", d)
	}
	var ownCov coverage.Report
	getJSON(t, "GET", reps[0].admin.URL+gateway.PathCoverage, &ownCov)
	if c, _ := ownCov.Targets(); func() int { c2, _ := depCov.Targets(); return c2 }() <= c {
		t.Errorf("one replica covers %d targets, the deployment no more", c)
	}
	if code, body := getJSON(t, "GET", reps[2].admin.URL+gateway.PathCoverageText+"?scope=deployment", nil); code != http.StatusOK || !strings.Contains(body, "TCL") {
		t.Errorf("/coverage/summary?scope=deployment: %d %s", code, body)
	}

	var st board.State
	if code, body := getJSON(t, "GET", reps[0].admin.URL+board.PathState+"?scope=deployment", &st); code != http.StatusOK ||
		st.Scope != "deployment" || st.Error != "" || counts(st.Truth) != counts(alone) || !strings.HasPrefix(st.Mode, "a deployment of 3 replicas") {
		t.Errorf("the board's deployment state: %d %s", code, body)
	}

	// A cross-site reset is refused by the admin port before it fans out.
	if code, _ := getJSON(t, "POST", reps[0].admin.URL+gateway.PathDefectsReset+"?scope=deployment", nil, "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Errorf("a cross-site reset: %d, want 403", code)
	}
	getJSON(t, "GET", reps[1].admin.URL+gateway.PathDefects+"?scope=deployment", &merged)
	if *merged.Requests != uint64(i) {
		t.Errorf("after a refused reset the deployment counts %d requests, want %d", *merged.Requests, i)
	}
	var reset struct {
		Replicas []string `json:"replicas"`
	}
	if code, body := getJSON(t, "POST", reps[2].admin.URL+gateway.PathDefectsReset+"?scope=deployment", &reset); code != http.StatusOK || len(reset.Replicas) != 3 {
		t.Fatalf("the deployment's reset: %d %s", code, body)
	}
	for k, r := range reps {
		var own catalogue.Truth
		getJSON(t, "GET", r.admin.URL+gateway.PathDefects, &own)
		if *own.Requests != 0 || own.Defects[0].Exposure.Count != 0 {
			t.Errorf("replica %d after the deployment's reset: %d requests, SEC-01 %d", k, *own.Requests, own.Defects[0].Exposure.Count)
		}
	}

	// A build without Go's coverage: each replica says so, and so does
	// the deployment.
	if code, body := getJSON(t, "GET", reps[0].admin.URL+server.PathCodeCoverage+"?scope=deployment", nil); code != http.StatusBadGateway ||
		!strings.Contains(body, "answered 404 Not Found: this build has no code coverage") {
		t.Errorf("/coverage/code?scope=deployment of a build without coverage: %d %s", code, body)
	}

	reps[2].admin.Close()
	for _, path := range []string{gateway.PathDefects, gateway.PathCoverage, gateway.PathCoverageText} {
		code, body := getJSON(t, "GET", reps[0].admin.URL+path+"?scope=deployment", nil)
		if code != http.StatusBadGateway || !strings.Contains(body, "1 of the deployment's 3 replicas (PEERS=replicas.test:") ||
			!strings.Contains(body, "replica "+reps[2].addr+" did not answer") {
			t.Errorf("%s?scope=deployment with a replica gone: %d %s", path, code, body)
		}
	}
	code, body := getJSON(t, "POST", reps[0].admin.URL+gateway.PathDefectsReset+"?scope=deployment", nil)
	if code != http.StatusBadGateway || !strings.Contains(body, "did not answer") || !strings.Contains(body, "reset: ") {
		t.Errorf("a reset with a replica gone: %d %s", code, body)
	}
	st = board.State{}
	if getJSON(t, "GET", reps[0].admin.URL+board.PathState+"?scope=deployment", &st); !strings.Contains(st.Error, reps[2].addr) || st.Truth.Defects != nil {
		t.Errorf("the board with a replica gone: error %q, %d defects shown", st.Error, len(st.Truth.Defects))
	}
	// The instance's own count answers as before.
	if code, _ := getJSON(t, "GET", reps[0].admin.URL+gateway.PathDefects, nil); code != http.StatusOK {
		t.Errorf("the instance's own /defects with a peer gone: %d", code)
	}

	for _, c := range []struct{ url, want string }{
		{reps[0].admin.URL + gateway.PathDefects + "?scope=cluster", `scope=\"cluster\": want instance`},
		{one.admin.URL + gateway.PathDefects + "?scope=deployment", "does not know its deployment's replicas"},
		{one.admin.URL + board.PathState + "?scope=deployment", "does not know its deployment's replicas"},
		{reps[0].admin.URL + gateway.PathCoverage + "?scope=%zz", "the query does not parse"},
	} {
		if code, body := getJSON(t, "GET", c.url, nil); code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.url, code, body, c.want)
		}
	}
}
