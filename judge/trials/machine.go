package trials

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ThisMachine is the machine this process runs on, as Linux tells it
// (/proc): its CPU model, cores, memory and kernel. Inside a container it
// is the node's (a container limits what it may use, not what /proc shows).
func ThisMachine() *Machine {
	m := &Machine{Cores: runtime.NumCPU()}
	m.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					m.Memory = kb * 1024
				}
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
