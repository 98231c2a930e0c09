package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The floor table's cgroup holds a real server to half a core: the
// gateway started in it is in it and runs on one thread (GOMAXPROCS 1,
// automaxprocs' rounding down of the quota, where Go would take 2), the
// kernel throttles the group under load and keeps it to half a core, and
// once it has ended the cgroup is removed: nothing of the test is left on
// the machine.
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
	if b, _ := os.ReadFile(g.procs); !slices.Contains(strings.Fields(string(b)), strconv.Itoa(p.cmd.Process.Pid)) {
		t.Errorf("the gateway (pid %d) is not in the group: its cgroup.procs holds %q", p.cmd.Process.Pid, b)
	}
	// The group must throttle what runs in it once that asks for more
	// than half a core. The gateway under load asks for it only while its
	// clients, outside the group, get the CPU to send enough, which on a
	// busy machine they may not; so a spinner runs in the group beside it,
	// and the group's weight gets the two their half core however busy the
	// machine is.
	sbin, sargs := g.wrap("/bin/sh", []string{"-c", "while :; do :; done"})
	spin := exec.Command(sbin, sargs...)
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	endSpin := sync.OnceFunc(func() {
		_ = spin.Process.Kill()
		_ = spin.Wait()
	})
	defer endSpin()
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
	var periods, throttled int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if periods, throttled = g.throttled(); throttled > 0 {
			break
		}
	}
	if throttled == 0 {
		t.Errorf("under load: %d periods, none throttled: the quota does not hold it", periods)
	}
	// And what the two use together, over 3 s, is half a core: 150 clock
	// ticks, with room for one period at either end and the ticks'
	// rounding. Without the quota the spinner alone would take close to
	// 300.
	used := func() int64 { return p.cpuTicks() + ticksOf(spin.Process.Pid) }
	u0, t0 := used(), time.Now()
	time.Sleep(3 * time.Second)
	u1, wall := used(), time.Since(t0)
	close(done)
	wg.Wait()
	endSpin()
	limit := int64(0.5*wall.Seconds()*ticksPerSecond) + 15
	if u1-u0 > limit {
		t.Errorf("the group used %d ticks in %v, over half a core (at most %d)", u1-u0, wall.Round(time.Millisecond), limit)
	} else {
		t.Logf("the group used %d ticks in %v (at most %d)", u1-u0, wall.Round(time.Millisecond), limit)
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
