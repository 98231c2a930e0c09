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

// memoryBodies are 1 MiB bodies for each POST endpoint of errors-svc.
func memoryBodies() map[string]string {
	const size = 1 << 20
	return map[string]string{
		suite.PathInputTypeHandling: `{"number":"` + strings.Repeat("7", size-len(`{"number":""}`)) + `"}`,
		suite.PathColumnSize:        `{"text":"` + strings.Repeat("x", size-len(`{"text":""}`)) + `"}`,
		suite.PathUnicodeEncoding:   `{"text":"` + strings.Repeat("x", size-len(`{"text":""}`)) + `"}`,
	}
}

// bodyMemory starts errors-svc (bin, a fresh process), has clients clients
// at once each send body to path four times, and returns its idle and peak
// resident memory in kB; it fails tb if the peak is not well inside the
// shipped limit.
func bodyMemory(tb testing.TB, bin, path, body string, clients int) (idle, peak int) {
	p := startProcess(tb, bin)
	defer func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}()
	idle = vmKB(tb, p.cmd.Process.Pid, "VmRSS")
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range clients {
		wg.Go(func() {
			for range 4 {
				res, err := http.Post(p.base+path, "application/json", bytes.NewReader([]byte(body)))
				if err != nil {
					tb.Error(err)
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
	peak = vmKB(tb, p.cmd.Process.Pid, "VmHWM")
	tb.Logf("%s, %d clients: statuses %v, idle %.1f MB, peak %.1f MB (the shipped limit %d MiB)", path, clients, statuses, float64(idle)/1024, float64(peak)/1024, shippedMemoryLimit)
	if peak/1024 > shippedMemoryLimit*3/4 {
		tb.Errorf("%s, %d clients: peak %.1f MB, not well inside the shipped %d MiB", path, clients, float64(peak)/1024, shippedMemoryLimit)
	}
	return idle, peak
}

// Thirty-two clients at once sending 1 MiB bodies to each POST endpoint
// keep errors-svc well inside the memory limit it ships with: the in-flight
// budget holds the bodies, and the garbage collector (tuned for small live
// heaps, platform/server/gctune.go) follows a heap that grows fast.
func TestBodyMemory(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t, modulePath+"errors-svc/cmd/errors-svc")
	for path, body := range memoryBodies() {
		bodyMemory(t, bin, path, body, 32)
	}
}

// BenchmarkBodyMemory is the peak resident memory of errors-svc (the real
// binary, a fresh process per endpoint) while 16 clients at once each send
// 1 MiB bodies, four rounds, to one POST endpoint; twice, so that twice as
// many clients as the in-flight budget admits are sending. It reports the
// idle and the peak resident memory in MB, which must stay well inside the
// shipped 128 MiB. `make bench` runs it.
func BenchmarkBodyMemory(b *testing.B) {
	bin := buildBinary(b, modulePath+"errors-svc/cmd/errors-svc")
	for _, clients := range []int{16, 32} {
		for path, body := range memoryBodies() {
			b.Run(fmt.Sprintf("%d clients %s", clients, path), func(b *testing.B) {
				for b.Loop() {
					idle, peak := bodyMemory(b, bin, path, body, clients)
					b.ReportMetric(float64(idle)/1024, "idle-MB")
					b.ReportMetric(float64(peak)/1024, "peak-MB")
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
