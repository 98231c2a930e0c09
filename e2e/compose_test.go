package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// need skips (locally) or fails (in CI) when a component is missing.
func need(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(what + " — required in CI")
	}
	t.Skip(what)
}

// composeTools are the compose implementations on this machine.
func composeTools() map[string][]string {
	tools := map[string][]string{}
	if exec.Command("docker-compose", "version").Run() == nil {
		tools["docker-compose"] = []string{"docker-compose"}
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		tools["compose-v2"] = []string{"docker", "compose"}
	}
	return tools
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// The five containers come up healthy; the behaviour suite passes through
// the gateway's published port; a stopped service fails only its category,
// with 502 JSON within a second, and recovers without restarting the
// gateway; down leaves nothing behind.
func TestComposeEndToEnd(t *testing.T) {
	if exec.Command("docker", "info").Run() != nil {
		need(t, "no Docker engine answers")
	}
	tools := composeTools()
	if len(tools) == 0 {
		need(t, "neither docker-compose nor docker compose is installed")
	}
	tag := fmt.Sprintf("e2e-%d", os.Getpid())
	run(t, nil, "make", "-C", "..", "images", "SHOWCASE_TAG="+tag)
	t.Cleanup(func() {
		for _, svc := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc", "showcase-agent", "showcase-replay"} {
			_ = exec.Command("docker", "rmi", "defect-showcase/"+svc+":"+tag).Run()
		}
	})
	t.Run("images", func(t *testing.T) { checkImages(t, tag) })
	for name, tool := range tools {
		t.Run(name, func(t *testing.T) { composeScenario(t, tool, tag) })
	}
	for _, name := range []string{"compose-v2", "docker-compose"} { // one tool is enough
		if tool, ok := tools[name]; ok {
			t.Run(name+"/defects-off", func(t *testing.T) { composeDefectsOff(t, tool, tag) })
			break
		}
	}
}

// DEFECTS=none reaches all five containers: the behaviour suite with every
// defect switched off passes through the published port, and the gateway's
// admin port reports the setting.
func composeDefectsOff(t *testing.T, tool []string, tag string) {
	project := fmt.Sprintf("showcase-e2e-off-%d", os.Getpid())
	apiPort, adminPort := freePort(t), freePort(t)
	env := []string{"SHOWCASE_TAG=" + tag, "SHOWCASE_PORT=" + apiPort, "SHOWCASE_ADMIN_PORT=" + adminPort, "DEFECTS=none"}
	args := slices.Concat(tool[1:], []string{"-p", project, "-f", "../deploy/compose.yaml"})
	t.Cleanup(func() {
		_ = exec.Command(tool[0], append(slices.Clone(args), "down", "-v", "--remove-orphans")...).Run()
	})
	run(t, env, tool[0], append(slices.Clone(args), "up", "-d")...)
	base, admin := "http://127.0.0.1:"+apiPort, "http://127.0.0.1:"+adminPort
	client := &http.Client{Timeout: time.Minute}
	waitStatus(t, client, admin+"/readyz", 200, 60*time.Second)
	if status, body := fetch(t, client, admin+"/defects"); status != 200 || !strings.Contains(string(body), `"setting":"none"`) {
		t.Fatalf("/defects: %d %s", status, body)
	}
	t.Run("suite", func(t *testing.T) { suite.RunFor(t, base, client, catalogue.None()) })
	composeExposure(t, client, admin, false)
	t.Run("the live board", func(t *testing.T) { checkBoard(t, client, admin, true) })
}

// composeExposure: after the suite, the gateway's admin port answers for
// the four services behind it: every defect triggered (the suite sends
// each one's triggers), or, switched off, none.
func composeExposure(t *testing.T, client *http.Client, admin string, on bool) {
	t.Helper()
	status, body := fetch(t, client, admin+"/defects")
	var truth catalogue.Truth
	if status != 200 || json.Unmarshal(body, &truth) != nil {
		t.Fatalf("/defects: %d %s", status, body)
	}
	for _, d := range truth.Defects {
		if d.Exposure == nil || (d.Exposure.Count > 0) != on {
			t.Errorf("%s after the suite: exposure %+v, want triggered %v", d.ID, d.Exposure, on)
		}
	}
}

// Each image is a static binary in an empty image: under 20 MB, run as a
// non-root user, no shell to exec into.
func checkImages(t *testing.T, tag string) {
	for _, svc := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc", "showcase-agent", "showcase-replay"} {
		image := "defect-showcase/" + svc + ":" + tag
		var size int64
		fmt.Sscan(strings.TrimSpace(run(t, nil, "docker", "image", "inspect", "-f", "{{.Size}}", image)), &size)
		user := strings.TrimSpace(run(t, nil, "docker", "image", "inspect", "-f", "{{.Config.User}}", image))
		if size <= 0 || size >= 20<<20 {
			t.Errorf("%s: %d bytes, want under 20 MB", image, size)
		}
		if user == "" || user == "0" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0:") {
			t.Errorf("%s: runs as %q, want a non-root user", image, user)
		}
		if exec.Command("docker", "run", "--rm", "--entrypoint", "/bin/sh", image, "-c", "true").Run() == nil {
			t.Errorf("%s has a shell", image)
		}
		t.Logf("%s: %.1f MB, user %s", image, float64(size)/(1<<20), user)
	}
}

func composeScenario(t *testing.T, tool []string, tag string) {
	project := fmt.Sprintf("showcase-e2e-%d", os.Getpid())
	apiPort, adminPort := freePort(t), freePort(t)
	env := []string{"SHOWCASE_TAG=" + tag, "SHOWCASE_PORT=" + apiPort, "SHOWCASE_ADMIN_PORT=" + adminPort}
	compose := func(args ...string) string {
		return run(t, env, tool[0], append(append(tool[1:], "-p", project, "-f", "../deploy/compose.yaml"), args...)...)
	}
	downed := false
	t.Cleanup(func() {
		if !downed {
			_ = exec.Command(tool[0], append(append(tool[1:], "-p", project, "-f", "../deploy/compose.yaml"), "down", "-v", "--remove-orphans")...).Run()
		}
	})

	start := time.Now()
	compose("up", "-d")
	base, admin := "http://127.0.0.1:"+apiPort, "http://127.0.0.1:"+adminPort
	client := &http.Client{Timeout: time.Minute}
	waitStatus(t, client, admin+"/readyz", 200, 60*time.Second)
	t.Logf("compose up to healthy: %s", time.Since(start).Round(10*time.Millisecond))

	t.Run("suite", func(t *testing.T) { suite.Run(t, base, client) })
	composeExposure(t, client, admin, true)

	gatewayID := strings.TrimSpace(compose("ps", "-q", "gateway"))
	startedAt := inspect(t, gatewayID, "{{.State.StartedAt}}")
	// Safe by default: the admin port is published on the loopback
	// interface only, the API on every interface.
	if got := strings.TrimSpace(run(t, nil, "docker", "port", gatewayID, "9090/tcp")); got != "127.0.0.1:"+adminPort {
		t.Errorf("the admin port is published on %q, want 127.0.0.1:%s only", got, adminPort)
	}

	compose("stop", "conformance-svc")
	stopped := time.Now()
	status, body := fetch(t, client, base+suite.PathMissingField)
	var e map[string]any
	if status != 502 || json.Unmarshal(body, &e) != nil || len(e) != 1 || e["error"] == nil {
		t.Fatalf("with conformance-svc stopped: %d %s, want 502 {\"error\": ...}", status, body)
	}
	if took := time.Since(stopped); took > time.Second {
		t.Fatalf("the 502 took %s, want under a second", took)
	}
	// A stopped service is unreachable, never slow: its failure is counted
	// as a failure to connect.
	_, metrics := fetch(t, client, admin+"/metrics")
	connect := regexp.MustCompile(`showcase_gateway_upstream_failures_total\{category="conformance",kind="(refused|unreachable)",service="gateway"\} [1-9]`)
	if !connect.Match(metrics) || strings.Contains(string(metrics), `showcase_gateway_upstream_failures_total{category="conformance",kind="timeout",service="gateway"} 1`) {
		t.Errorf("the stopped service's failure is not counted as a failure to connect:\n%s", grepLines(string(metrics), "upstream_failures_total"))
	}
	for _, p := range []string{suite.PathUnauthenticatedAccess, suite.PathUnboundedResultSet + "?limit=3", suite.PathInefficientAlgorithm + "?n=11&searchTerm=55"} {
		if status, body := fetch(t, client, base+p); status != 200 {
			t.Errorf("%s while conformance-svc is stopped: %d %s", p, status, body)
		}
	}
	if s, _ := fetch(t, client, base+suite.PathColumnSize); s != 405 {
		t.Errorf("errors category while conformance-svc is stopped: %d, want its usual 405 for GET", s)
	}

	compose("start", "conformance-svc")
	waitStatus(t, client, base+suite.PathMissingField, 200, 30*time.Second)
	if now := inspect(t, gatewayID, "{{.State.StartedAt}}"); now != startedAt {
		t.Fatalf("the gateway was restarted (%s, then %s)", startedAt, now)
	}

	compose("down", "-v", "--remove-orphans")
	downed = true
	for _, kind := range []string{"container", "network", "volume"} {
		args := []string{kind, "ls", "-q", "--filter", "label=com.docker.compose.project=" + project}
		if kind == "container" {
			args = []string{"ps", "-a", "-q", "--filter", "label=com.docker.compose.project=" + project}
		}
		if left := strings.TrimSpace(run(t, nil, "docker", args...)); left != "" {
			t.Errorf("compose down left %ss behind: %s", kind, left)
		}
	}
}

func fetch(t *testing.T, client *http.Client, url string) (int, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func waitStatus(t *testing.T, client *http.Client, url string, want int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %d within %s; last: %s", url, want, limit, last)
}

func inspect(t *testing.T, id, format string) string {
	t.Helper()
	return strings.TrimSpace(run(t, nil, "docker", "inspect", "-f", format, id))
}

// grepLines are the lines of text that contain sub.
func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
