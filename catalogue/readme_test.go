package catalogue

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's generated tables")

// The README's defect tables are the catalogue's, rendered: edit the
// catalogue and run go test ./catalogue -update.
func TestReadmeTables(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, tbl := range []struct{ begin, end, body string }{
		{DefectTableBegin, DefectTableEnd, DefectTable()},
		{SwitchTableBegin, SwitchTableEnd, SwitchTable()},
	} {
		i, j := strings.Index(readme, tbl.begin), strings.Index(readme, tbl.end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers %q … %q", tbl.begin, tbl.end)
		}
		got := readme[i+len(tbl.begin)+1 : j]
		if got == tbl.body {
			continue
		}
		if !*update {
			t.Errorf("README.md's table after %q is not the catalogue's: run go test ./catalogue -update", tbl.begin)
			continue
		}
		readme = readme[:i+len(tbl.begin)+1] + tbl.body + readme[j:]
	}
	if *update {
		if err := os.WriteFile("../README.md", []byte(readme), 0o644); err != nil {
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
