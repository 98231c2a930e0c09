package runner

import (
	"slices"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
)

// A tool's command gets the instance's URL, the trial's seed, its output
// folder and the instance's DEFECTS, however often each is named.
func TestExpand(t *testing.T) {
	t.Parallel()
	got := Expand([]string{"replay", "-base", "{url}", "-seed", "{seed}", "-out", "{out}/r.csv", "-defects", "{defects}", "{seed}-{defects}"},
		"http://127.0.0.1:1", "7", "/tmp/o", catalogue.Mutants(42, 30))
	want := []string{"replay", "-base", "http://127.0.0.1:1", "-seed", "7", "-out", "/tmp/o/r.csv", "-defects", "mutants:42:30", "7-mutants:42:30"}
	if !slices.Equal(got, want) {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if got := Expand([]string{"{defects}"}, "", "", "", catalogue.All()); got[0] != "all" {
		t.Errorf("the ten's setting: %q", got)
	}
}
