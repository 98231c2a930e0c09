// Command showcase-bench is the benchmark harness behind `make bench`. It
// builds the binaries, starts on loopback (a) the one-process service, (b)
// the gateway in front of the four services as separate processes and (c) a
// minimal Go server answering the same bytes (the yardstick), drives each with
// wrk in interleaved rounds, and writes a Markdown report with requests/s,
// latency percentiles, CPU time per request per process (from /proc),
// resident memory and ratios against the yardstick measured in the same run;
// then it measures the cost models of endpoints 9 and 10 and plots them (SVG).
//
// Two reference proxies in front of the yardstick run in the same rounds, so
// the gateway's figures can be read against what a proxy costs on the same
// machine at the same moment: nginx (when installed) and a plain
// httputil.ReverseProxy with default settings.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// The endpoints the benchmark drives, from the catalogue: the cheap one
// the throughput rows hammer, and the two whose cost it plots.
var (
	missingField = catalogue.EndpointOf(catalogue.CONF03).Path
	itemsPath    = catalogue.EndpointOf(catalogue.PERF01).Path
	fibPath      = catalogue.EndpointOf(catalogue.PERF02).Path
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "yardstick" {
		yardstick(os.Args[2])
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "reverseproxy" {
		plainProxy(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "goclient" {
		goClient(os.Args[2], os.Args[3], os.Args[4])
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "spin" {
		spin()
		return
	}
	out := flag.String("out", "out/bench", "report directory")
	rounds := flag.Int("rounds", 3, "interleaved rounds per target")
	dur := flag.Duration("duration", 5*time.Second, "wrk duration per round")
	conns := flag.Int("connections", 64, "wrk connections")
	flag.Parse()
	if err := run(*out, *rounds, *dur, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "showcase-bench:", err)
		os.Exit(1)
	}
}

// yardstick answers every request with missing-field's bytes, nothing else.
func yardstick(addr string) {
	body := []byte(`{"id":"123","name":"Alice"}`)
	_ = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	}))
}

// plainProxy is the naive reference: httputil.ReverseProxy with its default
// settings, as most Go gateways start.
func plainProxy(addr, target string) {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	_ = http.ListenAndServe(addr, httputil.NewSingleHostReverseProxy(u))
}

// goClient keeps conns connections requesting url with net/http's client
// for dur, then prints the requests it completed and the CPU time it spent:
// the client half of what any net/http gateway does per request.
func goClient(url, dur, conns string) {
	d, _ := time.ParseDuration(dur)
	n, _ := strconv.Atoi(conns)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	var done, failed int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range n {
		wg.Go(func() {
			var ok, bad int64
			for time.Now().Before(deadline) {
				resp, err := client.Get(url)
				if err != nil {
					bad++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok++
			}
			mu.Lock()
			done, failed = done+ok, failed+bad
			mu.Unlock()
		})
	}
	wg.Wait()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Println(done, failed, cpu.Microseconds())
}

// clientCost runs goClient against url and returns its CPU µs per request.
func clientCost(url string, dur time.Duration, conns int) (float64, error) {
	self, _ := os.Executable()
	out, err := exec.Command(self, "goclient", url, dur.String(), strconv.Itoa(conns)).Output()
	if err != nil {
		return 0, fmt.Errorf("goclient: %v", err)
	}
	var done, failed, us float64
	if _, err := fmt.Sscan(string(out), &done, &failed, &us); err != nil || done == 0 || failed > 0 {
		return 0, fmt.Errorf("goclient: %q", out)
	}
	return us / done, nil
}

// nginxConf proxies listen to upstream with keep-alive connections, the
// usual production setting, and writes nothing per request.
const nginxConf = `worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream yardstick { server %[3]s; keepalive 128; }
  server {
    listen %[2]s;
    location / { proxy_pass http://yardstick; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`

type proc struct {
	name  string
	cmd   *exec.Cmd
	api   string
	admin string
}

// cpuTicks is the user and system time of the process and of its children
// (nginx's workers).
func (p *proc) cpuTicks() int64 {
	pid := p.cmd.Process.Pid
	total := ticksOf(pid)
	if kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		for _, k := range strings.Fields(string(kids)) {
			if n, err := strconv.Atoi(k); err == nil {
				total += ticksOf(n)
			}
		}
	}
	return total
}

func ticksOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

func (p *proc) status(field string) float64 { // MB
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs a program and waits until it is ready; it returns the time
// from exec to ready.
func start(name, bin string, args []string, env []string, ready string) (*proc, time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = nil, nil // /dev/null: a pipe would cost the harness a copy per log line
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	for time.Since(t0) < 10*time.Second {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return &proc{name: name, cmd: cmd}, time.Since(t0), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return nil, 0, fmt.Errorf("%s did not become ready", name)
}

type target struct {
	name    string
	base    string
	procs   []*proc // the processes serving it; procs[0] is the front one
	ready   map[string]time.Duration
	idleRSS map[string]float64
	rounds  []roundResult
	// reference targets are other programs, measured for comparison; the
	// targets of the issue apply to ours alone.
	reference bool
}

type roundResult struct {
	rps           float64
	p50, p90, p99 time.Duration
	errors        int64
	cpuPerReq     map[string]float64 // µs by process
	rss           map[string]float64 // MB after the round
}

func run(out string, rounds int, dur time.Duration, conns int) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed (apt-get install wrk)")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	binDir, err := filepath.Abs(filepath.Join(out, "bin"))
	if err != nil {
		return err
	}
	fmt.Println("building")
	for _, c := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc"} {
		b := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(binDir, c), "./"+c+"/cmd/"+c)
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := b.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", c, err, o)
		}
	}
	self, _ := os.Executable()
	var all []*proc
	defer func() {
		for _, p := range all { // SIGTERM: nginx's master takes its workers down with it
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = p.cmd.Process.Kill()
				<-done
			}
		}
	}()
	launch := func(name, bin string, env ...string) (*proc, time.Duration, error) {
		api, admin := freeAddr(), freeAddr()
		p, took, err := start(name, bin, []string{"-addr", api, "-admin-addr", admin}, env, "http://"+admin+"/readyz")
		if err != nil {
			return nil, 0, err
		}
		p.api, p.admin = api, admin
		all = append(all, p)
		return p, took, nil
	}

	// (c) the yardstick
	yAddr := freeAddr()
	yard, yTook, err := start("yardstick", self, []string{"yardstick", yAddr}, nil, "http://"+yAddr+missingField)
	if err != nil {
		return err
	}
	all = append(all, yard)
	targets := []*target{{name: "yardstick", base: "http://" + yAddr, procs: []*proc{yard}, ready: map[string]time.Duration{"yardstick": yTook}}}

	// (a) one process
	one, took, err := launch("gateway", filepath.Join(binDir, "gateway"))
	if err != nil {
		return err
	}
	targets = append(targets, &target{name: "one-process", base: "http://" + one.api, procs: []*proc{one}, ready: map[string]time.Duration{"gateway": took}})

	// (b) the gateway in front of the four services
	split := &target{name: "split", ready: map[string]time.Duration{}}
	var env []string
	var svcs []*proc
	for _, s := range []struct{ env, svc string }{{"UPSTREAM_SECURITY", "security-svc"}, {"UPSTREAM_ERRORS", "errors-svc"}, {"UPSTREAM_CONFORMANCE", "conformance-svc"}, {"UPSTREAM_PERFORMANCE", "performance-svc"}} {
		p, took, err := launch(s.svc, filepath.Join(binDir, s.svc))
		if err != nil {
			return err
		}
		split.ready[s.svc] = took
		env = append(env, s.env+"=http://"+p.api)
		svcs = append(svcs, p)
	}
	gw, took, err := launch("gateway", filepath.Join(binDir, "gateway"), env...)
	if err != nil {
		return err
	}
	split.ready["gateway"] = took
	split.base, split.procs = "http://"+gw.api, append([]*proc{gw}, svcs...)
	targets = append(targets, split)

	// references: a plain ReverseProxy and nginx, both in front of the yardstick
	pAddr := freeAddr()
	plain, took, err := start("reverseproxy", self, []string{"reverseproxy", pAddr, "http://" + yAddr}, nil, "http://"+pAddr+missingField)
	if err != nil {
		return err
	}
	all = append(all, plain)
	refs := []*target{{name: "ReverseProxy → yardstick", base: "http://" + pAddr, procs: []*proc{plain}, ready: map[string]time.Duration{"reverseproxy": took}, reference: true}}
	if _, err := exec.LookPath("nginx"); err == nil {
		dir, err := filepath.Abs(filepath.Join(out, "nginx"))
		if err != nil {
			return err
		}
		nAddr := freeAddr()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), fmt.Appendf(nil, nginxConf, dir, nAddr, yAddr), 0o644); err != nil {
			return err
		}
		ng, took, err := start("nginx", "nginx", []string{"-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;"}, nil, "http://"+nAddr+missingField)
		if err != nil {
			return err
		}
		all = append(all, ng)
		refs = append(refs, &target{name: "nginx → yardstick", base: "http://" + nAddr, procs: []*proc{ng}, ready: map[string]time.Duration{"nginx": took}, reference: true})
	} else {
		fmt.Println("nginx is not installed (apt-get install nginx-light): its reference row is left out")
	}
	targets = append(targets, refs...)

	time.Sleep(500 * time.Millisecond)
	for _, t := range targets {
		t.idleRSS = map[string]float64{}
		for _, p := range t.procs {
			t.idleRSS[p.name] = p.status("VmRSS")
		}
	}

	for r := range rounds {
		for _, t := range targets {
			fmt.Printf("round %d/%d: %s\n", r+1, rounds, t.name)
			res, err := drive(t, dur, conns)
			if err != nil {
				return err
			}
			t.rounds = append(t.rounds, res)
		}
	}

	fmt.Println("net/http's client against the yardstick")
	clientCPU, err := clientCost("http://"+yAddr+missingField, dur, conns)
	if err != nil {
		return err
	}

	fmt.Println("endpoint 9 against limit, endpoint 10 against n")
	client := &http.Client{Timeout: 2 * time.Minute}
	perf := svcs[3]
	ep9 := curve(client, "http://"+one.api+itemsPath+"?limit=", []int{1, 100, 250, 500, 750, 1000}, 3)
	ep10 := curve(client, "http://"+one.api+fibPath+"?searchTerm=1&n=", []int{10000, 20000, 30000, 45000, 60000, 80000, 100000}, 1)
	idle1000 := timeIt(client, "http://"+one.api+itemsPath+"?limit=1000", 5)
	busy1000 := saturated(func() []time.Duration {
		return timeIt(client, "http://"+one.api+itemsPath+"?limit=1000", 5)
	})
	hwm0, cpu0 := perf.status("VmHWM"), perf.cpuTicks()
	fib := timeIt(client, "http://"+perf.api+fibPath+"?n=100000&searchTerm=1", 3)
	fibRSS := perf.status("VmHWM") - hwm0
	fibCPU := float64(perf.cpuTicks()-cpu0) / 100 / float64(len(fib)) // clock ticks are 1/100 s
	iso := isolation(client, split.base)

	return report(out, targets, clientCPU, ep9, ep10, idle1000, busy1000, fib, fibRSS, fibCPU, iso)
}

// drive runs one wrk round against t.
func drive(t *target, dur time.Duration, conns int) (roundResult, error) {
	before := map[string]int64{}
	for _, p := range t.procs {
		before[p.name] = p.cpuTicks()
	}
	out, err := exec.Command("wrk", "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(dur.Seconds())), "--latency", t.base+missingField).CombinedOutput()
	if err != nil {
		return roundResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	res := roundResult{cpuPerReq: map[string]float64{}, rss: map[string]float64{}}
	var requests float64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "Requests/sec:":
			res.rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) >= 2 && f[1] == "requests" && len(f) > 2 && f[2] == "in":
			requests, _ = strconv.ParseFloat(f[0], 64)
		case len(f) == 2 && (f[0] == "50%" || f[0] == "90%" || f[0] == "99%"):
			d, _ := time.ParseDuration(f[1])
			switch f[0] {
			case "50%":
				res.p50 = d
			case "90%":
				res.p90 = d
			case "99%":
				res.p99 = d
			}
		case len(f) >= 1 && (f[0] == "Non-2xx" || f[0] == "Socket"):
			for _, x := range f {
				if n, err := strconv.ParseInt(strings.Trim(x, ","), 10, 64); err == nil {
					res.errors += n
				}
			}
		}
	}
	tick := 1e6 / 100.0 // µs per clock tick (USER_HZ 100)
	for _, p := range t.procs {
		if requests > 0 {
			res.cpuPerReq[p.name] = float64(p.cpuTicks()-before[p.name]) * tick / requests
		}
		res.rss[p.name] = p.status("VmRSS")
	}
	return res, nil
}

func timeIt(client *http.Client, url string, n int) []time.Duration {
	var out []time.Duration
	for range n {
		t0 := time.Now()
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		out = append(out, time.Since(t0))
	}
	return out
}

type point struct {
	x    int
	secs float64
}

func curve(client *http.Client, prefix string, xs []int, n int) []point {
	var pts []point
	for _, x := range xs {
		ds := timeIt(client, prefix+strconv.Itoa(x), n)
		pts = append(pts, point{x, median(ds).Seconds()})
	}
	return pts
}

// spin keeps one core busy until killed.
func spin() {
	x := 0
	for {
		for i := range 1 << 20 {
			x += i
		}
		if x == 42 {
			fmt.Println(x)
		}
	}
}

// saturated runs f while a separate process per core spins, so the machine
// is saturated without competing with the measuring client in its own
// runtime.
func saturated(f func() []time.Duration) []time.Duration {
	self, _ := os.Executable()
	var spinners []*exec.Cmd
	for range runtime.NumCPU() {
		c := exec.Command(self, "spin")
		if c.Start() == nil {
			spinners = append(spinners, c)
		}
	}
	defer func() {
		for _, c := range spinners {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	return f()
}

// isolation: missing-field through the gateway while 8 clients keep
// requesting endpoint 10 at n=100000.
func isolation(client *http.Client, base string) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+fibPath+"?n=100000&searchTerm=1", nil)
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 503 {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}
		})
	}
	time.Sleep(time.Second)
	var lat []time.Duration
	for range 2000 {
		lat = append(lat, timeIt(client, base+missingField, 1)...)
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	return lat
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
