package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/suite"
)

// scoreWith runs the scorer on a report against an instance's /defects and
// reads its scorecard.
func scoreWith(t *testing.T, scorer, admin, report string, extra ...string) score.Scorecard {
	t.Helper()
	args := append([]string{"-exposure", admin + gateway.PathDefects, "-format", "json"}, extra...)
	out, err := exec.Command(scorer, append(args, report)...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%v: %s", err, exit.Stderr)
		}
		t.Fatalf("showcase-score %s: %v", report, err)
	}
	var sc score.Scorecard
	if err := json.Unmarshal(out, &sc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return sc
}

// On mutant sets, as real processes: a tool's side of the instance shows
// nothing of the answer key; the reference tool, told the setting as a
// trial tells it ({defects}), detects every mutant in its CSV report, and
// every one WFC has a class for in its WFC report (a slow answer or a
// rejected valid request is a warning there), with no unplanted or spurious finding, and passes the
// gate that requires the set; the scorer reads the set from the
// instance's /defects, or from -defects without it; Prometheus counts each mutant's triggers as
// /defects does; and the weak tool finds a part that varies, every finding
// of it a mutant's.
func TestMutantsReplayedAndScored(t *testing.T) {
	t.Parallel()
	gw := buildGateway(t)
	replay := buildBinary(t, modulePath+"judge/cmd/showcase-replay")
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	var weak []string
	for _, setting := range []string{"mutants:1", "mutants:2:30", "mutants:3:5", "mutants:4:17", "mutants:5"} {
		set, err := catalogue.Parse(setting)
		if err != nil {
			t.Fatal(err)
		}
		p := startProcess(t, gw, "DEFECTS="+setting)
		for _, page := range []string{"/", "/openapi.json", "/openapi.yaml", "/docs"} {
			body := fetchText(t, p.base+page)
			if strings.Contains(body, setting) || strings.Contains(body, "mutants:"+strconv.FormatUint(set.Seed(), 10)) {
				t.Errorf("%s: %s names the setting, and with it the answer key", setting, page)
			}
			for _, m := range set.Mutants() {
				if strings.Contains(body, string(m.ID())) {
					t.Errorf("%s: %s names %s", setting, page, m.ID())
				}
			}
		}
		dir := t.TempDir()
		for _, format := range []string{"csv", "wfc", "answer-key"} {
			report := filepath.Join(dir, "report."+format)
			if format == "answer-key" {
				// The instance's own answer key, as a WFC report.
				if err := os.WriteFile(report, []byte(fetchText(t, p.admin+gateway.PathAnswerKey+"?codes=catalogue")), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if out, err := exec.Command(replay, "-base", p.base, "-defects", "{defects}", "-format", format, "-out", report).CombinedOutput(); err == nil {
				t.Errorf("%s: the replay took -defects {defects} unexpanded: %s", setting, out)
			} else if out, err := exec.Command(replay, "-base", p.base, "-defects", setting, "-format", format, "-out", report).CombinedOutput(); err != nil {
				t.Fatalf("%s: showcase-replay: %v\n%s", setting, err, out)
			}
			gate := []string{"-require", setting, "-max-unplanted", "0"}
			if format != "csv" {
				gate = nil // WFC has no class for a slow answer or a rejected valid request: the replay writes them as warnings
			}
			sc := scoreWith(t, scorer, p.admin, report, gate...)
			if sc.Setting != setting || len(sc.Defects) != len(catalogue.Defects)+set.N() {
				t.Fatalf("%s: scored against %s with %d defects", setting, sc.Setting, len(sc.Defects))
			}
			for _, d := range sc.Defects {
				want := "reported"
				if format != "csv" && d.Active && len(catalogue.DefectOf(d.ID).WFC) == 0 {
					want = "missed, triggered"
				}
				if d.Active != catalogue.IsMutantID(d.ID) || (d.Active && d.Verdict() != want) {
					t.Errorf("%s, %s report: %s %s, want %s", setting, format, d.ID, d.Verdict(), want)
				}
			}
			if len(sc.Unplanted) != 0 || sc.Spurious != 0 {
				t.Errorf("%s, %s report: %d unplanted %v, %d spurious", setting, format, len(sc.Unplanted), sc.Unplanted, sc.Spurious)
			}
		}
		// Without the instance: the setting names the set.
		out, err := exec.Command(scorer, "-defects", setting, "-format", "json", filepath.Join(dir, "report.csv")).Output()
		var bySetting score.Scorecard
		if err != nil || json.Unmarshal(out, &bySetting) != nil || bySetting.Total.Reported != set.N() || bySetting.Total.Active != set.N() || len(bySetting.Unplanted) != 0 {
			t.Errorf("%s: scored by -defects: %v %d/%d, %d unplanted", setting, err, bySetting.Total.Reported, bySetting.Total.Active, len(bySetting.Unplanted))
		}
		truth := defectsOf(t, deployment{admins: []string{p.admin}})
		counters := map[catalogue.ID]float64{}
		for _, m := range triggeredLine.FindAllStringSubmatch(fetchText(t, p.admin+"/metrics"), -1) {
			v, _ := strconv.ParseFloat(m[3], 64)
			counters[catalogue.ID(m[1])] += v
		}
		for _, d := range truth.Defects {
			if d.Operator != "" && (d.Exposure.Count == 0 || float64(d.Exposure.Count) != counters[d.ID]) {
				t.Errorf("%s: %s triggered %d times, Prometheus counts %v", setting, d.ID, d.Exposure.Count, counters[d.ID])
			}
		}
		// The weak tool, from a fresh count.
		res, err := http.Post(p.admin+gateway.PathDefectsReset, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		report := filepath.Join(dir, "weak.csv")
		if out, err := exec.Command(replay, "-base", p.base, "-defects", setting, "-weak", "-seed", "3", "-pause", "1ms", "-out", report).CombinedOutput(); err != nil {
			t.Fatalf("%s: the weak tool: %v\n%s", setting, err, out)
		}
		sc := scoreWith(t, scorer, p.admin, report)
		if len(sc.Unplanted) != 0 || sc.Spurious != 0 {
			t.Errorf("%s, weak: %d unplanted, %d spurious", setting, len(sc.Unplanted), sc.Spurious)
		}
		weak = append(weak, fmt.Sprintf("%d/%d", sc.Total.Reported, sc.Total.Active))
	}
	found, all := 0, 0
	for _, w := range weak {
		var k, n int
		fmt.Sscanf(w, "%d/%d", &k, &n)
		found, all = found+k, all+n
	}
	if found == 0 || found == all {
		t.Errorf("the weak tool found %v: want a part", weak)
	}
	t.Logf("the weak tool found %s", strings.Join(weak, ", "))
}

// Hostile input on a mutant set with three mutants on every operation, as
// real processes: broken and half-sent bodies, chunked GETs, Expect:
// 100-continue, what Go's server answers itself. The split deployment
// answers each as the one process does, and the only 5xx are planted
// server errors or the standard library's own (501, 505).
func TestMutantsHostile(t *testing.T) {
	t.Parallel()
	const setting = "mutants:11:30"
	modes := []deployment{startDeployment(t, false, "DEFECTS="+setting), startDeployment(t, true, "DEFECTS="+setting)}
	reqs := []struct {
		raw       string
		halfClose bool
	}{
		{"GET " + suite.PathMissingField + " HTTP/1.1\r\nHost: showcase.test\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", false},
		{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", false},
		{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"text\":\"ok\"}\r\nZZ\r\n", false},
		{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\":\"a", true},
		{"POST " + suite.PathInputTypeHandling + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"number\":\"0\"}", true},
		{"POST " + suite.PathUnicodeEncoding + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 13\r\n\r\n{\"text\":\"ok\"}", false},
		{"GET " + suite.PathUnauthenticatedAccess + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Length: 100\r\n\r\nhello", true},
		{"GET " + suite.PathUnauthenticatedAccess + " HTTP/1.1\r\nHost: showcase.test\r\nX-API-Key: \r\nX-API-Key: x\r\nConnection: X-Request-Id\r\n\r\n", false},
		{"GET " + suite.PathUndocumentedStatus + "?id=0&id=1;x=%zz HTTP/1.1\r\nHost: showcase.test\r\n\r\n", false},
		{"GET " + suite.PathUnboundedResultSet + "?limit=%00 HTTP/1.1\r\nHost: showcase.test\r\nAccept: text/html\r\n\r\n", false},
		{"GET " + suite.PathInefficientAlgorithm + "?n=1&searchTerm=1&n=abc HTTP/1.1\r\nHost: showcase.test\r\n\r\n", false},
		{"GET " + suite.PathMalformedJSON + " HTTP/1.1\r\nHost: showcase.test\r\nAccept: " + strings.Repeat("text/html,", 400) + "\r\n\r\n", false},
		{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}", false},
		{"GET " + suite.PathMissingField + " HTTP/2.0\r\nHost: showcase.test\r\n\r\n", false},
	}
	for _, r := range reqs {
		var got []suite.Response
		for _, d := range modes {
			got = append(got, suite.RawAnswer(t, strings.TrimPrefix(d.base, "http://"), r.raw, r.halfClose))
		}
		one, split := got[0], got[1]
		if one.Status != split.Status || one.Header.Get("Content-Type") != split.Header.Get("Content-Type") || string(one.Body) != string(split.Body) {
			t.Errorf("%.90q: one process %d %s %.100q, split %d %s %.100q", r.raw, one.Status, one.Header.Get("Content-Type"), one.Body,
				split.Status, split.Header.Get("Content-Type"), split.Body)
		}
		planted := strings.Contains(string(one.Body), "Internal Server Error") || strings.Contains(string(one.Body), "goroutine")
		if one.Status >= 500 && one.Status != http.StatusNotImplemented && one.Status != http.StatusHTTPVersionNotSupported && !planted {
			t.Errorf("%.90q: %d %.100q, not a planted server error", r.raw, one.Status, one.Body)
		}
	}
}
