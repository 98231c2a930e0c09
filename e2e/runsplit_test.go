package e2e_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freeBase is a port from which ten ports are free: five API ports and,
// from base+1010, five admin ports.
func freeBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(30000)
		free := true
		for _, p := range []int{base, base + 1, base + 2, base + 3, base + 4, base + 1010, base + 1011, base + 1012, base + 1013, base + 1014} {
			l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no free range of ports")
	return 0
}

// make run-split runs on any ports: from a base port given as PORT, the
// five processes answer there; where one of its ports is taken it refuses
// at once, naming the port.
func TestRunSplitOnAnyPorts(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	if out, err := exec.Command("make", "-C", "..", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	script, _ := filepath.Abs("../scripts/run-split.sh")
	base := freeBase(t)

	held, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+2))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, bin)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("PORT=%d", base))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	held.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), fmt.Sprintf("port %d is taken", base+2)) {
		t.Fatalf("with port %d taken: %v, %s", base+2, err, stderr.String())
	}

	cmd = exec.Command(script, bin)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("PORT=%d", base))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	running := &lockedBuffer{}
	cmd.Stderr = running
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	waitStatus(t, client, fmt.Sprintf("http://127.0.0.1:%d/readyz", base+1010), 200, 30*time.Second)
	for p, path := range map[int]string{base: "/response-conformance/missing-field", base + 3: "/response-conformance/missing-field"} {
		if status, body := fetch(t, client, fmt.Sprintf("http://127.0.0.1:%d%s", p, path)); status != 200 || !strings.Contains(string(body), `"Alice"`) {
			t.Errorf("port %d: %d %s", p, status, body)
		}
	}
	if !strings.Contains(running.String(), fmt.Sprintf("API http://localhost:%d", base)) {
		t.Errorf("the script does not say where it runs:\n%s", running.String())
	}
}

// lockedBuffer collects a running process's output, read while it writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
