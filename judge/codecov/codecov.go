// Package codecov is the code coverage of an instance built with Go's
// coverage (make build COVER=1): a snapshot of its counters taken from its
// admin port (/coverage/code), kept as Go's own data files, and the
// statement coverage that `go tool covdata` reads from them, overall, per
// package, per endpoint (the functions behind each operation's route) and
// for each planted defect's code (the blocks its DEFECT marker stands on).
// Where no Go toolchain or no source is at hand the raw data is kept and the
// report says what it could not compute; Compute can be run again later.
package codecov

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/cover"
)

// ModulePrefix is the import path every package of the showcase has below
// it, and the folder of the source that holds it.
const ModulePrefix = "github.com/defectshowcase/showcase/"

// Count is statements covered of a total.
type Count struct {
	Covered int `json:"covered"`
	Total   int `json:"total"`
}

// Percent is Covered over Total in percent, 0 for nothing to cover.
func (c Count) Percent() float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(c.Covered) / float64(c.Total)
}

func (c Count) String() string { return fmt.Sprintf("%d/%d (%.1f%%)", c.Covered, c.Total, c.Percent()) }

// Item is the statement coverage of a named part of the code.
type Item struct {
	Name string `json:"name"`
	Count
	// Functions are the functions counted, for an endpoint.
	Functions []string `json:"functions,omitempty"`
}

// Defect is the coverage of one planted defect's code: the statements of
// the blocks its DEFECT(<id>) markers stand on.
type Defect struct {
	ID string `json:"id"`
	Count
	// Executed: any of its statements ran.
	Executed bool     `json:"executed"`
	Sites    []string `json:"sites"` // file:line of each marker's code
}

// Report is an instance's statement coverage.
type Report struct {
	// Raw is the folder of the snapshot's data files, kept (a trial's are;
	// showcase-score keeps a snapshot it took only where something could
	// not be computed from it).
	Raw string `json:"raw,omitempty"`
	// Missing says what could not be computed and why; empty when all was.
	Missing    string   `json:"missing,omitempty"`
	Statements Count    `json:"statements"`
	Packages   []Item   `json:"packages"`
	Endpoints  []Item   `json:"endpoints"`
	Defects    []Defect `json:"defects"`
}

// maxSnapshot bounds a snapshot's archive.
const maxSnapshot = 64 << 20

var dataFile = regexp.MustCompile(`^cov(meta\.[0-9a-f]{32}|counters\.[0-9a-f]{32}\.[0-9]+\.[0-9]+)$`)

// Snapshot asks the instance whose admin port is at admin for a snapshot of
// its counters and writes Go's data files into dir. ErrNotBuilt means the
// instance was built without coverage.
func Snapshot(ctx context.Context, client *http.Client, admin, dir string) error {
	u, err := url.Parse(admin)
	if err != nil {
		return err
	}
	// Its query stays: ?scope=deployment asks for every replica's.
	u.Path = strings.TrimRight(u.Path, "/") + "/coverage/code"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return ErrNotBuilt
	case res.StatusCode != http.StatusOK:
		var e struct {
			Error string `json:"error"`
		}
		if b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10)); json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("GET %s: %s: %s", req.URL, res.Status, e.Error)
		}
		return fmt.Errorf("GET %s: %s", req.URL, res.Status)
	}
	return Unpack(io.LimitReader(res.Body, maxSnapshot), dir)
}

// ErrNotBuilt is the answer of an instance built without coverage.
var ErrNotBuilt = errors.New("the instance was built without code coverage (make build COVER=1)")

// Unpack writes a snapshot's archive into dir: Go's data files only, by
// their own names.
func Unpack(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("the snapshot: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !dataFile.MatchString(h.Name) {
			return fmt.Errorf("the snapshot: %q is not a coverage data file", h.Name)
		}
		f, err := os.Create(filepath.Join(dir, h.Name))
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		n++
	}
	if n < 2 {
		return fmt.Errorf("the snapshot has %d files, want the meta-data and the counters", n)
	}
	return nil
}

// Compute reads the statement coverage of the data files in raw with `go
// tool covdata`, and maps it onto the source under src (the repository's
// root): per package, per endpoint, per planted defect. What it cannot
// compute it says in Missing, with the reason.
func Compute(ctx context.Context, raw, src string) *Report {
	goTool, _ := exec.LookPath("go")
	return ComputeWith(ctx, raw, src, goTool)
}

// ComputeWith is Compute with the go command at goTool; "" is none.
func ComputeWith(ctx context.Context, raw, src, goTool string) *Report {
	rep := &Report{Raw: raw, Packages: []Item{}, Endpoints: []Item{}, Defects: []Defect{}}
	if goTool == "" {
		rep.Missing = "no Go toolchain here (go is not on PATH): the raw data is kept in " + raw + "; computed again (showcase-score -rebuild) where Go is"
		return rep
	}
	if _, err := os.Stat(raw); err != nil {
		rep.Missing = "the raw data: " + err.Error()
		return rep
	}
	tmp, err := os.MkdirTemp("", "codecov")
	if err != nil {
		rep.Missing = err.Error()
		return rep
	}
	defer os.RemoveAll(tmp)
	profile := filepath.Join(tmp, "profile.txt")
	if out, err := exec.CommandContext(ctx, goTool, "tool", "covdata", "textfmt", "-i="+raw, "-o="+profile).CombinedOutput(); err != nil {
		rep.Missing = fmt.Sprintf("go tool covdata textfmt: %v: %s", err, strings.TrimSpace(string(out)))
		return rep
	}
	profiles, err := cover.ParseProfiles(profile)
	if err != nil {
		rep.Missing = "the profile: " + err.Error()
		return rep
	}
	packages := map[string]*Count{}
	for _, p := range profiles {
		pkg := packages[path.Dir(p.FileName)]
		if pkg == nil {
			pkg = &Count{}
			packages[path.Dir(p.FileName)] = pkg
		}
		for _, b := range p.Blocks {
			add(&rep.Statements, b)
			add(pkg, b)
		}
	}
	for _, name := range sortedKeys(packages) {
		rep.Packages = append(rep.Packages, Item{Name: name, Count: *packages[name]})
	}
	code, err := readSource(src, profiles)
	if err != nil {
		rep.Missing = "the source, for the endpoints and the defects: " + err.Error()
		return rep
	}
	rep.Endpoints = code.endpoints(profiles)
	rep.Defects = code.defects(profiles)
	return rep
}

func add(c *Count, b cover.ProfileBlock) {
	c.Total += b.NumStmt
	if b.Count > 0 {
		c.Covered += b.NumStmt
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DefaultSource is where the showcase's source is when nobody says: the
// nearest folder, from the working directory up, that holds the workspace
// (go.work beside gateway/go.mod); else the working directory.
func DefaultSource() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "gateway", "go.mod")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// Text is the report in a few lines for a person.
func (r *Report) Text() string {
	var b strings.Builder
	if r.Statements.Total > 0 {
		fmt.Fprintf(&b, "statements %s\n", r.Statements)
		executed := 0
		for _, d := range r.Defects {
			if d.Executed {
				executed++
			}
		}
		if len(r.Defects) > 0 {
			fmt.Fprintf(&b, "planted code executed: %d of %d defects\n", executed, len(r.Defects))
		}
	}
	if r.Missing != "" {
		fmt.Fprintf(&b, "not computed: %s\n", r.Missing)
	}
	return b.String()
}
