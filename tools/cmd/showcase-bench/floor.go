package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// quotaRun is the comparison at a fixed CPU budget: the floor (the
// yardstick, a minimal net/http server answering missing-field's bytes)
// against the one-process gateway, and our gateway against Caddy as a
// proxy in front of the yardstick. Each server runs in a cgroup of its own
// under the same quota, so that each runs at its own limit and wrk, with
// the rest of the machine, measures the server rather than itself. The
// four are driven in turn, round after round.
type quotaRun struct {
	cores float64 // the quota, in cores
	pin   bool    // servers pinned to cores 0..n-1 and wrk to the rest
	// rounds (asked for) of dur per server, and what each measured
	rounds   int
	dur      time.Duration
	measured []map[string]quotaRound
	// parts is where the one-process gateway's CPU went, from a profile
	// taken under the quota after the rounds.
	parts []part
}

type quotaRound struct {
	rps, cpuPerReq   float64 // requests/s; the server's CPU µs per request
	throttledPercent float64 // the share of periods it ran into its quota
	errors           int64
}

// The rows of the quota table, in the order they are driven.
const (
	rowFloor   = "net/http floor"
	rowGateway = "one-process gateway"
	rowProxy   = "our gateway as proxy"
	rowCaddy   = "Caddy as proxy"
)

var quotaRows = []string{rowFloor, rowGateway, rowProxy, rowCaddy}

// runQuota starts the four servers, each in a cgroup of cores cores, drives
// them in turn for rounds rounds, and stops them and removes the cgroups.
func runQuota(out, binDir string, cores float64, pin bool, rounds int, dur time.Duration, conns int) (qr *quotaRun, err error) {
	if _, err := exec.LookPath("caddy"); err != nil {
		return nil, errors.New("caddy is not installed (apt-get install caddy): the proxy rows need it")
	}
	qr = &quotaRun{cores: cores, pin: pin, rounds: rounds, dur: dur}
	serverCPUs, loadCPUs := "", ""
	if pin {
		n := int(cores)
		if float64(n) != cores || 2*n > runtime.NumCPU() {
			return nil, fmt.Errorf("-pin wants a whole number of cores, at most half of the %d here (the rest run wrk and the upstream)", runtime.NumCPU())
		}
		serverCPUs, loadCPUs = fmt.Sprintf("0-%d", n-1), fmt.Sprintf("%d-%d", n, runtime.NumCPU()-1)
	}
	var procs []*proc
	var groups []*cpuGroup
	defer func() {
		stop(procs)
		for _, g := range groups {
			err = errors.Join(err, g.remove())
		}
	}()
	targets := map[string]*target{}
	group := map[string]*cpuGroup{}
	// launch starts bin under a quota of its own (pinned with -pin),
	// serving on api, and waits until ready answers 200.
	launch := func(row, name, bin string, args, env []string, api, ready string) error {
		g, err := newCPUGroup(strconv.Itoa(len(groups)), cores)
		if err != nil {
			return err
		}
		groups = append(groups, g)
		if serverCPUs != "" {
			bin, args = "taskset", append([]string{"-c", serverCPUs, bin}, args...)
		}
		wbin, wargs := g.wrap(bin, args)
		p, _, err := start(name, wbin, wargs, env, ready)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		targets[row], group[row] = &target{name: row, base: "http://" + api, procs: []*proc{p}}, g
		return nil
	}
	self, _ := os.Executable()
	// The proxies' upstream, outside any quota (with -pin, on wrk's cores).
	yAddr := freeAddr()
	upBin, upArgs := self, []string{"yardstick", yAddr}
	if loadCPUs != "" {
		upBin, upArgs = "taskset", append([]string{"-c", loadCPUs, self}, upArgs...)
	}
	up, _, err := start("upstream", upBin, upArgs, nil, "http://"+yAddr+missingField)
	if err != nil {
		return nil, err
	}
	procs = append(procs, up)

	floor := freeAddr()
	if err := launch(rowFloor, "floor", self, []string{"yardstick", floor}, nil, floor, "http://"+floor+missingField); err != nil {
		return nil, err
	}
	// A gateway is ready when its admin port says so: its API answers
	// before its services are all built.
	var oneAdmin string
	gateway := func(row string, env []string) error {
		api, admin := freeAddr(), freeAddr()
		if row == rowGateway {
			oneAdmin = admin
		}
		return launch(row, "gateway", filepath.Join(binDir, "gateway"), []string{"-addr", api, "-admin-addr", admin}, env, api, "http://"+admin+"/readyz")
	}
	// The one process serves its profiles, for the one taken after the
	// rounds (profiling costs nothing until asked).
	if err := gateway(rowGateway, []string{"PPROF=true"}); err != nil {
		return nil, err
	}
	var env []string
	for _, c := range catalogue.Categories {
		env = append(env, c.Upstream+"=http://"+yAddr)
	}
	if err := gateway(rowProxy, env); err != nil {
		return nil, err
	}
	caddy := references[slices.IndexFunc(references, func(r reference) bool { return r.conf == "Caddyfile" })]
	dir, err := filepath.Abs(filepath.Join(out, "caddy-quota"))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	listen := freeAddr()
	conf, err := writeConf(caddy, dir, listen, yAddr)
	if err != nil {
		return nil, err
	}
	// Caddy keeps its state under XDG directories: the scratch one.
	cenv := []string{"XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "HOME=" + dir}
	if err := launch(rowCaddy, "caddy", caddy.bin, caddy.args(dir, conf), cenv, listen, "http://"+listen+missingField); err != nil {
		return nil, err
	}

	time.Sleep(500 * time.Millisecond)
	for r := range rounds {
		got := map[string]quotaRound{}
		for _, row := range quotaRows {
			fmt.Printf("under %v cores, round %d/%d: %s\n", cores, r+1, rounds, row)
			p0, t0 := group[row].throttled()
			res, err := driveOn(targets[row], dur, conns, loadCPUs)
			if err != nil {
				return nil, err
			}
			p1, t1 := group[row].throttled()
			q := quotaRound{rps: res.rps, cpuPerReq: res.cpuPerReq[targets[row].procs[0].name], errors: res.errors}
			if p1 > p0 {
				q.throttledPercent = 100 * float64(t1-t0) / float64(p1-p0)
			}
			got[row] = q
		}
		qr.measured = append(qr.measured, got)
	}
	fmt.Println("profiling the one-process gateway under the quota (a round of its own, not counted)")
	if err := profileTo(targets[rowGateway], oneAdmin, 5*time.Second, conns, loadCPUs, filepath.Join(out, "one-process.pprof")); err != nil {
		return nil, err
	}
	qr.parts, err = breakdown(filepath.Join(out, "one-process.pprof"))
	if err != nil {
		return nil, err
	}
	return qr, nil
}

// stop ends procs with SIGTERM (nginx's master takes its workers down with
// it), killing any that is still there after 5 s.
func stop(procs []*proc) {
	for _, p := range procs {
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
}

// median is the median over rounds of f of row's round.
func (qr *quotaRun) median(row string, f func(quotaRound) float64) float64 {
	var v []float64
	for _, r := range qr.measured {
		v = append(v, f(r[row]))
	}
	return medianFloat(v)
}

// ratio is the median over rounds of f(a's round) / f(b's round): each
// round's pair was measured back to back.
func (qr *quotaRun) ratio(a, b string, f func(quotaRound) float64) float64 {
	var v []float64
	for _, r := range qr.measured {
		v = append(v, f(r[a])/f(r[b]))
	}
	return medianFloat(v)
}

// table is the quota run as Markdown: a row per server, then the ratios
// the targets are about.
func (qr *quotaRun) table() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	how := "each in a cgroup of its own"
	if qr.pin {
		how += fmt.Sprintf(", pinned to cores 0-%d, wrk and the upstream on the rest", int(qr.cores)-1)
	}
	w("Under a CPU quota of %v cores (%s); GET %s, wrk at 64 connections, %d rounds of %v per server, the servers in turn in each; medians.\n\n", qr.cores, how, missingField, len(qr.measured), qr.dur)
	w("| server | requests/s | CPU µs per request | periods throttled | errors |\n|---|---|---|---|---|\n")
	rps := func(q quotaRound) float64 { return q.rps }
	cpu := func(q quotaRound) float64 { return q.cpuPerReq }
	for _, row := range quotaRows {
		var errs int64
		for _, r := range qr.measured {
			errs += r[row].errors
		}
		w("| %s | %.0f | %.1f | %.0f %% | %d |\n", row, qr.median(row, rps), qr.median(row, cpu), qr.median(row, func(q quotaRound) float64 { return q.throttledPercent }), errs)
	}
	w("\n| ratio, per round | median | rounds |\n|---|---|---|\n")
	each := func(a, b string, f func(quotaRound) float64) string {
		var s []string
		for _, r := range qr.measured {
			s = append(s, fmt.Sprintf("%.2f", f(r[a])/f(r[b])))
		}
		return strings.Join(s, ", ")
	}
	w("| gateway / floor, requests/s | **%.2f** | %s |\n", qr.ratio(rowGateway, rowFloor, rps), each(rowGateway, rowFloor, rps))
	w("| gateway / floor, CPU per request | **%.2f** | %s |\n", qr.ratio(rowGateway, rowFloor, cpu), each(rowGateway, rowFloor, cpu))
	w("| proxy / Caddy, requests/s | **%.2f** | %s |\n", qr.ratio(rowProxy, rowCaddy, rps), each(rowProxy, rowCaddy, rps))
	w("| proxy / Caddy, CPU per request | **%.2f** | %s |\n", qr.ratio(rowProxy, rowCaddy, cpu), each(rowProxy, rowCaddy, cpu))
	if qr.parts != nil {
		w("\nWhere the one-process gateway's CPU went, from a profile under the same quota after the rounds (one-process.pprof); µs per request are shares of the median %.1f µs above.\n\n", qr.median(rowGateway, cpu))
		writeParts(w, qr.parts, qr.median(rowGateway, cpu))
	}
	return b.String()
}

// row is the run as one row of the table by server cores (scripts/bench-cores.sh).
func (qr *quotaRun) row() string {
	rps := func(q quotaRound) float64 { return q.rps }
	cpu := func(q quotaRound) float64 { return q.cpuPerReq }
	return fmt.Sprintf("| %v | %.0f | %.0f | %.2f (CPU %.2f) | %.2f (CPU %.2f) |\n", qr.cores,
		qr.median(rowFloor, rps), qr.median(rowGateway, rps),
		qr.ratio(rowGateway, rowFloor, rps), qr.ratio(rowGateway, rowFloor, cpu),
		qr.ratio(rowProxy, rowCaddy, rps), qr.ratio(rowProxy, rowCaddy, cpu))
}

// rowHeader heads the rows of row.
const rowHeader = "| server cores | net/http floor req/s | gateway req/s | gateway / floor | gateway as proxy / Caddy |\n|---|---|---|---|---|\n"

// writeParts writes a profile's parts as a table; with perRequest (µs)
// above 0, each part's µs per request too.
func writeParts(w func(string, ...any), parts []part, perRequest float64) {
	if perRequest > 0 {
		w("| part | share | µs per request |\n|---|---|---|\n")
	} else {
		w("| part | share |\n|---|---|\n")
	}
	for _, p := range parts {
		if perRequest > 0 {
			w("| %s | %.1f %% | %.1f |\n", p.name, 100*p.share, p.share*perRequest)
		} else {
			w("| %s | %.1f %% |\n", p.name, 100*p.share)
		}
	}
}

// profileTo takes a CPU profile of t's process, whose admin port at admin
// serves pprof, while wrk drives it for dur, pinned to cpus unless empty,
// and writes it to path.
func profileTo(t *target, admin string, dur time.Duration, conns int, cpus, path string) error {
	secs := max(1, int(dur.Seconds())-1)
	got := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", admin, secs))
		if err != nil {
			got <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			got <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		got <- errors.Join(err, f.Close())
	}()
	if _, err := driveOn(t, dur, conns, cpus); err != nil {
		return err
	}
	if err := <-got; err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	return nil
}
