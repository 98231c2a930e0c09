package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
