package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuGroup is a cgroup that holds the processes put in it to a CPU quota:
// cpu.max on cgroup v2, cpu.cfs_quota_us on v1. Each server measured
// under a quota gets one of its own, so that each runs at its own limit
// while the load generator has the rest of the machine.
type cpuGroup struct {
	dir   string
	procs string // the file a process is moved in by writing its PID
	v2    bool
}

// cgroupRoot is where cgroups are mounted; a variable for the test.
var cgroupRoot = "/sys/fs/cgroup"

// period is the quota's period: the kernel's default, 100 ms.
const period = 100 * time.Millisecond

// The group's weight against the machine's other work, ten times the
// default (cpu.weight 100 on v2, cpu.shares 1024 on v1): a server held to
// half a core gets that half core when it asks for it, even while other
// work keeps both cores busy. The quota, not the weight, is what limits it.
const (
	weightV2 = "1000"
	sharesV1 = "10240"
)

// newCPUGroup makes the cgroup showcase-bench-<pid>-<name> holding what is
// put in it to cores cores (0.5: half of one), at a weight that gets it
// those cores on a busy machine. It needs root, or a delegated cgroup; the
// error says so.
func newCPUGroup(name string, cores float64) (*cpuGroup, error) {
	if cores <= 0 {
		return nil, fmt.Errorf("cpu quota %v: want more than 0 cores", cores)
	}
	leaf := fmt.Sprintf("showcase-bench-%d-%s", os.Getpid(), name)
	quota := int64(cores * float64(period.Microseconds()))
	var g cpuGroup
	var write map[string]string
	if ctl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		if !strings.Contains(" "+strings.TrimSpace(string(ctl))+" ", " cpu ") {
			return nil, errors.New("cgroup v2 without the cpu controller")
		}
		// The cpu controller must be on for the root's children.
		if err := os.WriteFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"), []byte("+cpu"), 0); err != nil {
			return nil, fmt.Errorf("enable the cpu controller: %w", err)
		}
		g = cpuGroup{dir: filepath.Join(cgroupRoot, leaf), v2: true}
		write = map[string]string{"cpu.max": fmt.Sprintf("%d %d", quota, period.Microseconds()), "cpu.weight": weightV2}
	} else {
		base := ""
		for _, d := range []string{"cpu", "cpu,cpuacct"} {
			if _, err := os.Stat(filepath.Join(cgroupRoot, d, "cpu.cfs_quota_us")); err == nil {
				base = filepath.Join(cgroupRoot, d)
				break
			}
		}
		if base == "" {
			return nil, fmt.Errorf("no cpu cgroup under %s (neither v2 nor v1's cpu controller)", cgroupRoot)
		}
		g = cpuGroup{dir: filepath.Join(base, leaf)}
		write = map[string]string{"cpu.cfs_period_us": strconv.FormatInt(period.Microseconds(), 10), "cpu.cfs_quota_us": strconv.FormatInt(quota, 10), "cpu.shares": sharesV1}
	}
	g.procs = filepath.Join(g.dir, "cgroup.procs")
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make a cgroup (root needed): %w", err)
	}
	for _, f := range []string{"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max", "cpu.shares", "cpu.weight"} {
		if v, ok := write[f]; ok {
			if err := os.WriteFile(filepath.Join(g.dir, f), []byte(v), 0); err != nil {
				_ = os.Remove(g.dir)
				return nil, fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return &g, nil
}

// wrap returns the command line that runs bin with args inside g: a shell
// that moves itself in, then becomes bin, so that the program starts under
// the quota (Go sizes GOMAXPROCS from it at start).
func (g *cpuGroup) wrap(bin string, args []string) (string, []string) {
	return "/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, g.procs, bin}, args...)
}

// throttled is how many of the group's periods ran into the quota: a
// server held at its limit is throttled in most of them.
func (g *cpuGroup) throttled() (periods, throttled int64) {
	b, _ := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "nr_periods":
				periods = n
			case "nr_throttled":
				throttled = n
			}
		}
	}
	return periods, throttled
}

// remove deletes the group once its processes have ended, and checks that
// it is gone: the machine is left as it was found.
func (g *cpuGroup) remove() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.Remove(g.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", g.dir, err)
		}
		time.Sleep(20 * time.Millisecond) // its last process is still exiting
	}
	if _, err := os.Stat(g.dir); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroup %s is still there", g.dir)
	}
	return nil
}
