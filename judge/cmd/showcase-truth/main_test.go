package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
)

// The command writes the catalogue's ground truth for the setting it is
// given, and refuses a setting that names no defect.
func TestWritesTheGroundTruth(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "truth.json")
	var stdout strings.Builder
	if err := run([]string{"-defects", "conformance", "-o", file}, &stdout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got catalogue.Truth
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != catalogue.Version || got.Setting != "CONF-01,CONF-02,CONF-03,CONF-04" || len(got.Defects) != len(catalogue.Defects) || len(got.Off) != 6 {
		t.Fatalf("got version %d, setting %s, %d defects, off %v", got.Version, got.Setting, len(got.Defects), got.Off)
	}
	if err := run([]string{"-defects", "CONF-9"}, &stdout); err == nil || !strings.Contains(err.Error(), "conf-9") {
		t.Fatalf("an unknown defect: %v", err)
	}
}

// -format wfc writes the answer key, valid against WFC's published schema,
// or with the catalogue's codes; what it cannot write is refused.
func TestWritesTheAnswerKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		faults int
		valid  bool
	}{
		{[]string{"-format", "wfc"}, 7, true},
		{[]string{"-format", "wfc", "-codes", "catalogue"}, 8, false},
		{[]string{"-format", "wfc", "-defects", "none"}, 0, true},
	} {
		var stdout strings.Builder
		if err := run(c.args, &stdout); err != nil {
			t.Fatal(err)
		}
		var key wfc.Report
		if err := json.Unmarshal([]byte(stdout.String()), &key); err != nil {
			t.Fatal(err)
		}
		if p := wfctest.Check([]byte(stdout.String())); len(key.Faults.FoundFaults) != c.faults || (len(p) == 0) != c.valid {
			t.Errorf("%v: %d faults, problems %q", c.args, len(key.Faults.FoundFaults), p)
		}
	}
	for _, args := range [][]string{{"-format", "sarif"}, {"-format", "wfc", "-codes", "all"}, {"-codes", "catalogue"}} {
		if err := run(args, &strings.Builder{}); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
