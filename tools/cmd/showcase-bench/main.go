// Command showcase-bench is the benchmark harness behind `make bench`. It
// builds the binaries, starts on loopback (a) the one-process service, (b)
// the gateway in front of the four services as separate processes and (c) a
// minimal Go server answering the same bytes (the yardstick), drives each with
// wrk in interleaved rounds, and writes a Markdown report with requests/s,
// latency percentiles, CPU time per request per process (from /proc),
// resident memory and ratios against the yardstick measured in the same run;
// then it measures the cost models of endpoints 9 and 10 and plots them (SVG).
//
// In the same rounds, proxies stand in front of the yardstick: our gateway
// (every category's upstream the yardstick), a plain httputil.ReverseProxy
// with default settings, and nginx, HAProxy and Caddy when installed, each
// configured as in production (proxies/). For each it measures the proxy's
// CPU per request and the yardstick's behind it, flat out and then with
// every row driven by net/http's client at one rate, against the floor of
// any net/http proxy (the yardstick's server alone plus net/http's client
// alone), and takes a CPU profile of our gateway in a round of its own.
// -proxies runs that part alone.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/tools/load"

	"github.com/defectshowcase/showcase/platform/version"
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
	if len(os.Args) == 6 && os.Args[1] == "goclient" {
		goClient(os.Args[2], os.Args[3], os.Args[4], os.Args[5])
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
	proxies := flag.Bool("proxies", false, "only the proxies in front of the yardstick, for their table")
	quota := flag.Float64("quota", 0.5, "the CPU quota, in cores, of each server in the floor table (a cgroup's; root needed)")
	quotaOnly := flag.Bool("quota-only", false, "only the floor table: the floor, the one-process gateway, our gateway and Caddy as proxies, each under -quota")
	quotaRounds := flag.Int("quota-rounds", 10, "rounds of the floor table: short ones, the four servers in turn in each, so that each pair is measured under the same machine")
	quotaDur := flag.Duration("quota-duration", 2*time.Second, "wrk duration per server per round of the floor table")
	partsOf := flag.String("parts", "", "only print where the CPU of a CPU profile (a file) went, by part, as make bench splits its profiles")
	covOnly := flag.Bool("coverage-cost", false, "only what API coverage counting costs a request: the gateway's BenchmarkRequestParallel built with and without it, in turn")
	pin := flag.Bool("pin", false, "with -quota-only: pin the servers to cores 0..quota-1 and wrk and the upstream to the rest (scripts/bench-cores.sh)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("showcase-bench", version.String())
		return
	}
	var err error
	switch {
	case *partsOf != "":
		var parts []part
		if parts, err = breakdown(*partsOf); err == nil {
			writeParts(func(f string, a ...any) { fmt.Printf(f, a...) }, parts, 0)
		}
	case *covOnly:
		err = runCovCostOnly(*out)
	case *quotaOnly:
		err = runQuotaOnly(*out, *quota, *pin, *quotaRounds, *quotaDur, *conns)
	default:
		err = run(*out, *rounds, *dur, *conns, *proxies, quotaRun{cores: *quota, rounds: *quotaRounds, dur: *quotaDur})
	}
	if err != nil {
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

// goClient keeps conns connections requesting url with net/http's client
// for dur, as fast as they are answered or, with rate > 0, at rate requests
// a second (a token every 1/rate s, taken by the first free connection;
// tokens a busy client cannot take in time are dropped and the rate it
// reached is lower). It prints the requests it completed, those that
// failed, and the CPU time it spent: the client half of what any net/http
// proxy does per request.
func goClient(url, dur, conns, rate string) {
	d, _ := time.ParseDuration(dur)
	n, _ := strconv.Atoi(conns)
	r, _ := strconv.ParseFloat(rate, 64)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	var done, failed atomic.Int64
	deadline := time.Now().Add(d)
	var tokens chan struct{}
	if r > 0 {
		tokens = make(chan struct{}, n)
		go func() {
			start, sent := time.Now(), 0
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for now := range tick.C {
				if now.After(deadline) {
					close(tokens)
					return
				}
				for due := int(now.Sub(start).Seconds() * r); sent < due; sent++ {
					select {
					case tokens <- struct{}{}:
					default: // every connection busy: dropped
					}
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if tokens != nil {
					if _, ok := <-tokens; !ok {
						return
					}
				}
				resp, err := client.Get(url)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
			}
		})
	}
	wg.Wait()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Println(done.Load(), failed.Load(), cpu.Microseconds())
}

// runClient runs goClient against url (rate 0: flat out) and returns the
// requests it completed and its CPU µs per request.
func runClient(url string, dur time.Duration, conns int, rate float64) (float64, float64, error) {
	self, _ := os.Executable()
	out, err := exec.Command(self, "goclient", url, dur.String(), strconv.Itoa(conns), strconv.FormatFloat(rate, 'f', 0, 64)).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("goclient: %v", err)
	}
	var done, failed, us float64
	if _, err := fmt.Sscan(string(out), &done, &failed, &us); err != nil || done == 0 || failed > 0 {
		return 0, 0, fmt.Errorf("goclient: %q", out)
	}
	return done, us / done, nil
}

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

// ticksPerSecond is how many clock ticks make a second in the CPU times
// /proc gives (USER_HZ, 100 on Linux).
const ticksPerSecond = 100

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
	rounds  []roundResult // flat out
	paced   []roundResult // at the rate shared by all
	// ours: our binaries, which the targets apply to; the others are
	// measured for comparison.
	ours bool
	// proxy: a row in front of the yardstick (procs[1]).
	proxy bool
	// gateway is our gateway in front of the yardstick, profiled after the
	// rounds.
	gateway *proc
}

type roundResult struct {
	rps           float64
	p50, p90, p99 time.Duration
	errors        int64
	cpuPerReq     map[string]float64 // µs by process
	rss           map[string]float64 // MB after the round
}

// build checks for wrk and builds the five programs into out/bin, which
// it returns.
func build(out string) (string, error) {
	if _, err := exec.LookPath("wrk"); err != nil {
		return "", errors.New("wrk is not installed (apt-get install wrk)")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	binDir, err := filepath.Abs(filepath.Join(out, "bin"))
	if err != nil {
		return "", err
	}
	fmt.Println("building")
	for _, c := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc"} {
		b := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(binDir, c), "./"+c+"/cmd/"+c)
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := b.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %v\n%s", c, err, o)
		}
	}
	return binDir, nil
}

// runQuotaOnly builds, measures the floor table under a quota of cores
// and writes it to out/floor.md and stdout.
func runQuotaOnly(out string, cores float64, pin bool, rounds int, dur time.Duration, conns int) error {
	binDir, err := build(out)
	if err != nil {
		return err
	}
	qr, err := runQuota(out, binDir, cores, pin, rounds, dur, conns)
	if err != nil {
		return err
	}
	return writeFloor(out, qr)
}

// runCovCostOnly measures what API coverage costs and writes it to
// out/coverage-cost.md and stdout.
func runCovCostOnly(out string) error {
	dir, err := filepath.Abs(filepath.Join(out, "bin"))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	c, err := runCovCost(dir)
	if err != nil {
		return err
	}
	return writeCovCost(out, c, 0)
}

// writeFloor writes the floor table to out/floor.md and stdout, and its
// one row by server cores to out/floor-row.md.
func writeFloor(out string, qr *quotaRun) error {
	t := qr.table()
	fmt.Print("\n", t, "\n", rowHeader, qr.row())
	if err := os.WriteFile(filepath.Join(out, "floor-row.md"), []byte(qr.row()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "floor.md"), []byte("# The floor table\n\n"+t+"\n"+rowHeader+qr.row()), 0o644)
}

func run(out string, rounds int, dur time.Duration, conns int, proxiesOnly bool, quota quotaRun) error {
	binDir, err := build(out)
	if err != nil {
		return err
	}
	self, _ := os.Executable()
	var all []*proc
	defer func() { stop(all) }()
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

	var one *proc
	var split *target
	var svcs []*proc
	if !proxiesOnly {
		// (a) one process
		var took time.Duration
		one, took, err = launch("gateway", filepath.Join(binDir, "gateway"))
		if err != nil {
			return err
		}
		targets = append(targets, &target{name: "one-process", base: "http://" + one.api, procs: []*proc{one}, ready: map[string]time.Duration{"gateway": took}, ours: true})

		// (b) the gateway in front of the four services
		split = &target{name: "split", ready: map[string]time.Duration{}, ours: true}
		var env []string
		for _, c := range catalogue.Categories {
			svc := c.Name + "-svc"
			p, took, err := launch(svc, filepath.Join(binDir, svc))
			if err != nil {
				return err
			}
			split.ready[svc] = took
			env = append(env, c.Upstream+"=http://"+p.api)
			svcs = append(svcs, p)
		}
		gw, took, err := launch("gateway", filepath.Join(binDir, "gateway"), env...)
		if err != nil {
			return err
		}
		split.ready["gateway"] = took
		split.base, split.procs = "http://"+gw.api, append([]*proc{gw}, svcs...)
		targets = append(targets, split)
	}

	// In front of the same server, the yardstick: our gateway with every
	// category's upstream pointing at it, a plain ReverseProxy, and the
	// proxies people run. Each row measures the proxy and the yardstick
	// behind it; rounds are sequential, so the yardstick's CPU in a row's
	// round is what that proxy's requests cost it.
	var up []string
	for _, c := range catalogue.Categories {
		up = append(up, c.Upstream+"=http://"+yAddr)
	}
	gwY, took, err := launch("gateway", filepath.Join(binDir, "gateway"), append(up, "PPROF=true")...)
	if err != nil {
		return err
	}
	front := []*target{{name: "our gateway", base: "http://" + gwY.api, procs: []*proc{gwY}, ready: map[string]time.Duration{"gateway": took}, ours: true, gateway: gwY}}
	// The same with one P: on a machine whose cores it shares with its
	// clients and its upstream, a Go proxy spends less per request on one
	// thread than on as many as there are cores.
	gw1, took, err := launch("gateway", filepath.Join(binDir, "gateway"), append(up, "GOMAXPROCS=1")...)
	if err != nil {
		return err
	}
	front = append(front, &target{name: "our gateway, GOMAXPROCS=1", base: "http://" + gw1.api, procs: []*proc{gw1}, ready: map[string]time.Duration{"gateway": took}, ours: true})
	pAddr := freeAddr()
	plain, took, err := start("reverseproxy", self, []string{"reverseproxy", pAddr, "http://" + yAddr}, nil, "http://"+pAddr+missingField)
	if err != nil {
		return err
	}
	all = append(all, plain)
	front = append(front, &target{name: "plain httputil.ReverseProxy", base: "http://" + pAddr, procs: []*proc{plain}, ready: map[string]time.Duration{"reverseproxy": took}})
	for _, ref := range references {
		t, err := startReference(ref, out, yAddr)
		if err != nil {
			return err
		}
		if t != nil {
			all = append(all, t.procs[0])
			front = append(front, t)
		}
	}
	for _, t := range front {
		t.proxy = true
		t.procs = append(t.procs, yard)
	}
	targets = append(targets, front...)

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

	fmt.Println("profiling our gateway in front of the yardstick (a round of its own, not counted)")
	if err := profileGateway(front[0], dur, conns, filepath.Join(binDir, "gateway"), out); err != nil {
		return err
	}

	fmt.Println("net/http's client against the yardstick")
	_, clientCPU, err := runClient("http://"+yAddr+missingField, dur, conns, 0)
	if err != nil {
		return err
	}

	// At one rate for all: every proxy and the yardstick alone driven by
	// net/http's client at the same requests/s, so that CPU per request is
	// compared at the same load (a Go server's CPU per request falls as its
	// load rises: fewer wake-ups per request). The rate is half the
	// flat-out rate of the slowest proxy (the plain ReverseProxy apart),
	// so every one keeps up; the client's own CPU driving the yardstick
	// alone is net/http's client half of the floor at that rate.
	rate := math.Inf(1)
	for _, t := range front {
		if t.procs[0].name != "reverseproxy" {
			rate = math.Min(rate, medianOf(t.rounds, func(r roundResult) float64 { return r.rps })/2)
		}
	}
	rate = math.Round(rate/100) * 100
	paced := append([]*target{targets[0]}, front...)
	for r := range rounds {
		for _, t := range paced {
			fmt.Printf("at %.0f requests/s, round %d/%d: %s\n", rate, r+1, rounds, t.name)
			res, err := drivePaced(t, dur, conns, rate)
			if err != nil {
				return err
			}
			t.paced = append(t.paced, res)
		}
	}

	if proxiesOnly {
		return report(out, targets, clientCPU, rate, nil)
	}

	fmt.Println("endpoint 9 against limit, endpoint 10 against n")
	client := &http.Client{Timeout: 2 * time.Minute}
	perf := svcs[slices.IndexFunc(catalogue.Categories, func(c catalogue.Category) bool { return c.Name == "performance" })]
	ep9 := curve(client, "http://"+one.api+itemsPath+"?limit=", []int{1, 100, 250, 500, 750, 1000}, 3)
	ep10 := curve(client, "http://"+one.api+fibPath+"?searchTerm=1&n=", []int{10000, 20000, 30000, 45000, 60000, 80000, 100000}, 1)
	idle1000 := timeIt(client, "http://"+one.api+itemsPath+"?limit=1000", 5)
	busy1000 := saturated(func() []time.Duration {
		return timeIt(client, "http://"+one.api+itemsPath+"?limit=1000", 5)
	})
	hwm0, cpu0 := perf.status("VmHWM"), perf.cpuTicks()
	fib := timeIt(client, "http://"+perf.api+fibPath+"?n=100000&searchTerm=1", 3)
	fibRSS := perf.status("VmHWM") - hwm0
	fibCPU := float64(perf.cpuTicks()-cpu0) / ticksPerSecond / float64(len(fib))
	iso := isolation(client, split.base)

	fmt.Println("the load tool's ceiling: showcase-load against missing-field of the one-process service")
	ceil, err := loadCeiling("http://"+one.api, 3*time.Second)
	if err != nil {
		return err
	}

	if err := report(out, targets, clientCPU, rate, &costs{ep9: ep9, ep10: ep10, idle1000: idle1000, busy1000: busy1000, fib: fib, fibRSS: fibRSS, fibCPU: fibCPU, iso: iso, load: ceil}); err != nil {
		return err
	}

	// The floor table last, with everything above stopped: each server
	// under the same quota, alternated.
	stop(all)
	all = nil
	fmt.Printf("the floor table: each server under %v cores\n", quota.cores)
	qr, err := runQuota(out, binDir, quota.cores, false, quota.rounds, quota.dur, conns)
	if err != nil {
		return err
	}
	if err := writeFloor(out, qr); err != nil {
		return err
	}
	c, err := runCovCost(binDir)
	if err != nil {
		return err
	}
	return writeCovCost(out, c, qr.median(rowGateway, func(q quotaRound) float64 { return q.cpuPerReq }))
}

// ceilingStep is one rate the load tool was tried at.
type ceilingStep struct {
	asked, sent, p99 float64 // requests/s, requests/s, ms
	held             bool
}

// ceilingP99 is the p99 the load tool must keep to hold a rate (ms).
const ceilingP99 = 10

// loadCeiling finds the highest rate at which showcase-load (vegeta's
// library, an open model) holds GET missing-field against base: every
// answer 200, the rate sent within 5 % of the rate asked, p99 under 10
// ms. It climbs, doubling up to 4,000/s and by a quarter after that, and
// stops at the first rate not held: a step after an overload would
// measure the overload's wake (thousands of connections, a backlog), not
// the rate.
func loadCeiling(base string, dur time.Duration) ([]ceilingStep, error) {
	kinds := []load.Kind{{Name: "missing-field", Weight: 1, Path: missingField, Allowed: []int{200}}}
	var steps []ceilingStep
	try := func(rate float64) (bool, error) {
		time.Sleep(2 * time.Second) // a pause between steps, the last one's connections closed
		r, err := load.Run(context.Background(), load.Options{Base: base, Rate: rate, Duration: dur, Kinds: kinds, Timeout: 5 * time.Second})
		if err != nil {
			return false, err
		}
		s := ceilingStep{asked: rate, sent: r.Rate}
		if len(r.Kinds) > 0 {
			s.p99 = r.Kinds[0].P99
		}
		s.held = !r.Failed() && s.p99 < ceilingP99 && r.Rate >= 0.95*rate
		steps = append(steps, s)
		fmt.Printf("  %.0f/s asked, %.0f/s sent, p99 %.2f ms: held %v\n", rate, s.sent, s.p99, s.held)
		return s.held, nil
	}
	for rate := 1000.0; rate <= 256000; {
		ok, err := try(math.Round(rate))
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if rate < 4000 {
			rate *= 2
		} else {
			rate *= 1.25
		}
	}
	return steps, nil
}

// profileGateway takes a CPU profile of t's gateway while wrk drives it, and
// writes it (gateway.pprof) with its heaviest functions as text
// (gateway-profile.txt), flat and cumulative.
func profileGateway(t *target, dur time.Duration, conns int, bin, out string) error {
	if err := profileTo(t, t.gateway.admin, dur, conns, "", filepath.Join(out, "gateway.pprof")); err != nil {
		return err
	}
	var text []byte
	for _, sort := range []string{"-top", "-top -cum"} {
		args := append([]string{"tool", "pprof"}, strings.Fields(sort)...)
		o, err := exec.Command("go", append(args, "-nodecount=40", bin, filepath.Join(out, "gateway.pprof"))...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go tool pprof: %v\n%s", err, o)
		}
		text = append(text, o...)
		text = append(text, '\n')
	}
	return os.WriteFile(filepath.Join(out, "gateway-profile.txt"), text, 0o644)
}

// drivePaced runs one round of net/http's client at rate against t; the
// client's CPU per request is under "client".
func drivePaced(t *target, dur time.Duration, conns int, rate float64) (roundResult, error) {
	before := map[string]int64{}
	for _, p := range t.procs {
		before[p.name] = p.cpuTicks()
	}
	done, client, err := runClient(t.base+missingField, dur, conns, rate)
	if err != nil {
		return roundResult{}, err
	}
	res := roundResult{rps: done / dur.Seconds(), cpuPerReq: map[string]float64{"client": client}, rss: map[string]float64{}}
	for _, p := range t.procs {
		res.cpuPerReq[p.name] = float64(p.cpuTicks()-before[p.name]) * 1e6 / ticksPerSecond / done
	}
	return res, nil
}

// drive runs one wrk round against t.
func drive(t *target, dur time.Duration, conns int) (roundResult, error) {
	return driveOn(t, dur, conns, "")
}

// driveOn runs one wrk round against t, wrk pinned to cpus (taskset's
// list) unless empty.
func driveOn(t *target, dur time.Duration, conns int, cpus string) (roundResult, error) {
	before := map[string]int64{}
	for _, p := range t.procs {
		before[p.name] = p.cpuTicks()
	}
	args := []string{"wrk", "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(dur.Seconds())), "--latency", t.base + missingField}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
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
	tick := 1e6 / float64(ticksPerSecond) // µs per clock tick
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
