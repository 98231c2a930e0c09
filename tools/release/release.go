// Package release is how the repository's Go modules are released: which
// modules a version tags, the go.mod files a release commit carries (the
// siblings named at the released version, no replace directives, so that
// `go install …@vX.Y.Z` accepts them), the tags, and a Go module proxy built
// from the working copy or from the tags, for checking a release before it
// is pushed (RELEASING.md).
//
// On main every module requires its siblings at the last released version
// and replaces them with their directories, as OpenTelemetry-Go's modules
// do: go mod tidy, go get and GOWORK=off builds work offline, and go.work
// builds the working copy. The release commit, made on top of main by
// `showcase-release tag` and pointed at only by the tags, drops the
// replaces.
package release

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// Prefix is the path every module of the repository starts with.
const Prefix = "github.com/defectshowcase/showcase"

// unreleased are the workspace's modules no version tags: the end-to-end
// tests are not a library, and need the repository around them.
var unreleased = []string{"e2e"}

// Module is one module of the workspace.
type Module struct {
	Path string // its module path
	Dir  string // its directory, relative to the repository's root, "." for the root
}

// Tag is the git tag of the module's version: vX.Y.Z at the root,
// dir/vX.Y.Z below it, as the go command looks them up.
func (m Module) Tag(version string) string {
	if m.Dir == "." {
		return version
	}
	return m.Dir + "/" + version
}

// Modules are the workspace's modules (go.work's use directives) in its
// order, and which of them a version tags.
func Modules(root string) (all, released []Module, err error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range wf.Use {
		dir := path.Clean(u.Path)
		mp, err := modulePath(filepath.Join(root, dir, "go.mod"))
		if err != nil {
			return nil, nil, err
		}
		m := Module{Path: mp, Dir: dir}
		all = append(all, m)
		if !slices.Contains(unreleased, dir) {
			released = append(released, m)
		}
	}
	return all, released, nil
}

func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if p := modfile.ModulePath(data); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// Rewrite gives a go.mod the requirements of a version: every sibling it
// requires at version and, unless keepReplace, none of the replace
// directives that point a sibling at its directory. It returns the new
// file; a replace of anything else, or a sibling required by no version,
// is an error (a release names what it needs).
func Rewrite(gomod []byte, version string, keepReplace bool) ([]byte, error) {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return nil, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH", version)
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range f.Require {
		if sibling(r.Mod.Path) {
			if err := f.AddRequire(r.Mod.Path, version); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range slices.Clone(f.Replace) {
		if !sibling(r.Old.Path) {
			return nil, fmt.Errorf("go.mod replaces %s: only the repository's own modules may be replaced", r.Old.Path)
		}
		if !keepReplace {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, err
			}
		}
	}
	f.Cleanup()
	return f.Format()
}

func sibling(p string) bool { return p == Prefix || strings.HasPrefix(p, Prefix+"/") }

// SetVersion rewrites every workspace module's go.mod in root (Rewrite).
func SetVersion(root, version string, keepReplace bool) error {
	all, _, err := Modules(root)
	if err != nil {
		return err
	}
	for _, m := range all {
		p := filepath.Join(root, m.Dir, "go.mod")
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out, err := Rewrite(data, version, keepReplace)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Proxy is a Go module proxy's directory (GOPROXY=file://DIR, or served
// by http.FileServer): the layout of the GOPROXY protocol.
type Proxy struct{ Dir string }

// Add writes one module version: its .info, .mod and .zip, and its line
// in the list. zipFn writes the zip; the .mod is taken from it.
func (p Proxy) Add(m module.Version, at time.Time, zipFn func(io.Writer) error) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(p.Dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zb bytes.Buffer
	if err := zipFn(&zb); err != nil {
		return fmt.Errorf("%s: %w", m, err)
	}
	gomod, err := fileInZip(zb.Bytes(), m, "go.mod")
	if err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, at.UTC()})
	for name, data := range map[string][]byte{".info": info, ".mod": gomod, ".zip": zb.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, m.Version+name), data, 0o644); err != nil {
			return err
		}
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	if !slices.Contains(strings.Fields(string(list)), m.Version) {
		list = append(list, m.Version+"\n"...)
	}
	return os.WriteFile(filepath.Join(dir, "list"), list, 0o644)
}

func fileInZip(data []byte, m module.Version, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	f, err := zr.Open(m.String() + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("%s: %s not in its zip: %w", m, name, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// FromTags adds to p every released module at version as the tags in the
// git repository at root hold it: what a proxy serves once they are pushed.
func FromTags(p Proxy, root, version string) error {
	_, released, err := Modules(root)
	if err != nil {
		return err
	}
	for _, m := range released {
		tag := m.Tag(version)
		out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%cI", tag).Output()
		if err != nil {
			return fmt.Errorf("tag %s: %w", tag, err)
		}
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
		if err != nil {
			return err
		}
		subdir := m.Dir
		if subdir == "." {
			subdir = ""
		}
		mv := module.Version{Path: m.Path, Version: version}
		if err := p.Add(mv, at, func(w io.Writer) error { return modzip.CreateFromVCS(w, mv, root, tag, subdir) }); err != nil {
			return err
		}
	}
	return nil
}

// FromWorkingCopy adds to p every released module at version as the
// working copy at root has it, its go.mod as the release commit will
// (Rewrite): the files git tracks or would (not those it ignores), less
// those of a module below.
func FromWorkingCopy(p Proxy, root, version string) error {
	_, released, err := Modules(root)
	if err != nil {
		return err
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil { // deleted but not yet staged
			files = append(files, f)
		}
	}
	moduleDirs := map[string]bool{}
	for _, f := range files {
		if path.Base(f) == "go.mod" {
			moduleDirs[path.Dir(f)] = true
		}
	}
	now := time.Now()
	for _, m := range released {
		var own []modzip.File
		for _, f := range files {
			if owner(f, moduleDirs) == m.Dir {
				rel := f
				if m.Dir != "." {
					rel = strings.TrimPrefix(f, m.Dir+"/")
				}
				own = append(own, file{root: root, name: f, rel: rel, version: version})
			}
		}
		mv := module.Version{Path: m.Path, Version: version}
		if err := p.Add(mv, now, func(w io.Writer) error { return modzip.Create(w, mv, own) }); err != nil {
			return err
		}
	}
	return nil
}

// owner is the directory of the module a file belongs to: the nearest
// directory above it with a go.mod.
func owner(f string, moduleDirs map[string]bool) string {
	for d := path.Dir(f); ; d = path.Dir(d) {
		if moduleDirs[d] {
			return d
		}
		if d == "." || d == "/" {
			return "."
		}
	}
}

// file is a working copy's file for modzip.Create; its go.mod rewritten.
type file struct{ root, name, rel, version string }

func (f file) Path() string { return f.rel }

func (f file) Lstat() (fs.FileInfo, error) { return os.Lstat(filepath.Join(f.root, f.name)) }

func (f file) Open() (io.ReadCloser, error) {
	if f.rel != "go.mod" {
		return os.Open(filepath.Join(f.root, f.name))
	}
	data, err := os.ReadFile(filepath.Join(f.root, f.name))
	if err != nil {
		return nil, err
	}
	out, err := Rewrite(data, f.version, false)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

// Version is the version main's go.mod files name their siblings at: the
// last release's, or the next one's before the first.
func Version(root string) (string, error) {
	all, _, err := Modules(root)
	if err != nil {
		return "", err
	}
	var found string
	for _, m := range all {
		data, err := os.ReadFile(filepath.Join(root, m.Dir, "go.mod"))
		if err != nil {
			return "", err
		}
		f, err := modfile.Parse("go.mod", data, nil)
		if err != nil {
			return "", err
		}
		for _, r := range f.Require {
			if !sibling(r.Mod.Path) {
				continue
			}
			if found != "" && r.Mod.Version != found {
				return "", fmt.Errorf("%s/go.mod requires %s, others %s: one version for all (showcase-release version)", m.Dir, r.Mod, found)
			}
			found = r.Mod.Version
		}
	}
	if found == "" {
		return "", errors.New("no module requires another: no version named")
	}
	return found, nil
}
