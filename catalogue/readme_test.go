package catalogue

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated tables of the README, docs/defects-off.md and docs/mutants.md")

// The defect tables of the README and of docs/defects-off.md are the
// catalogue's, rendered: edit the catalogue and run go test ./catalogue
// -update.
func TestReadmeTables(t *testing.T) {
	for _, tbl := range []struct{ file, begin, end, body string }{
		{"../README.md", DefectTableBegin, DefectTableEnd, DefectTable()},
		{"../docs/defects-off.md", SwitchTableBegin, SwitchTableEnd, SwitchTable()},
		{"../docs/mutants.md", OperatorTableBegin, OperatorTableEnd, OperatorTable()},
		{"../docs/mutants.md", ConditionTableBegin, ConditionTableEnd, ConditionTable()},
	} {
		b, err := os.ReadFile(tbl.file)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i, j := strings.Index(doc, tbl.begin), strings.Index(doc, tbl.end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the markers %q … %q", tbl.file, tbl.begin, tbl.end)
		}
		if doc[i+len(tbl.begin)+1:j] == tbl.body {
			continue
		}
		if !*update {
			t.Errorf("%s's table after %q is not the catalogue's: run go test ./catalogue -update", tbl.file, tbl.begin)
			continue
		}
		doc = doc[:i+len(tbl.begin)+1] + tbl.body + doc[j:]
		if err := os.WriteFile(tbl.file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every defect is complete: an endpoint that names it back, a trigger, a
// class of check, the sentences the README and the front page show (what a
// trigger shows starts with its status, which the collections rely on).
func TestCatalogueIsComplete(t *testing.T) {
	t.Parallel()
	if len(Endpoints) != len(Defects) {
		t.Fatalf("%d endpoints, %d defects", len(Endpoints), len(Defects))
	}
	for i, e := range Endpoints {
		d := Defects[i]
		if e.N != i+1 || d.Endpoint != e.N || e.Defect != d.ID {
			t.Errorf("endpoint %d and defect %s do not name each other", e.N, d.ID)
		}
		c, ok := CategoryNamed(e.Category)
		if !ok || !strings.HasPrefix(e.Path, c.Prefix+"/") {
			t.Errorf("%s: %s is not under its category's prefix", d.ID, e.Path)
		}
		if len(d.Triggers) == 0 || len(d.Classes) == 0 || d.Title == "" || d.Symptom == "" || d.Off == "" || d.TriggeredWhen == "" {
			t.Errorf("%s is incomplete", d.ID)
		}
		for _, tr := range d.Triggers {
			if tr.Status == 0 || tr.OffStatus == 0 || tr.Shows == "" || tr.OffShows == "" || (tr.Body != "") != (e.Method == "POST") ||
				!strings.HasPrefix(tr.Shows, strconv.Itoa(tr.Status)) || !strings.HasPrefix(tr.OffShows, strconv.Itoa(tr.OffStatus)) {
				t.Errorf("%s: trigger %+v is incomplete", d.ID, tr)
			}
		}
	}
}
