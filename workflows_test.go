package showcase_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The GitHub Actions workflows pass actionlint (built pinned by
// scripts/release-deps.sh, which make test runs), every action they use is
// pinned by its commit (as go-httpbin's and the OpenSSF's scorecard ask),
// CI runs exactly .ci/run, and a release runs exactly make release, once
// its rehearsal (make test-release) has passed.
func TestWorkflows(t *testing.T) {
	files, err := filepath.Glob(".github/workflows/*.yml")
	if err != nil || len(files) != 2 {
		t.Fatalf("workflows: %v %v, want ci.yml and release.yml", files, err)
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+)`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(data), -1) {
			if !pinned.MatchString(m[1]) {
				t.Errorf("%s: %s is not pinned by a commit", f, m[1])
			}
		}
	}
	for _, c := range [][2]string{
		{".github/workflows/ci.yml", "bash .ci/run"},
		{".github/workflows/release.yml", "env \"PATH=$PATH\" make test-release\n"},
		{".github/workflows/release.yml", "needs: rehearse\n"},
		{".github/workflows/release.yml", "run: make release\n"},
		{".github/workflows/release.yml", "run: make release-images "},
		{".github/workflows/release.yml", "run: make release-chart "},
	} {
		data, _ := os.ReadFile(c[0])
		if !strings.Contains(string(data), c[1]) {
			t.Errorf("%s does not run %q", c[0], c[1])
		}
	}
	ci, _ := os.ReadFile(".ci/run")
	if !strings.Contains(string(ci), "\nmake test\n") {
		t.Errorf(".ci/run does not run make test:\n%s", ci)
	}

	actionlint := filepath.Join(goEnv(t, "GOPATH"), "bin", "actionlint")
	if _, err := os.Stat(actionlint); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("actionlint is not built (scripts/release-deps.sh): %v", err)
		}
		t.Skipf("actionlint is not built (scripts/release-deps.sh actionlint): %v", err)
	}
	out, err := exec.Command(actionlint, "-color=false").CombinedOutput()
	if err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
	// actionlint finds what it checks by itself: it must have found ours.
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ github.nope }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(actionlint, "-color=false", bad).CombinedOutput(); err == nil {
		t.Errorf("actionlint passed a workflow with an unknown context property:\n%s", out)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
