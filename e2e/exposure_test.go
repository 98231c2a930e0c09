package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/platform/observe"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
	"github.com/defectshowcase/showcase/suite"
)

// deployment is the showcase as real processes: the gateway alone, or in
// front of the four services.
type deployment struct {
	base   string
	admins []string            // the gateway's admin URL first
	procs  map[string]*process // by category name, and "gateway"
}

// servedBy is the process that answers a category's requests: its service,
// or the gateway in one process.
func (d deployment) servedBy(category string) *process {
	if p, ok := d.procs[category]; ok {
		return p
	}
	return d.procs["gateway"]
}

func startDeployment(t *testing.T, split bool, env ...string) deployment {
	t.Helper()
	if !split {
		p := startProcess(t, buildGateway(t), env...)
		return deployment{base: p.base, admins: []string{p.admin}, procs: map[string]*process{"gateway": p}}
	}
	var ups, admins []string
	procs := map[string]*process{}
	for _, c := range catalogue.Categories {
		svc := c.Name + "-svc"
		p := startProcess(t, buildBinary(t, modulePath+svc+"/cmd/"+svc), env...)
		ups = append(ups, c.Upstream+"="+p.base)
		admins = append(admins, p.admin)
		procs[c.Name] = p
	}
	gw := startProcess(t, buildGateway(t), append(env, ups...)...)
	procs["gateway"] = gw
	return deployment{base: gw.base, admins: append([]string{gw.admin}, admins...), procs: procs}
}

// exposureClean is traffic that reaches every endpoint without triggering
// its defect: the key sent, valid input the planted code handles, requests
// no handler runs for.
var exposureClean = func() []suite.Case {
	const json = "application/json"
	reqs := []suite.Case{
		{Target: suite.PathUnauthenticatedAccess, Header: http.Header{"X-Api-Key": {securitysvc.DefaultAPIKey}}},
		{Method: "POST", Target: suite.PathInputTypeHandling, ContentType: json, Body: `{"number":"4111111111111111"}`},
		{Method: "POST", Target: suite.PathInputTypeHandling, ContentType: json, Body: `{"number":`},
		{Method: "POST", Target: suite.PathColumnSize, ContentType: json, Body: `{"text":"short"}`},
		{Method: "POST", Target: suite.PathUnicodeEncoding, ContentType: json, Body: `{"text":"plain"}`},
		{Target: suite.PathUndocumentedStatus + "?id=0"},
		{Target: suite.PathUnboundedResultSet + "?limit=5"},
		{Target: suite.PathInefficientAlgorithm + "?n=10&searchTerm=5"},
		{Target: "/nowhere"},
	}
	for _, e := range catalogue.Endpoints {
		reqs = append(reqs, suite.Case{Method: "OPTIONS", Target: e.Path})
	}
	return reqs
}()

// The service counts the requests that triggered each planted defect, and
// the gateway's admin /defects answers for the whole deployment, in one
// process and split into five: each defect's trigger requests count once
// each, with the first as the example under the ID the client sent; clean
// traffic counts nothing; a client that asks the service to name the defect
// on the answer, as the gateway does, is not told; a reset empties the counts but not the
// Prometheus counters; with DEFECTS=none nothing is ever triggered.
func TestExposureEndToEnd(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		split bool
	}{{"one process", false}, {"split", true}} {
		for _, active := range []catalogue.Set{catalogue.All(), catalogue.None()} {
			t.Run(mode.name+"/"+active.String(), func(t *testing.T) {
				t.Parallel()
				d := startDeployment(t, mode.split, "DEFECTS="+active.String())
				checkExposure(t, d, active)
			})
		}
	}
}

func checkExposure(t *testing.T, d deployment, active catalogue.Set) {
	client := &http.Client{Timeout: time.Minute}
	before := time.Now().UTC()
	if truth := defectsOf(t, d); truth.ExposureSince == nil || truth.ExposureSince.After(before) {
		t.Fatalf("exposure_since %v, want the start, before %v", truth.ExposureSince, before)
	} else {
		for _, e := range truth.Defects {
			if e.Exposure == nil || *e.Exposure != (catalogue.Exposure{}) {
				t.Fatalf("%s at start: %+v, want count 0 and nulls", e.ID, e.Exposure)
			}
		}
		checkReached(t, truth, nil)
	}
	// What each operation received, from the answers the client got.
	sent := map[string]*catalogue.Reached{}
	send := func(c suite.Case, id string) {
		t.Helper()
		c.Header = c.Header.Clone()
		if c.Header == nil {
			c.Header = http.Header{}
		}
		c.Header.Set("X-Request-Id", id)
		c.Header.Set(observe.HeaderReportTriggered, "1") // only the gateway may ask
		res, err := suite.Do(t.Context(), client, d.base, c)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := endpointAt(c.Target); ok {
			r := sent[e.Path]
			if r == nil {
				r = &catalogue.Reached{ByStatus: map[string]uint64{}}
				sent[e.Path] = r
			}
			if c.Method == e.Method || c.Method == "" && e.Method == http.MethodGet {
				r.Count++
				r.ByStatus[fmt.Sprintf("%dxx", res.Status/100)]++
			} else {
				r.OtherMethods++
			}
		}
		if got := res.Header.Get("X-Request-Id"); got != id {
			t.Errorf("%s %s: request ID %q, want %q", c.Method, c.Target, got, id)
		}
		for name := range res.Header {
			if strings.HasPrefix(strings.ToLower(name), "showcase-") {
				t.Errorf("%s %s: the answer carries %s", c.Method, c.Target, name)
			}
		}
	}
	for i, r := range exposureClean {
		send(r, fmt.Sprintf("clean-%d", i))
	}
	for _, def := range catalogue.Defects {
		for i, tr := range def.Triggers {
			c := suite.Trigger(def, tr)
			send(c, fmt.Sprintf("trigger-%s-%d", def.ID, i))
		}
	}
	after := time.Now().UTC()
	truth := defectsOf(t, d)
	checkReached(t, truth, sent)
	checkCoverage(t, d.admins[0], sent, active)
	for _, e := range truth.Defects {
		if f := e.Reached.First; f == nil || f.Before(before) || f.After(after) {
			t.Errorf("%s: first reached at %v, want between %v and %v", e.ID, f, before, after)
		}
	}
	counters := triggeredCounters(t, d)
	for _, e := range truth.Defects {
		def := catalogue.DefectOf(e.ID)
		x := e.Exposure
		if !active.Active(e.ID) {
			if x == nil || *x != (catalogue.Exposure{}) || counters[e.ID] != 0 {
				t.Errorf("%s switched off: exposure %+v, counter %v; want nothing triggered", e.ID, x, counters[e.ID])
			}
			continue
		}
		want := uint64(len(def.Triggers))
		first := e.Triggers[0]
		if x == nil || x.Count != want || x.First == nil || x.Last == nil || x.First.Before(before) || x.Last.Before(*x.First) || x.Last.After(after) ||
			x.Example == nil || *x.Example != (catalogue.Example{Method: first.Method, Target: first.Target, RequestID: "trigger-" + string(e.ID) + "-0"}) {
			t.Errorf("%s: exposure %+v (example %+v), want %d, the first trigger as the example", e.ID, x, x.Example, want)
		}
		if counters[e.ID] != float64(want) {
			t.Errorf("%s: showcase_defect_triggered_total %v, want %d", e.ID, counters[e.ID], want)
		}
	}

	res, err := client.Post(d.admins[0]+gateway.PathDefectsReset, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var reset struct {
		ExposureSince time.Time `json:"exposure_since"`
	}
	if err := json.Unmarshal(body, &reset); err != nil || res.StatusCode != http.StatusOK || reset.ExposureSince.Before(after) {
		t.Fatalf("POST %s: %d %s", gateway.PathDefectsReset, res.StatusCode, body)
	}
	truth = defectsOf(t, d)
	for _, e := range truth.Defects {
		if e.Exposure == nil || *e.Exposure != (catalogue.Exposure{}) {
			t.Errorf("%s after reset: %+v", e.ID, e.Exposure)
		}
	}
	checkReached(t, truth, nil)
	checkCoverage(t, d.admins[0], nil, active)
	if truth.ExposureSince == nil || !truth.ExposureSince.Equal(reset.ExposureSince) {
		t.Errorf("exposure_since %v after a reset at %v", truth.ExposureSince, reset.ExposureSince)
	}
	if again := triggeredCounters(t, d); fmt.Sprint(again) != fmt.Sprint(counters) {
		t.Errorf("the counters changed with the reset: %v, were %v", again, counters)
	}
}

// endpointAt is the contract's operation at a request target's path.
func endpointAt(target string) (catalogue.Endpoint, bool) {
	path, _, _ := strings.Cut(target, "?")
	for _, e := range catalogue.Endpoints {
		if e.Path == path {
			return e, true
		}
	}
	return catalogue.Endpoint{}, false
}

// checkReached: every defect's operation has reached counts, each status
// class present, equal to want's (nil: none).
func checkReached(t *testing.T, truth catalogue.Truth, want map[string]*catalogue.Reached) {
	t.Helper()
	for _, e := range truth.Defects {
		got := e.Reached
		if got == nil || len(got.ByStatus) != len(catalogue.StatusClasses) {
			t.Errorf("%s: reached %+v, want every status class", e.ID, got)
			continue
		}
		w := want[e.Operation.Path]
		if w == nil {
			w = &catalogue.Reached{}
		}
		for _, c := range catalogue.StatusClasses {
			if got.ByStatus[c] != w.ByStatus[c] {
				t.Errorf("%s: reached %v, want %v", e.ID, got.ByStatus, w.ByStatus)
				break
			}
		}
		if got.Count != w.Count || got.OtherMethods != w.OtherMethods || (got.First == nil) != (w.Count == 0) {
			t.Errorf("%s: reached %d (first %v), other methods %d; want %d, %d", e.ID, got.Count, got.First, got.OtherMethods, w.Count, w.OtherMethods)
		}
	}
}

// coverageAt is an instance's API coverage (/coverage on its admin port).
func coverageAt(t *testing.T, admin string) *coverage.Report {
	t.Helper()
	res, err := http.Get(admin + gateway.PathCoverage)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep coverage.Report
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", gateway.PathCoverage, res.StatusCode, err)
	}
	return &rep
}

// checkCoverage checks the instance's API coverage against what was sent:
// each operation called as often as the client's answers say, and the only
// status answered undocumented CONF-04's 404 (one of its triggers), while
// CONF-04 is active.
func checkCoverage(t *testing.T, admin string, sent map[string]*catalogue.Reached, active catalogue.Set) {
	t.Helper()
	rep := coverageAt(t, admin)
	for _, o := range rep.Operations {
		var want uint64
		if r := sent[o.Path]; r != nil {
			want = r.Count
		}
		if o.Requests != want {
			t.Errorf("coverage: %s %s called %d times, want %d", o.Method, o.Path, o.Requests, want)
		}
	}
	var want []string
	if sent != nil && active.Active(catalogue.CONF04) {
		want = []string{"GET " + catalogue.EndpointOf(catalogue.CONF04).Path + " 404"}
	}
	if got := rep.Undocumented(); !slices.Equal(got, want) {
		t.Errorf("coverage: undocumented statuses %q, want %q", got, want)
	}
}

func defectsOf(t *testing.T, d deployment) catalogue.Truth {
	t.Helper()
	res, err := http.Get(d.admins[0] + gateway.PathDefects)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var truth catalogue.Truth
	if err := json.NewDecoder(res.Body).Decode(&truth); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", gateway.PathDefects, res.StatusCode, err)
	}
	return truth
}

var triggeredLine = regexp.MustCompile(`(?m)^showcase_defect_triggered_total\{defect="([^"]+)",service="([^"]+)"\} (\S+)$`)

// triggeredCounters sums showcase_defect_triggered_total by defect over
// every process of the deployment, as the README's PromQL does. Every
// defect's series must be there, at zero until triggered.
func triggeredCounters(t *testing.T, d deployment) map[catalogue.ID]float64 {
	t.Helper()
	sums := map[catalogue.ID]float64{}
	for _, admin := range d.admins {
		res, err := http.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, m := range triggeredLine.FindAllStringSubmatch(string(b), -1) {
			v, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				t.Fatal(err)
			}
			sums[catalogue.ID(m[1])] += v
		}
	}
	if len(sums) != len(catalogue.Defects) {
		t.Errorf("showcase_defect_triggered_total has series for %v, want all ten", sums)
	}
	return sums
}

// The scorer against a live instance: a report that names every defect but
// CONF-04, ERR-03 and PERF-02, after traffic that triggered every defect
// but those two, and sent ERR-03's operation a request that does not
// trigger it, scores seven reported, CONF-04 missed though triggered,
// ERR-03 missed though reached, and PERF-02 missed and never reached (nine
// operations of ten reached), reading the exposure from the running
// gateway's admin port.
func TestScoreAgainstALiveInstance(t *testing.T) {
	t.Parallel()
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	d := startDeployment(t, false)
	client := &http.Client{Timeout: time.Minute}
	report := "method,path,class\n"
	clean := suite.Case{Method: "POST", Target: suite.PathUnicodeEncoding, ContentType: "application/json", Body: `{"text":"plain"}`}
	if _, err := suite.Do(t.Context(), client, d.base, clean); err != nil {
		t.Fatal(err)
	}
	for _, def := range catalogue.Defects {
		e := catalogue.EndpointOf(def.ID)
		if def.ID != catalogue.PERF02 && def.ID != catalogue.ERR03 {
			for _, tr := range def.Triggers {
				c := suite.Trigger(def, tr)
				if _, err := suite.Do(t.Context(), client, d.base, c); err != nil {
					t.Fatal(err)
				}
			}
		}
		if def.ID != catalogue.PERF02 && def.ID != catalogue.CONF04 && def.ID != catalogue.ERR03 {
			report += fmt.Sprintf("%s,%s,%s\n", e.Method, e.Path, def.Classes[0])
		}
	}
	file := filepath.Join(t.TempDir(), "report.csv")
	if err := os.WriteFile(file, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(scorer, "-exposure", d.admins[0]+gateway.PathDefects, "-format", "json", file).Output()
	if err != nil {
		t.Fatalf("showcase-score: %v", err)
	}
	var sc score.Scorecard
	if err := json.Unmarshal(out, &sc); err != nil || len(sc.Defects) != 10 || len(sc.Unplanted) != 0 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, def := range sc.Defects {
		want := map[catalogue.ID]string{catalogue.CONF04: "missed, triggered", catalogue.ERR03: "missed, reached", catalogue.PERF02: "missed, never reached"}[def.ID]
		if want == "" {
			want = "reported"
		}
		if def.Verdict() != want {
			t.Errorf("%s: %s, want %s (%+v)", def.ID, def.Verdict(), want, def)
		}
	}
	if r := sc.Reached; r == nil || r.Operations != 9 || r.Of != 10 || len(r.Missed) != 1 || r.Missed[0] != catalogue.PERF02 || sc.TestedNothing {
		t.Errorf("reached %+v, tested nothing %v; want 9 of 10, PERF-02 missed", r, sc.TestedNothing)
	}
	// The API coverage comes from beside the exposure; a plain build has no
	// code coverage, and the scorecard says none.
	if c := sc.Coverage; c == nil || c.API == nil || c.Code != nil {
		t.Errorf("coverage %+v, want the API's alone", c)
	} else if ops, _ := c.API.Criterion(coverage.Operations); ops.Covered != 9 || ops.Total != 10 {
		t.Errorf("coverage: operations %d/%d, want 9/10 as reached", ops.Covered, ops.Total)
	}
	// A report it cannot read: exit 2, naming the file and line.
	_ = os.WriteFile(file, []byte("method,path,class\nGET,/x,broken\n"), 0o644)
	cmd := exec.Command(scorer, "-exposure", d.admins[0]+gateway.PathDefects, file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), file+":2:") {
		t.Errorf("a bad report: %v, %s", err, stderr.String())
	}
}

// A run that tested nothing is never a clean score. nuclei's real report
// of a run that sent no request (against the contract as served with
// DEFECTS=none: exit 0, "No results found", an empty JSONL), scored against
// an instance that received nothing, is "tested nothing"; given as the
// baseline of a run that did test, it gives no false positive rate. The
// same empty report with a baseline instance that was reached gives one.
func TestTestedNothing(t *testing.T) {
	t.Parallel()
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	empty := "../judge/score/testdata/samples/nuclei-3.11.1/view-ba02795/as-served/defects-none-json/nuclei.jsonl"
	if b, err := os.ReadFile(empty); err != nil || len(b) != 0 {
		t.Fatalf("the sample: %v, %d bytes", err, len(b))
	}
	off := startDeployment(t, false, "DEFECTS=none")
	on := startDeployment(t, false)
	client := &http.Client{Timeout: time.Minute}
	for _, def := range catalogue.Defects {
		if _, err := suite.Do(t.Context(), client, on.base, suite.Trigger(def, def.Triggers[0])); err != nil {
			t.Fatal(err)
		}
	}
	scoreJSON := func(args ...string) score.Scorecard {
		t.Helper()
		out, err := exec.Command(scorer, append([]string{"-format", "json", "-tool", "nuclei v3.11.1"}, args...)...).Output()
		if err != nil {
			t.Fatalf("showcase-score %v: %v", args, err)
		}
		var sc score.Scorecard
		if err := json.Unmarshal(out, &sc); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	offTruth := off.admins[0] + gateway.PathDefects
	sc := scoreJSON("-exposure", offTruth, empty)
	if !sc.TestedNothing || sc.Reached == nil || sc.Reached.Operations != 0 || len(sc.Reached.Missed) != 10 {
		t.Errorf("the empty run against an instance that received nothing: tested nothing %v, reached %+v", sc.TestedNothing, sc.Reached)
	}
	text, err := exec.Command(scorer, "-tool", "nuclei v3.11.1", "-exposure", offTruth, empty).Output()
	if err != nil || !strings.Contains(string(text), "tested nothing: its requests reached none of the 10 operations") {
		t.Errorf("the text scorecard: %v\n%s", err, text)
	}

	sc = scoreJSON("-exposure", on.admins[0]+gateway.PathDefects, "-baseline", empty, "-baseline-exposure", offTruth, empty)
	if !sc.BaselineTestedNothing || sc.Total.FPR != nil || sc.Total.J != nil || sc.TestedNothing || sc.Reached.Operations != 10 {
		t.Errorf("with a baseline that tested nothing: baseline tested nothing %v, FPR %v, J %v; reached %+v", sc.BaselineTestedNothing, sc.Total.FPR, sc.Total.J, sc.Reached)
	}
	// The same empty report, its instance reached: a baseline, FPR 0.
	if _, err := suite.Do(t.Context(), client, off.base, suite.Case{Target: suite.PathMissingField}); err != nil {
		t.Fatal(err)
	}
	sc = scoreJSON("-exposure", on.admins[0]+gateway.PathDefects, "-baseline", empty, "-baseline-exposure", offTruth, empty)
	if sc.BaselineTestedNothing || sc.Total.FPR == nil || *sc.Total.FPR != 0 || sc.BaselineReached == nil || sc.BaselineReached.Operations != 1 {
		t.Errorf("with a baseline that reached one operation: %v, FPR %v, reached %+v", sc.BaselineTestedNothing, sc.Total.FPR, sc.BaselineReached)
	}
	// A baseline's exposure must be of DEFECTS=none.
	if out, err := exec.Command(scorer, "-exposure", on.admins[0]+gateway.PathDefects, "-tool", "x", "-baseline", empty, "-baseline-exposure", on.admins[0]+gateway.PathDefects, empty).CombinedOutput(); err == nil || !strings.Contains(string(out), "not none") {
		t.Errorf("a baseline exposure with defects on: %v\n%s", err, out)
	}
}
