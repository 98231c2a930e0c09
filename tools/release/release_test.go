package release

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	in := []byte(`module github.com/defectshowcase/showcase/gateway

go 1.26.8

require (
	github.com/defectshowcase/showcase/platform v0.1.0
	github.com/go-chi/chi/v5 v5.5.0
)

require github.com/defectshowcase/showcase v0.1.0 // indirect

replace github.com/defectshowcase/showcase/platform => ../platform

replace github.com/defectshowcase/showcase => ..
`)
	out, err := Rewrite(in, "v1.2.3", false)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"github.com/defectshowcase/showcase/platform v1.2.3\n", "github.com/defectshowcase/showcase v1.2.3 // indirect", "github.com/go-chi/chi/v5 v5.5.0"} {
		if !strings.Contains(s, want) {
			t.Errorf("released go.mod lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "replace") {
		t.Errorf("released go.mod still replaces:\n%s", s)
	}
	kept, err := Rewrite(in, "v1.2.3", true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(kept), "=> ") != 2 || !strings.Contains(string(kept), "platform v1.2.3") {
		t.Errorf("main's go.mod after set: the version named, the replaces kept:\n%s", kept)
	}
	for _, bad := range []string{"1.2.3", "v1.2", "v1.2.3+meta"} {
		if _, err := Rewrite(in, bad, false); err == nil {
			t.Errorf("version %q accepted", bad)
		}
	}
	other := append(append([]byte{}, in...), "replace github.com/go-chi/chi/v5 => ../chi\n"...)
	if _, err := Rewrite(other, "v1.2.3", false); err == nil {
		t.Error("a replace of a module not ours is released silently")
	}
}

// Every workspace module names its siblings at one version, and every
// module but the end-to-end tests is released.
func TestModules(t *testing.T) {
	root := repoRoot(t)
	all, released, err := Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(released)+1 {
		t.Errorf("%d modules, %d released: all but e2e are", len(all), len(released))
	}
	for _, m := range released {
		if m.Dir == "e2e" || !strings.HasPrefix(m.Path, Prefix) {
			t.Errorf("released: %+v", m)
		}
	}
	if _, err := Version(root); err != nil {
		t.Error(err)
	}
	if got := (Module{Dir: "."}).Tag("v1.0.0"); got != "v1.0.0" {
		t.Errorf("root tag %q", got)
	}
	if got := (Module{Dir: "judge"}).Tag("v1.0.0"); got != "judge/v1.0.0" {
		t.Errorf("judge's tag %q", got)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatal(err)
	}
	return root
}

// A user's `go install …@vX.Y.Z`, against a Go module proxy served here
// from the tags of a release commit made (showcase-release tag) in a clone
// of this repository: the gateway, the scorer and the trial runner install
// and print the version.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs from a proxy")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git: ", err)
	}
	root := repoRoot(t)
	version, err := Version(root)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	if out, err := exec.Command("git", "clone", "-q", "--no-local", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	for _, kv := range [][2]string{{"user.name", "release test"}, {"user.email", "release@test.invalid"}} {
		if out, err := exec.Command("git", "-C", clone, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
	}
	tags, err := Tag(clone, version)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) < 8 || tags[0] != version {
		t.Errorf("tags %v", tags)
	}
	gomod, err := exec.Command("git", "-C", clone, "show", "gateway/"+version+":gateway/go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(gomod), "replace") || !strings.Contains(string(gomod), "showcase/platform "+version) {
		t.Errorf("the tagged gateway/go.mod:\n%s", gomod)
	}
	p := Proxy{Dir: filepath.Join(tmp, "proxy")}
	if err := FromTags(p, clone, version); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(p.Dir)))
	defer srv.Close()
	env, err := GoEnv(srv.URL, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(tmp, "bin")
	env = append(env, "GOBIN="+gobin)
	for _, pkgs := range [][]string{
		{Prefix + "/gateway/cmd/gateway@" + version},
		{Prefix + "/judge/cmd/showcase-score@" + version, Prefix + "/judge/cmd/showcase-trials@" + version},
	} {
		cmd := exec.Command("go", append([]string{"install"}, pkgs...)...)
		cmd.Dir, cmd.Env = tmp, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go install %v: %v\n%s", pkgs, err, out)
		}
	}
	for _, prog := range []string{"gateway", "showcase-score", "showcase-trials"} {
		out, err := exec.Command(filepath.Join(gobin, prog), "-version").CombinedOutput()
		if err != nil {
			t.Errorf("%s -version: %v: %s", prog, err, out)
			continue
		}
		if !strings.Contains(string(out), version) {
			t.Errorf("%s -version printed %q, want %s", prog, out, version)
		}
	}
}

func TestNotes(t *testing.T) {
	cl := []byte("# Changelog\n\nintro\n\n## Unreleased\n\n- next\n\n## [0.2.0] - 2027-01-02\n\n### Added\n- two\n\n## v0.1.0 - 2026-11-27\n\n- one\n- [0.2.0] link\n")
	for v, want := range map[string]string{"v0.2.0": "### Added\n- two\n", "v0.1.0": "- one\n- [0.2.0] link\n"} {
		got, err := Notes(cl, v)
		if err != nil || got != want {
			t.Errorf("Notes(%s) = %q, %v; want %q", v, got, err, want)
		}
	}
	for _, v := range []string{"v0.3.0", "v0.1", "v0.1.0.1"} {
		if got, err := Notes(cl, v); err == nil {
			t.Errorf("Notes(%s) = %q, want an error", v, got)
		}
	}
	// The repository's own changelog describes the version main names.
	root := repoRoot(t)
	v, err := Version(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Notes(data, v); err != nil {
		t.Error(err)
	}
}
