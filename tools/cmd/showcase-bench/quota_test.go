package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The floor table's cgroup holds a real server to half a core: the
// gateway started in it runs on one thread (GOMAXPROCS 1, automaxprocs'
// rounding down of the quota, where Go would take 2), the kernel throttles
// it under load, and once it has ended the cgroup is removed: nothing of
// the test is left on the machine.
func TestQuotaHoldsAServer(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("not root: the floor table's cgroups need root, and CI runs as root")
		}
		t.Skip("not root: the floor table's cgroups need root")
	}
	g, err := newCPUGroup("test", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	defer func() {
		if !removed {
			_ = g.remove()
		}
	}()
	bin := filepath.Join(t.TempDir(), "gateway")
	build := exec.Command("go", "build", "-o", bin, "./gateway/cmd/gateway")
	build.Dir = "../../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the gateway: %v\n%s", err, out)
	}
	api, admin := freeAddr(), freeAddr()
	wbin, wargs := g.wrap(bin, []string{"-addr", api, "-admin-addr", admin})
	p, _, err := start("gateway", wbin, wargs, nil, "http://"+admin+"/readyz")
	if err != nil {
		t.Fatal(err)
	}
	procs := []*proc{p}
	defer func() { stop(procs) }()
	res, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), "\ngo_sched_gomaxprocs_threads 1\n") {
		t.Errorf("under half a core the gateway does not run on one thread:\n%s", grepLines(string(metrics), "gomaxprocs"))
	}
	// Load it from eight goroutines until the kernel throttles it (at
	// once on an idle machine; on a busy one the clients may need longer
	// to ask for more than half a core), 20 s at most.
	deadline := time.Now().Add(20 * time.Second)
	var periods, throttled int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if r, err := http.Get("http://" + api + missingField); err == nil {
					_, _ = io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
			}
		})
	}
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if periods, throttled = g.throttled(); throttled > 0 {
			break
		}
	}
	close(done)
	wg.Wait()
	if throttled == 0 {
		t.Errorf("under load: %d periods, none throttled: the quota does not hold it", periods)
	}
	stop(procs)
	procs = nil
	if err := g.remove(); err != nil {
		t.Fatal(err)
	}
	removed = true
	if _, err := os.Stat(g.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cgroup %s is still there", g.dir)
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
