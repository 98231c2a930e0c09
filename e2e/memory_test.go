package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/defectshowcase/showcase/suite"
)

// shippedMemoryLimit is the memory limit compose and Kubernetes give every
// container.
const shippedMemoryLimit = 128

// BenchmarkBodyMemory is the peak resident memory of errors-svc (the real
// binary, a fresh process per endpoint) while 16 clients at once each send
// 1 MiB bodies, four rounds, to one POST endpoint; twice, so that twice as
// many clients as the in-flight budget admits are sending. It reports the
// idle and the peak resident memory in MB, which must stay well inside the
// shipped 128 MiB. `make bench` runs it.
func BenchmarkBodyMemory(b *testing.B) {
	bin := buildBinary(b, modulePath+"errors-svc/cmd/errors-svc")
	const size = 1 << 20
	bodies := map[string]string{
		suite.PathInputTypeHandling: `{"number":"` + strings.Repeat("7", size-len(`{"number":""}`)) + `"}`,
		suite.PathColumnSize:        `{"text":"` + strings.Repeat("x", size-len(`{"text":""}`)) + `"}`,
		suite.PathUnicodeEncoding:   `{"text":"` + strings.Repeat("x", size-len(`{"text":""}`)) + `"}`,
	}
	for _, clients := range []int{16, 32} {
		for path, body := range bodies {
			b.Run(fmt.Sprintf("%d clients %s", clients, path), func(b *testing.B) {
				for b.Loop() {
					p := startProcess(b, bin)
					idle := vmKB(b, p.cmd.Process.Pid, "VmRSS")
					var wg sync.WaitGroup
					var mu sync.Mutex
					statuses := map[int]int{}
					for range clients {
						wg.Go(func() {
							for range 4 {
								res, err := http.Post(p.base+path, "application/json", bytes.NewReader([]byte(body)))
								if err != nil {
									b.Error(err)
									return
								}
								_, _ = io.Copy(io.Discard, res.Body)
								res.Body.Close()
								mu.Lock()
								statuses[res.StatusCode]++
								mu.Unlock()
							}
						})
					}
					wg.Wait()
					peak := vmKB(b, p.cmd.Process.Pid, "VmHWM")
					b.ReportMetric(float64(idle)/1024, "idle-MB")
					b.ReportMetric(float64(peak)/1024, "peak-MB")
					b.Logf("%s, %d clients: statuses %v, idle %.1f MB, peak %.1f MB (the shipped limit %d MiB)", path, clients, statuses, float64(idle)/1024, float64(peak)/1024, shippedMemoryLimit)
					if peak/1024 > shippedMemoryLimit*3/4 {
						b.Errorf("peak %.1f MB: not well inside the shipped %d MiB", float64(peak)/1024, shippedMemoryLimit)
					}
					_ = p.cmd.Process.Kill()
					<-p.exited
				}
			})
		}
	}
}

// vmKB reads a "Vm…" line of /proc/<pid>/status, in kB.
func vmKB(tb testing.TB, pid int, field string) int {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
