package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The report and the exposure are taken to be of one run only when the
// exposure is read now from a live instance that has counted since before
// the report was last written: a saved exposure, or an instance reset
// after the report, may be another run's.
func TestOneRun(t *testing.T) {
	t.Parallel()
	report := filepath.Join(t.TempDir(), "report.ndjson")
	if err := os.WriteFile(report, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	written := time.Now().Add(-time.Minute)
	if err := os.Chtimes(report, written, written); err != nil {
		t.Fatal(err)
	}
	before, after := written.Add(-time.Minute), written.Add(time.Second)
	for _, c := range []struct {
		exposure string
		since    *time.Time
		one      bool
	}{
		{"http://localhost:9090/defects", &before, true},
		{"https://showcase.example/defects?scope=deployment", &before, true},
		{"http://localhost:9090/defects", &after, false}, // reset after the report was written
		{"exposure.json", &before, false},                // a saved file: read when?
		{"http://localhost:9090/defects", nil, false},    // no counts
	} {
		why := oneRun(c.exposure, report, c.since)
		if (why != "") != c.one || c.one && !strings.Contains(why, c.exposure) {
			t.Errorf("oneRun(%s, since %v) = %q, want one run: %v", c.exposure, c.since, why, c.one)
		}
	}
	if why := oneRun("http://localhost:9090/defects", filepath.Join(t.TempDir(), "none"), &before); why != "" {
		t.Errorf("a report that is not there: %q", why)
	}
}
