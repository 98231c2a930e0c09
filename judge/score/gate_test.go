package score_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// The gate names each required defect missed, with its verdict, and each
// unplanted finding past the limit; a run that tested nothing, or a
// required defect that is off, proves nothing either way.
func TestGate(t *testing.T) {
	t.Parallel()
	full := score.Score(read(t, wfcData, "full.json"), score.Instance{Active: catalogue.All()}, nil)
	set := func(s string) catalogue.Set {
		a, err := catalogue.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, c := range []struct {
		name       string
		gate       score.Gate
		sc         score.Scorecard
		missed     []string
		unplanted  int
		untestable string
	}{
		{"all, none unplanted", score.Gate{Require: set("all"), MaxUnplanted: 0}, full,
			[]string{"PERF-01 (Unbounded result set) on GET /performance/unbounded-result-set: missed", "PERF-02 (Inefficient algorithm) on GET /performance/inefficient-algorithm: missed"}, 2, ""},
		{"what WFC can say, any unplanted", score.Gate{Require: set("security,errors,conformance"), MaxUnplanted: -1}, full, nil, 0, ""},
		{"two unplanted allowed", score.Gate{Require: set("SEC-01"), MaxUnplanted: 2}, full, nil, 0, ""},
		{"one unplanted allowed", score.Gate{Require: set("none"), MaxUnplanted: 1}, full, nil, 2, ""},
		{"a required defect off", score.Gate{Require: set("all"), MaxUnplanted: -1},
			score.Score(read(t, wfcData, "full.json"), score.Instance{Active: set("security")}, nil), nil, 0, "required ERR-01, ERR-02"},
		{"no tests", score.Gate{Require: set("all"), MaxUnplanted: 0},
			score.Score(read(t, wfcData, "no-tests.json"), score.Instance{Active: catalogue.All()}, nil), nil, 0, "the run tested nothing: its report says it made no test"},
		{"not run", score.Gate{Require: set("all"), MaxUnplanted: 0},
			score.NotRun("nuclei", "nuclei.log", "it refused the contract", score.Instance{Active: catalogue.All()}), nil, 0, "the tool tested nothing: it refused the contract"},
	} {
		v := c.gate.Check(c.sc)
		if !slices.Equal(v.Missed, c.missed) || len(v.Unplanted) != c.unplanted || !strings.HasPrefix(v.Untestable, c.untestable) || (c.untestable == "") != (v.Untestable == "") {
			t.Errorf("%s: missed %q, unplanted %q, untestable %q", c.name, v.Missed, v.Unplanted, v.Untestable)
		}
		if want := c.missed == nil && c.unplanted == 0 && c.untestable == ""; v.Passed() != want {
			t.Errorf("%s: passed %v, want %v", c.name, v.Passed(), want)
		}
	}
	v := score.Gate{Require: set("none"), MaxUnplanted: 0}.Check(full)
	if !strings.HasPrefix(v.Unplanted[0], "GET /admin  F210 (no class) ×1") {
		t.Errorf("unplanted named as %q", v.Unplanted[0])
	}
}
