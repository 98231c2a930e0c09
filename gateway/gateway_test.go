package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	postman "github.com/rbretecher/go-postman-collection"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/web"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
	"github.com/defectshowcase/showcase/suite"
)

// startEmbedded serves the gateway with every category in-process.
func startEmbedded(t *testing.T, env map[string]string) *httptest.Server {
	t.Helper()
	return startEmbeddedWith(t, env, observe.Discard())
}

func startEmbeddedWith(t *testing.T, env map[string]string, tel *observe.Telemetry) *httptest.Server {
	t.Helper()
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, tel)
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
	suite.RunFor(t, ts.URL, ts.Client(), catalogue.None())
}

// Each defect switched off alone changes its own endpoint's answers, to
// the conformant ones, and nothing else: every other endpoint answers as
// specified, and a tool finds exactly the other planted deviations in the
// contract served for that setting.
func TestEachDefectSwitchedOffAlone(t *testing.T) {
	t.Parallel()
	for _, d := range catalogue.Defects {
		t.Run(string(d.ID), func(t *testing.T) {
			t.Parallel()
			active := catalogue.All().Without(d.ID)
			ts := startEmbedded(t, map[string]string{"DEFECTS": active.String()})
			checkFindings(t, ts.URL, active)
		})
	}
}

// The README and the contract are served from the repository's own files,
// byte for byte: they are embedded where they live, with no copy.
func TestServesTheRootFiles(t *testing.T) {
	t.Parallel()
	ts := startEmbedded(t, nil)
	for target, file := range map[string]string{web.PathReadme: "../README.md", "/openapi.yaml": "../openapi.yaml"} {
		root, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := suite.Do(context.Background(), ts.Client(), ts.URL, suite.Case{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{web.PathReadme: "text/plain; charset=utf-8", "/openapi.yaml": "application/yaml"}[target]
		if r.Status != 200 || !bytes.Equal(r.Body, root) || r.Header.Get("Content-Type") != want {
			t.Errorf("%s: %d %s, and the body differs from %s", target, r.Status, r.Header.Get("Content-Type"), file)
		}
	}
}

// Every trigger the catalogue states gets the answer it states, with the
// defects active and switched off: the ground truth a tool is scored
// against is true of the running service.
func TestCatalogueTriggers(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.All(), catalogue.None()} {
		ts := startEmbedded(t, map[string]string{"DEFECTS": active.String()})
		for _, d := range catalogue.Defects {
			ep := catalogue.EndpointOf(d.ID)
			for i, tr := range d.Triggers {
				t.Run(fmt.Sprintf("%s/%s/%d", active, d.ID, i), func(t *testing.T) {
					t.Parallel()
					c := suite.Trigger(d, tr)
					r, err := suite.Do(context.Background(), ts.Client(), ts.URL, c)
					if err != nil {
						t.Fatal(err)
					}
					want := tr.Status
					if !active.Active(d.ID) {
						want = tr.OffStatus
					}
					if r.Status != want {
						t.Errorf("%s %s %s: %d, want %d %s", ep.Method, c.Target, tr.Body, r.Status, want, suite.Excerpt(r.Body))
					}
				})
			}
		}
	}
}

// startEmbeddedB is startEmbedded for benchmarks; it returns the base URL.
func startEmbeddedB(b *testing.B) string {
	b.Helper()
	built, err := server.Build(gateway.Program(), func(string) string { return "" }, observe.Discard())
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(built.Handler)
	b.Cleanup(func() { ts.Close(); _ = built.Close() })
	return ts.URL
}

// The configuration table (docs/configuration.md) lists every setting of
// every program, each with its flag.
func TestDocsListEverySetting(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []server.Program{gateway.Program(), securitysvc.Program(), errorssvc.Program(), conformancesvc.Program(), performancesvc.Program()} {
		l, err := server.Load(p, nil, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range l.Settings.All() {
			row := "| `" + st.Env + "` | `-" + st.Flag + "` |"
			if strings.HasPrefix(st.Env, "UPSTREAM_") && strings.HasSuffix(st.Env, "_TIMEOUT") && st.Env != "UPSTREAM_TIMEOUT" {
				row = "| `UPSTREAM_<CATEGORY>_TIMEOUT` | `-upstream-<category>-timeout` |"
			}
			if !bytes.Contains(readme, []byte(row)) {
				t.Errorf("%s: docs/configuration.md has no row %s", p.Name, row)
			}
		}
	}
}

// The admin port serves the ground truth: the catalogue's, with this
// instance's setting, every trigger a request a tool can send.
func TestGroundTruthServed(t *testing.T) {
	t.Parallel()
	for _, active := range []catalogue.Set{catalogue.All(), catalogue.All().Without(catalogue.CONF04)} {
		built, err := server.Build(gateway.Program(), func(k string) string { return map[string]string{"DEFECTS": active.String()}[k] }, observe.Discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = built.Close() })
		rec := httptest.NewRecorder()
		built.Admin["GET "+gateway.PathDefects].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathDefects, nil))
		var got catalogue.Truth
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s: %v", rec.Code, rec.Header().Get("Content-Type"), err)
		}
		if got.Version != catalogue.Version || got.Setting != active.String() || len(got.Defects) != len(catalogue.Defects) {
			t.Fatalf("version %d, setting %q, %d defects", got.Version, got.Setting, len(got.Defects))
		}
		for i, d := range got.Defects {
			want := catalogue.Defects[i]
			ep := catalogue.EndpointOf(want.ID)
			if d.ID != want.ID || d.Operation != (catalogue.Operation{Method: ep.Method, Path: ep.Path}) || d.Active != active.Active(want.ID) ||
				len(d.Triggers) != len(want.Triggers) || !slices.Equal(d.DetectedBy, want.Classes) || d.Symptom != want.Symptom {
				t.Errorf("%s: %+v", want.ID, d)
			}
			if (d.CWE == nil) != (want.CWE == 0) {
				t.Errorf("%s: cwe %v, want %d (null for none)", want.ID, d.CWE, want.CWE)
			}
			for _, tr := range d.Triggers {
				if tr.Method != ep.Method || !strings.HasPrefix(tr.Target, ep.Path) || (tr.Body != "") != (tr.ContentType == "application/json") {
					t.Errorf("%s: trigger %+v", want.ID, tr)
				}
			}
		}
		if want := active.IsAll(); (len(got.Off) == 0) != want {
			t.Errorf("off %v with %s", got.Off, active)
		}
	}
	var raw map[string]any
	rec := httptest.NewRecorder()
	built, _ := server.Build(gateway.Program(), func(string) string { return "" }, observe.Discard())
	defer built.Close()
	built.Admin["GET "+gateway.PathDefects].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathDefects, nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	conf01 := raw["defects"].([]any)[4].(map[string]any)
	if conf01["cwe"] != nil || conf01["id"] != "CONF-01" {
		t.Errorf("CONF-01 fits no CWE, so cwe must be null: %v", conf01["cwe"])
	}
	// The field's codes: WFC's as a list ([] for none), OWASP's or null.
	if conf01["owasp"] != nil || fmt.Sprint(conf01["wfc"]) != "[map[code:101 label:F101 name:response not matching its schema]]" {
		t.Errorf("CONF-01: wfc %v, owasp %v; want F101 and null", conf01["wfc"], conf01["owasp"])
	}
	perf01 := raw["defects"].([]any)[8].(map[string]any)
	if fmt.Sprint(perf01["wfc"]) != "[]" || fmt.Sprint(perf01["owasp"]) != "map[id:API4:2023 name:Unrestricted Resource Consumption]" || perf01["codes_note"] == "" {
		t.Errorf("PERF-01: wfc %v, owasp %v, note %v; want [], API4:2023 and why", perf01["wfc"], perf01["owasp"], perf01["codes_note"])
	}
}

// The admin port serves the instance's answer key as a WFC report, valid
// against the published schema, or with the catalogue's codes when asked;
// any other codes= is refused in the admin port's error shape.
func TestAnswerKeyServed(t *testing.T) {
	t.Parallel()
	built, err := server.Build(gateway.Program(), func(k string) string { return map[string]string{"DEFECTS": "errors,SEC-01"}[k] }, observe.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	get := func(target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		built.Admin["GET "+gateway.PathAnswerKey].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		return rec
	}
	for _, c := range []struct {
		query  string
		faults []string
	}{
		{"", []string{"POST:/internal-server-errors/improper-input-type-handling", "POST:/internal-server-errors/exceeding-column-size", "POST:/internal-server-errors/improper-unicode-encoding"}},
		{"?codes=catalogue", []string{"GET:/security/unauthenticated-access", "POST:/internal-server-errors/improper-input-type-handling", "POST:/internal-server-errors/exceeding-column-size", "POST:/internal-server-errors/improper-unicode-encoding"}},
	} {
		rec := get(gateway.PathAnswerKey + c.query)
		var key wfc.Report
		if err := json.Unmarshal(rec.Body.Bytes(), &key); err != nil || rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s: %v", c.query, rec.Code, rec.Header().Get("Content-Type"), err)
		}
		var ops []string
		for _, f := range key.Faults.FoundFaults {
			ops = append(ops, f.EndpointID)
		}
		if !slices.Equal(ops, c.faults) || key.ToolVersion == "" || time.Since(key.CreationTime) > time.Minute {
			t.Errorf("%s: faults on %v, version %q, created %v; want %v", c.query, ops, key.ToolVersion, key.CreationTime, c.faults)
		}
		if p := wfctest.Check(rec.Body.Bytes()); (len(p) == 0) != (c.query == "") {
			t.Errorf("%s: schema problems %q", c.query, p)
		}
		// The instance's API coverage is its extra: nothing received yet.
		if len(key.Extra) != 1 || !strings.HasPrefix(key.Extra[0].ToolName, wfc.TargetToolName) || len(key.Extra[0].Criteria) != 11 || key.Extra[0].Criteria[1].Covered != 0 {
			t.Errorf("%s: extra %+v, want the target's coverage, nothing covered", c.query, key.Extra)
		}
	}
	rec := get(gateway.PathAnswerKey + "?codes=all")
	if rec.Code != 400 || !strings.HasPrefix(rec.Body.String(), `{"error":"codes=\"all\": want schema`) {
		t.Errorf("codes=all: %d %s", rec.Code, rec.Body)
	}
	if rec := get(gateway.PathAnswerKey + "?codes=%zz"); rec.Code != 400 || !strings.HasPrefix(rec.Body.String(), `{"error":"the query does not parse`) {
		t.Errorf("codes=%%zz: %d %s", rec.Code, rec.Body)
	}
}

// The Postman collections the instance serves, sent to an instance running
// their variant, get the status each request's test script expects.
func TestCollectionsAgainstTheService(t *testing.T) {
	t.Parallel()
	status := regexp.MustCompile(`have\.status\((\d+)\)`)
	for variant, setting := range map[string]string{"defects-on": "all", "defects-off": "none"} {
		ts := startEmbedded(t, map[string]string{"DEFECTS": setting})
		r, err := suite.Do(context.Background(), ts.Client(), ts.URL, suite.Case{Target: web.CollectionsPrefix + "showcase-" + variant + ".postman_collection.json"})
		if err != nil || r.Status != 200 {
			t.Fatalf("%s: %v %d", variant, err, r.Status)
		}
		c, err := postman.ParseCollection(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		sent := 0
		for _, folder := range c.Items {
			for _, it := range folder.Items {
				m := status.FindStringSubmatch(strings.Join(it.Events[0].Script.Exec, ""))
				if m == nil {
					t.Fatalf("%s: %s has no status test", variant, it.Name)
				}
				cs := suite.Case{Method: string(it.Request.Method), Target: strings.TrimPrefix(it.Request.URL.Raw, "{{baseUrl}}")}
				if it.Request.Body != nil {
					cs.ContentType, cs.Body = it.Request.Header[0].Value, it.Request.Body.Raw
				}
				t.Run(variant+"/"+it.Name, func(t *testing.T) {
					t.Parallel()
					got, err := suite.Do(context.Background(), ts.Client(), ts.URL, cs)
					if err != nil {
						t.Fatal(err)
					}
					if strconv.Itoa(got.Status) != m[1] {
						t.Errorf("%s %s: %d, the collection expects %s", cs.Method, cs.Target, got.Status, m[1])
					}
				})
				sent++
			}
		}
		if sent == 0 {
			t.Fatalf("%s: no request", variant)
		}
	}
}
