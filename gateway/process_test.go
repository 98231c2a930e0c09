package gateway_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/suite"
)

// process is the gateway binary running as a real process.
type process struct {
	cmd    *exec.Cmd
	base   string
	admin  string
	exited chan error
	logs   *strings.Builder
}

func buildGateway(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gateway")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/gateway").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProcess runs bin on a free loopback port and waits for its
// "listening" log line.
func startProcess(t *testing.T, bin string, env ...string) *process {
	t.Helper()
	return startProcessAt(t, bin, "127.0.0.1:0", env...)
}

// startProcessAt runs bin with its API on addr (a restarted service keeps
// its address).
func startProcessAt(t *testing.T, bin, addr string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, "-addr", addr, "-admin-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1), logs: &strings.Builder{}}
	addrs := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.logs.WriteString(line + "\n")
			var entry struct{ Msg, Addr, Admin string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" {
				addrs <- [2]string{entry.Addr, entry.Admin}
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case a := <-addrs:
		p.base, p.admin = "http://"+a[0], "http://"+a[1]
	case err := <-p.exited:
		t.Fatalf("the gateway exited at start (%v):\n%s", err, p.logs)
	case <-time.After(10 * time.Second):
		t.Fatalf("the gateway did not start:\n%s", p.logs)
	}
	return p
}

// The process survives every case of the suite, bad inputs and planted
// crashes included, keeps answering, and then stops gracefully on SIGTERM:
// it finishes an in-flight one-second request and exits 0.
func TestProcessSurvivesAndStopsGracefully(t *testing.T) {
	p := startProcess(t, buildGateway(t))
	client := &http.Client{Timeout: time.Minute}
	t.Run("suite", func(t *testing.T) { suite.Run(t, p.base, client) })

	select {
	case err := <-p.exited:
		t.Fatalf("the process died: %v\n%s", err, p.logs)
	default:
	}
	resp, err := client.Get(p.base + suite.PathMissingField)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the suite: %v %v", resp, err)
	}
	resp.Body.Close()

	inFlight := make(chan int, 1)
	go func() {
		resp, err := client.Get(p.base + suite.PathUnboundedResultSet + "?limit=1000")
		if err != nil {
			inFlight <- 0
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if suite.Items(1000)(b) != nil {
			inFlight <- -1
			return
		}
		inFlight <- resp.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // the request is being served
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// While it drains: not ready, and no new connection is accepted.
	time.Sleep(100 * time.Millisecond)
	if resp, err := client.Get(p.admin + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %v %v, want 503", resp, err)
	} else {
		resp.Body.Close()
	}
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(p.base, "http://"), time.Second); err == nil {
		conn.Close()
		t.Error("the API port still accepts connections while draining")
	}
	if status := <-inFlight; status != http.StatusOK {
		t.Fatalf("the in-flight request ended with %d, want a complete 200", status)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, p.logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the process did not exit within 10 s of SIGTERM")
	}
	if strings.Contains(p.logs.String(), "goroutine ") {
		t.Fatalf("a stack trace reached the log:\n%s", p.logs)
	}
}

// DEFECTS=none as a real process: the admin port reports the setting, the
// metrics carry it, the log says it, and the API keeps its contract.
func TestProcessReportsDefects(t *testing.T) {
	t.Parallel()
	bin := buildGateway(t)
	p := startProcess(t, bin, "DEFECTS=none")
	var report struct {
		Setting string   `json:"setting"`
		Active  []string `json:"active"`
		Off     []string `json:"off"`
	}
	resp, err := http.Get(p.admin + gateway.PathDefects)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&report)
	resp.Body.Close()
	if err != nil || report.Setting != "none" || len(report.Active) != 0 || len(report.Off) != 10 {
		t.Fatalf("/defects: %+v (%v)", report, err)
	}
	resp, err = http.Get(p.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`showcase_defect_active{defect="SEC-01",service="gateway"} 0`,
		`showcase_defect_active{defect="SEC-01",service="security-svc"} 0`,
		`showcase_defect_active{defect="PERF-02",service="performance-svc"} 0`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(p.logs.String(), `"msg":"defects","service":"gateway","active":"","off":"SEC-01,ERR-01`) {
		t.Errorf("no defects log line:\n%s", p.logs)
	}
	resp, err = http.Get(p.base + suite.PathUnauthenticatedAccess)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("endpoint 1 without a key: %d, want 401", resp.StatusCode)
	}
}

// A setting that names no defect stops the program at start, naming it;
// the flag wins over the environment.
func TestProcessRejectsUnknownDefects(t *testing.T) {
	t.Parallel()
	bin := buildGateway(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0", "-defects", "SEC-01,CONF-9")
	cmd.Env = append(os.Environ(), "DEFECTS=none")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `DEFECTS="SEC-01,CONF-9"`) || !strings.Contains(string(out), `"conf-9"`) {
		t.Fatalf("exit %v, output:\n%s", err, out)
	}
}
