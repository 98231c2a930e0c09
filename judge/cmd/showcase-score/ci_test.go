package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/defectshowcase/showcase/catalogue/wfc/wfctest"
)

// ciJobs are the two jobs of docs/scoring.md's "In your tool's CI".
type ciJobs struct {
	github struct {
		Jobs map[string]struct {
			Services map[string]struct {
				Image string   `yaml:"image"`
				Ports []string `yaml:"ports"`
			} `yaml:"services"`
			Env   map[string]string `yaml:"env"`
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
				Run  string            `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	gitlab map[string]struct {
		Services []struct {
			Name  string `yaml:"name"`
			Alias string `yaml:"alias"`
		} `yaml:"services"`
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
		Artifacts struct {
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
}

func readCIJobs(t *testing.T, root string) ciJobs {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "scoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs ciJobs
	found := 0
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		switch {
		case strings.Contains(block[1], "\njobs:"):
			err, found = yaml.Unmarshal([]byte(block[1]), &jobs.github), found+1
		case strings.Contains(block[1], "  script:"):
			err, found = yaml.Unmarshal([]byte(block[1]), &jobs.gitlab), found+1
		}
		if err != nil {
			t.Fatalf("docs/scoring.md: %v\n%s", err, block[1])
		}
	}
	if found != 2 {
		t.Fatalf("docs/scoring.md has %d of the two CI jobs", found)
	}
	return jobs
}

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The jobs of "In your tool's CI", each step run as written against the
// real binaries: the showcase the service's image runs (the gateway, of
// the release the jobs name), the scorer and the reference tool installed
// by the job's own `go install …@vX.Y.Z` from a Go module proxy built of
// that release's tags, made in a clone of this repository
// (showcase-release). The reference tool passes -require all
// -max-unplanted 0; the weak one fails, naming each defect it missed; the
// reference tool writing WFC passes the gate WFC can meet.
func TestCIJobs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to clone the repository as the jobs do")
	}
	root := repoRoot(t)
	jobs := readCIJobs(t, root)
	gh, ok := jobs.github.Jobs["showcase"]
	gl, ok2 := jobs.gitlab["showcase"]
	if !ok || !ok2 {
		t.Fatal("both jobs are named showcase")
	}
	version := releaseVersion(t, root)
	image := "ghcr.io/defectshowcase/gateway:" + version
	svc := gh.Services["showcase"]
	if svc.Image != image || !slices.Equal(svc.Ports, []string{"8080:8080", "9090:9090"}) ||
		gh.Env["SHOWCASE"] != "http://localhost:8080" || gh.Env["SHOWCASE_ADMIN"] != "http://localhost:9090" {
		t.Errorf("GitHub's service: %+v, env %v", svc, gh.Env)
	}
	if len(gl.Services) != 1 || gl.Services[0].Name != image || gl.Services[0].Alias != "showcase" ||
		gl.Variables["SHOWCASE"] != "http://showcase:8080" || gl.Variables["SHOWCASE_ADMIN"] != "http://showcase:9090" || gl.Artifacts.Reports["junit"] != "showcase.xml" {
		t.Errorf("GitLab's service: %+v, variables %v, reports %v", gl.Services, gl.Variables, gl.Artifacts.Reports)
	}

	// The service: what the gateway image runs, on ports of the test's.
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin+"/", "../../../gateway/cmd/gateway").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	api, admin := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	gw := exec.CommandContext(ctx, filepath.Join(bin, "gateway"))
	gw.Env = append(os.Environ(), "ADDR="+api, "ADMIN_ADDR="+admin, "DEFECTS=all")
	var gwLog bytes.Buffer
	gw.Stdout, gw.Stderr = &gwLog, &gwLog
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = gw.Wait() })
	env := append(os.Environ(), "SHOWCASE=http://"+api, "SHOWCASE_ADMIN=http://"+admin)
	env = append(env, releaseProxy(t, root, version)...)

	// job runs the steps in a fresh folder, each in its own shell as both
	// CI systems do, and returns the output of each; fail is the step
	// expected to fail, -1 for none.
	job := func(name string, steps []string, fail int) (string, []string) {
		t.Helper()
		dir := t.TempDir()
		var outs []string
		for i, step := range steps {
			cmd := exec.Command("bash", "-eo", "pipefail", "-c", step)
			cmd.Dir, cmd.Env = dir, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			outs = append(outs, out.String())
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %s: %v", name, step, err)
			}
			switch {
			case i == fail && code != 1:
				t.Fatalf("%s: %s: exit %d, want 1 (the gate failed)\n%s", name, step, code, out.String())
			case i != fail && code != 0:
				t.Fatalf("%s: %s: exit %d\n%s\ngateway:\n%s", name, step, code, out.String(), gwLog.String())
			}
		}
		return dir, outs
	}
	install := `GOBIN="$PWD/bin" go install github.com/defectshowcase/showcase/judge/cmd/showcase-score@` + version +
		" github.com/defectshowcase/showcase/judge/cmd/showcase-replay@" + version

	// GitHub: every run step.
	var ghSteps []string
	for _, s := range gh.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/setup-go@"), strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			// Go is here; the artifact is checked below.
		case s.Run != "":
			ghSteps = append(ghSteps, s.Run)
		default:
			t.Errorf("a step the test does not know: %+v", s)
		}
	}
	// GitLab: the script.
	glSteps := gl.Script
	if len(ghSteps) != 5 || len(glSteps) != 5 || ghSteps[0] != install {
		t.Fatalf("steps: GitHub %q, GitLab %q; the first installs the release's: %s", ghSteps, glSteps, install)
	}
	for i := 0; i < 4; i++ {
		if ghSteps[i] != glSteps[i] {
			t.Errorf("step %d differs between the jobs:\n%s\n%s", i, ghSteps[i], glSteps[i])
		}
	}

	// The reference tool passes, in both; the scorecard is where the job
	// keeps it.
	dir, outs := job("GitHub", ghSteps, -1)
	if !strings.Contains(outs[4], "passed the gate: reached 10 of 10 operations, 10 of 10 planted defects reported, 0 unplanted") {
		t.Errorf("GitHub's gate:\n%s", outs[4])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "showcase.sarif")); err != nil || !bytes.Contains(b, []byte(`"kind": "pass"`)) || bytes.Contains(b, []byte(`"kind": "fail"`)) {
		t.Errorf("showcase.sarif: %v\n%.2000s", err, b)
	}
	dir, outs = job("GitLab", glSteps, -1)
	if !strings.Contains(outs[4], "passed the gate: reached 10 of 10 operations, 10 of 10 planted defects reported, 0 unplanted") {
		t.Errorf("GitLab's gate:\n%s", outs[4])
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "showcase.xml")); err != nil || xml.Unmarshal(b, &suites) != nil || suites.Tests != 11 || suites.Failures != 0 {
		t.Errorf("showcase.xml: %v, %+v", err, suites)
	}

	// The weak tool fails the gate, naming what it missed.
	weak := slices.Clone(glSteps)
	weak[3] = strings.Replace(weak[3], "bin/showcase-replay ", "bin/showcase-replay -weak -seed 1 ", 1)
	dir, outs = job("GitLab, the weak tool", weak, 4)
	missed := regexp.MustCompile(`(?m)^  missed ([A-Z]+-\d+) `).FindAllStringSubmatch(outs[4], -1)
	if len(missed) != 5 || !strings.Contains(outs[4], "failed the gate:") {
		t.Errorf("the weak tool's gate names %d missed, want 5:\n%s", len(missed), outs[4])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "showcase.xml")); err != nil || xml.Unmarshal(b, &suites) != nil || suites.Failures != 5 {
		t.Errorf("the weak tool's showcase.xml: %v, %+v", err, suites)
	}
	for _, m := range missed {
		if !strings.Contains(outs[4], m[1]) {
			t.Errorf("%s not named", m[1])
		}
	}
	// The docs show it as it is.
	doc, _ := os.ReadFile(filepath.Join(root, "docs", "scoring.md"))
	shown := regexp.MustCompile("(?s)The weak tool's gate, as the test sees it.*?```text\n(.*?)```").FindSubmatch(doc)
	if shown == nil || string(shown[1]) != outs[4] {
		t.Errorf("docs/scoring.md shows the weak tool's gate as\n%s\nit is\n%s", shown, outs[4])
	}

	// The reference tool writing WFC: its report is WFC's published
	// schema but for F207, and it passes the gate of what WFC can say.
	wfcSteps := slices.Clone(glSteps)
	wfcSteps[3] = strings.Replace(wfcSteps[3], "-out report.csv", "-format wfc -out report.json", 1)
	wfcSteps[4] = strings.NewReplacer("-require all", "-require security,errors,conformance", "report.csv", "report.json").Replace(wfcSteps[4])
	dir, outs = job("GitLab, WFC", wfcSteps, -1)
	if !strings.Contains(outs[4], "(report.json) passed the gate: reached 10 of 10 operations, 8 of 10 planted defects reported, 0 unplanted") {
		t.Errorf("the WFC report's gate:\n%s", outs[4])
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := wfctest.Check(report); len(p) != 1 || !strings.Contains(p[0], "code: 207 is outside") {
		t.Errorf("the reference tool's WFC report against the schema: %q", p)
	}
	if !bytes.Contains(report, []byte("slow-response on GET:/performance/unbounded-result-set")) {
		t.Errorf("the slow answers are not warnings:\n%s", report)
	}
	// And the gate's statuses for the rest: a report that cannot be read
	// is 2.
	cmd := exec.Command(filepath.Join(dir, "bin", "showcase-score"), "-require", "all", filepath.Join(dir, "no-such-report.json"))
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("a missing report: %v, want exit 2", err)
	}
}

// repoRoot is the repository's root.
// releaseVersion is the version the repository's go.mod files name: the
// release the jobs install (showcase-release version).
func releaseVersion(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("go", "run", "./tools/cmd/showcase-release", "version")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("showcase-release version: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// releaseProxy makes the release of version in a clone of the repository
// (showcase-release tag: its commit and tags), builds a Go module proxy of
// those tags, and returns the variables of a go command that installs
// from it as a user would from the real one (showcase-release env).
func releaseProxy(t *testing.T, root, version string) []string {
	t.Helper()
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	steps := [][]string{
		{"git", "clone", "-q", "--no-local", root, clone},
		{"git", "-C", clone, "config", "user.name", "release test"},
		{"git", "-C", clone, "config", "user.email", "release@test.invalid"},
		{"go", "run", "./tools/cmd/showcase-release", "tag", version},
		{"go", "run", "./tools/cmd/showcase-release", "proxy", filepath.Join(tmp, "proxy"), version},
		{"go", "run", "./tools/cmd/showcase-release", "env", "file://" + filepath.Join(tmp, "proxy"), filepath.Join(tmp, "modcache")},
	}
	var out []byte
	for i, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		if i >= 3 {
			cmd.Dir = clone
		}
		var err error
		if out, err = cmd.Output(); err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%v: %v\n%s%s", s, err, out, stderr)
		}
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatal(err)
	}
	return root
}
