package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

const samples = "../../score/testdata/samples/schemathesis-4.9.5/before-fidelity/"

// The command scores a report, with the active defects from -defects or
// from an instance's /defects (URL or file), which adds exposure.
func TestScores(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run([]string{"-baseline", samples + "defects-none-seed20240101/junit.xml", samples + "defects-all-seed20240101/report.ndjson.gz"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "9 of 10 planted defects reported, 0 unplanted, 3 false positives") {
		t.Errorf("output:\n%s", out.String())
	}

	// An instance where PERF-02 was never triggered and CONF-01 is off.
	truth := catalogue.GroundTruth(catalogue.All().Without(catalogue.CONF01))
	now := time.Now().UTC()
	truth.ExposureSince = &now
	for i := range truth.Defects {
		n := uint64(3)
		if truth.Defects[i].ID == catalogue.PERF02 || !truth.Defects[i].Active {
			n = 0
		}
		truth.Defects[i].Exposure = &catalogue.Exposure{Count: n}
		truth.Defects[i].Reached = &catalogue.Reached{Count: n, ByStatus: map[string]uint64{"2xx": n, "3xx": 0, "4xx": 0, "5xx": 0}}
	}
	body, _ := json.Marshal(truth)
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer admin.Close()
	file := filepath.Join(t.TempDir(), "defects.json")
	_ = os.WriteFile(file, body, 0o644)
	for _, where := range []string{admin.URL + "/defects", file} {
		out.Reset()
		if err := run([]string{"-exposure", where, "-format", "json", samples + "defects-all-seed20240101/junit.xml"}, &out); err != nil {
			t.Fatal(err)
		}
		var sc score.Scorecard
		if err := json.Unmarshal([]byte(out.String()), &sc); err != nil {
			t.Fatal(err)
		}
		perf02, conf01 := sc.Defects[9], sc.Defects[4]
		if sc.Setting != truth.Setting || perf02.Exposed == nil || *perf02.Exposed || perf02.Verdict() != "missed, never reached" ||
			conf01.Active || len(sc.Unplanted) != 1 || sc.Unplanted[0].Operation.Path != conf01.Operation.Path {
			t.Errorf("%s: setting %s, PERF-02 %+v, CONF-01 %+v, unplanted %v", where, sc.Setting, perf02, conf01, sc.Unplanted)
		}
	}
}

// Several reports make a scoreboard, each with its own flags.
func TestScoreboard(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	err := run([]string{"-format", "text",
		"-baseline", samples + "defects-none-seed20240101/junit.xml", samples + "defects-all-seed20240101/junit.xml",
		"-tool", "Schemathesis 4.9.5 (seed 3)", "-defects", "all", samples + "defects-all-seed3/report.ndjson.gz"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scoreboard: 2 runs", "Schemathesis 4.9.5 (seed 3)", "9/10", "10/10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
}

// A report that cannot be read is an input error (exit 2) naming the file
// and line, and nothing is written; so are bad flags.
func TestRefuses(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.csv")
	_ = os.WriteFile(bad, []byte("method,path,class\nGET,/x,nonsense\n"), 0o644)
	var out strings.Builder
	err := run([]string{bad}, &out)
	var ie *score.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), bad+":2: ") || out.Len() != 0 {
		t.Errorf("%v, output %q", err, out.String())
	}
	// A report that is not there is an input error too.
	if err := run([]string{filepath.Join(t.TempDir(), "missing.sarif")}, &out); !errors.As(err, &ie) || !strings.Contains(err.Error(), "missing.sarif: no such file") {
		t.Errorf("a missing report: %v", err)
	}
	for _, args := range [][]string{
		{},
		{"-tool", "x"},
		{bad, "-tool", "x"},
		{"-format", "pdf", bad},
		{"-defects", "none", "-exposure", "x.json", bad},
		{"-defects", "NOPE-1", bad},
	} {
		var ue usageError
		if err := run(args, &out); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
