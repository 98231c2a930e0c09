package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
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
