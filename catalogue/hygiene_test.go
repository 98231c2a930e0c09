package catalogue

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// idPattern is how a defect ID is spelled.
	idPattern = regexp.MustCompile(`\b(SEC|ERR|CONF|PERF)-\d\d\b`)
	// marker is a DEFECT(<id>) marker on planted code.
	marker = regexp.MustCompile(`DEFECT\((SEC|ERR|CONF|PERF)-\d\d\)`)
	// routeRow is a row of a service's route table.
	routeRow = regexp.MustCompile(`Pattern: "([^"]+)", Defect: "([^"]+)"`)
)

// The catalogue is the one place that states which endpoints and defects
// exist. Outside it, no Go file but a test spells an endpoint's path or a
// defect's ID, except a service's route table (each row naming its path and
// its defect, which must agree with the catalogue) and the DEFECT(<id>)
// markers on the planted code, one or more for every defect.
func TestNothingElseSpellsTheCatalogue(t *testing.T) {
	t.Parallel()
	markers := map[string]int{}
	rows := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "out", "bin", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if path == filepath.Join("..", "catalogue") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			where := path + ":" + itoa(i+1)
			if m := marker.FindStringSubmatch(line); m != nil {
				markers[strings.TrimSuffix(strings.TrimPrefix(m[0], "DEFECT("), ")")]++
				continue
			}
			if m := routeRow.FindStringSubmatch(line); m != nil {
				rows[m[2]] = m[1]
				if i := index(ID(m[2])); i < 0 || EndpointOf(ID(m[2])).Path != m[1] {
					t.Errorf("%s: the route table says %s carries %s; the catalogue does not", where, m[1], m[2])
				}
				continue
			}
			if id := idPattern.FindString(line); id != "" {
				t.Errorf("%s spells %s: %s", where, id, strings.TrimSpace(line))
			}
			for _, e := range Endpoints {
				if strings.Contains(line, e.Path) {
					t.Errorf("%s spells %s: %s", where, e.Path, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Defects {
		if markers[string(d.ID)] == 0 {
			t.Errorf("no DEFECT(%s) marker on planted code", d.ID)
		}
		if rows[string(d.ID)] == "" {
			t.Errorf("no route table row carries %s", d.ID)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
