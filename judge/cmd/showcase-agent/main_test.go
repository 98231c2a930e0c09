package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/judge/trials/agent"
)

// The agent goes into every trial's Pod: it links no service code and no
// client of the cluster.
func TestLinksNeitherServiceNorCluster(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, no := range []string{"/gateway", "-svc", "/platform/server", "/judge/trials/runner", "/judge/trials/kube", "k8s.io/", "modernc.org/sqlite"} {
			if strings.Contains(pkg, no) {
				t.Errorf("showcase-agent links %s", pkg)
			}
		}
	}
}

// install copies the program into a folder, executable by anyone; the
// copy runs.
func TestInstall(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "showcase-agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command(bin, "install", dir).CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	fi, err := os.Stat(filepath.Join(dir, "showcase-agent"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("%v %v", fi, err)
	}
	out, err := exec.Command(filepath.Join(dir, "showcase-agent"), "-version").Output()
	if err != nil || !strings.HasPrefix(string(out), "showcase-agent ") {
		t.Errorf("the copy: %q %v", out, err)
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"run"}, &bytes.Buffer{}, &stderr); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("run without a command: %v", err)
	}
}

// Stopped by SIGTERM (its Pod deleted or evicted), the agent stops the
// tool, writes the whole folder, and exits ExitStopped, so that
// Kubernetes counts the Pod failed and its Job may run the trial again.
func TestSignalledExitsStopped(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "showcase-agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	adm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != agent.PathDefects {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"version":3,"setting":"all","active":[],"off":[],"exposure_since":"2026-01-01T00:00:00Z","requests":0,"defects":[]}`))
	}))
	defer adm.Close()
	dir := t.TempDir()
	var stdout bytes.Buffer
	cmd := exec.Command(bin, "run", "-dir", dir, "-admin", adm.URL, "-budget", "1m", "-interrupt-grace", "5s", "-term-grace", "1s", "--",
		"sh", "-c", `echo ready > report.txt; trap 'exit 3' INT; while :; do sleep 0.05; done`)
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "out", "report.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool did not start")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != agent.ExitStopped {
		t.Fatalf("exit: %v, want status %d", err, agent.ExitStopped)
	}
	back := t.TempDir()
	if err := agent.ReadFolder(&stdout, back); err != nil {
		t.Fatalf("the folder: %v", err)
	}
	if raw, err := os.ReadFile(filepath.Join(back, agent.ResultFile)); err != nil || !strings.Contains(string(raw), `"outcome": "interrupted"`) {
		t.Errorf("agent.json: %s %v", raw, err)
	}
}
